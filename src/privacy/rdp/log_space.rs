//! Log-space helpers and a compensated running sum.

/// `ln(e^x − 1)` for `x > 0`.
pub(crate) fn ln_expm1(x: f64) -> f64 {
    if x > 40.0 {
        x + (-(-x).exp()).ln_1p()
    } else {
        x.exp_m1().ln()
    }
}

/// `ln(e^a + e^b)`.
pub(crate) fn ln_add_exp(a: f64, b: f64) -> f64 {
    let (hi, lo) = if a >= b { (a, b) } else { (b, a) };
    if hi == f64::NEG_INFINITY {
        return hi;
    }
    hi + (lo - hi).exp().ln_1p()
}

/// Neumaier-compensated running sum.
#[derive(Default, Clone, Copy)]
pub(crate) struct Sum {
    s: f64,
    c: f64,
}

impl Sum {
    pub(crate) fn add(&mut self, x: f64) {
        let t = self.s + x;
        if self.s.abs() >= x.abs() {
            self.c += (self.s - t) + x;
        } else {
            self.c += (x - t) + self.s;
        }
        self.s = t;
    }
    pub(crate) fn value(&self) -> f64 {
        self.s + self.c
    }
}
