//! The pessimistic discretisation of one step's privacy loss onto the grid `{k·h}`.

use super::pairs::Pair;
use super::pmf::LossPmf;
use super::{Discretisation, MAX_LEN};
use crate::error::{Error, Result};

/// Standard deviations of `P` kept on each side of its means; `P`'s mass outside is below
/// `2Φ(−10) ≈ 1.5e-23` (the upper part goes to `+∞`, the lower part is rounded up).
const Z_RANGE: f64 = 10.0;

/// The discretised privacy loss of `pair` on the grid of width `h` (module docs):
/// * the loss in `(l_k, l_{k+1}]` is split between `l_k` and `l_{k+1}` keeping its mass and its
///   `Q`-mass ([`Discretisation::ConnectDots`]) or rounded up to `l_{k+1}`
///   ([`Discretisation::RoundUp`]);
/// * the loss at or below the lowest grid point is rounded up to it; the loss above the highest
///   grid point is put at `+∞`.
pub(super) fn discretise(pair: &Pair, h: f64, how: Discretisation) -> Result<LossPmf> {
    let (x_lo, x_hi) = pair.x_range(Z_RANGE);
    let (l_lo, l_hi) = (pair.loss(x_lo), pair.loss(x_hi));
    if !(l_lo.is_finite() && l_hi.is_finite()) {
        return Err(Error::Numerical(format!(
            "privacy loss distribution: the loss range [{l_lo}, {l_hi}] is not finite (q = {}, sigma = {})",
            pair.q, pair.sigma
        )));
    }
    let k_lo = (l_lo / h).floor();
    let k_hi = (l_hi / h).ceil().max(k_lo + 1.0);
    if k_hi - k_lo + 1.0 > MAX_LEN as f64 {
        return Err(Error::param(
            "pld-grid",
            format!(
                "one step's loss spans [{l_lo:.3}, {l_hi:.3}]: {} grid points of width {h} exceed {MAX_LEN}; use more noise, a wider grid (PldAccountant::with_grid) or the RDP accountant",
                ((k_hi - k_lo) as u64) + 1
            ),
        ));
    }
    let (k_lo, k_hi) = (k_lo as i64, k_hi as i64);
    let n = (k_hi - k_lo + 1) as usize;
    let mut mass = vec![0.0; n];
    let loss_at = |k: i64| k as f64 * h;
    // Mass at or below l_lo: rounded up to the first grid point.
    let x_first = pair.x_of_loss(loss_at(k_lo));
    mass[0] += pair.masses(f64::NEG_INFINITY, x_first).0;
    // 1/(1 − e^{−h}): the connect-the-dots weights.
    let inv_spread = 1.0 / -(-h).exp_m1();
    let mut x0 = x_first;
    for i in 0..n - 1 {
        let a = loss_at(k_lo + i as i64);
        let x1 = pair.x_of_loss(a + h);
        let (m, mq) = pair.masses(x0, x1);
        x0 = x1;
        if !(m > 0.0) {
            continue;
        }
        let up = match how {
            Discretisation::RoundUp => m,
            // β = (m − e^{a}·m_Q)/(1 − e^{−h}): keeps E_P[1] and E_P[e^{−L}] on the interval.
            Discretisation::ConnectDots => {
                let scaled_q = if mq > 0.0 { (mq.ln() + a).exp() } else { 0.0 };
                ((m - scaled_q) * inv_spread).clamp(0.0, m)
            }
        };
        mass[i] += m - up;
        mass[i + 1] += up;
    }
    // Above the last grid point: +∞.
    let inf = pair.masses(x0, f64::INFINITY).0;
    Ok(LossPmf {
        h,
        offset: k_lo,
        mass,
        inf,
        fp_error: 0.0,
    })
}
