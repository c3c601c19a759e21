//! RDP to `(ε, δ)`: the classic and the improved conversion.

use crate::error::{Error, Result};

/// How an RDP curve is turned into `(ε, δ)` (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Conversion {
    /// `ε = ε_RDP(α) + ln(1/δ)/(α−1)` (Mironov 2017, Prop. 3).
    Classic,
    /// `ε = max(0, ε_RDP(α) + ln((α−1)/α) − (ln δ + ln α)/(α−1))` (Canonne, Kamath & Steinke
    /// 2020, Prop. 12).
    #[default]
    Improved,
}

impl Conversion {
    /// The CLI name: `classic` or `improved`.
    pub fn name(&self) -> &'static str {
        match self {
            Conversion::Classic => "classic",
            Conversion::Improved => "improved",
        }
    }
    /// Parses the CLI name.
    pub fn parse(name: &str) -> Result<Self> {
        match name {
            "classic" => Ok(Conversion::Classic),
            "improved" => Ok(Conversion::Improved),
            other => Err(Error::param(
                "conversion",
                format!("unknown conversion `{other}` (expected classic or improved)"),
            )),
        }
    }
    /// `ε` at one order for a composed RDP value `rdp` (`+∞` when `rdp` is).
    pub(crate) fn epsilon_at(&self, rdp: f64, alpha: f64, delta: f64) -> f64 {
        if !(rdp < f64::INFINITY) {
            return f64::INFINITY;
        }
        let am1 = alpha - 1.0;
        match self {
            Conversion::Classic => rdp + (-delta.ln()) / am1,
            Conversion::Improved => (rdp + (-1.0 / alpha).ln_1p() - (delta.ln() + alpha.ln()) / am1).max(0.0),
        }
    }
}
