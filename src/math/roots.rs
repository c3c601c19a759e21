//! A bracketing root finder for the monotone scalar equations of the inner minimum and the
//! Frank–Wolfe line search: Brent's method (Brent 1973, "Algorithms for Minimization without
//! Derivatives", ch. 4: inverse quadratic interpolation, secant, bisection safeguard), run until
//! the bracket is as narrow as the floating-point grid allows.

/// A root of `f` in `[a, b]` given `f(a)` and `f(b)` of opposite signs (or one of them zero).
/// Stops when the bracket is below `4·ε_mach·|x| + tiny` or `f(x) = 0`; at most `max_iter`
/// evaluations (the bracket halves at least every few steps, so 200 is never reached for
/// finite `f` on a finite bracket).
pub(crate) fn brent<F: FnMut(f64) -> f64>(mut f: F, mut a: f64, mut b: f64, mut fa: f64, mut fb: f64) -> f64 {
    const MAX_ITER: usize = 400;
    if fa == 0.0 {
        return a;
    }
    if fb == 0.0 {
        return b;
    }
    let (mut c, mut fc) = (a, fa);
    let mut d = b - a;
    let mut e = d;
    for _ in 0..MAX_ITER {
        if (fb > 0.0) == (fc > 0.0) {
            c = a;
            fc = fa;
            d = b - a;
            e = d;
        }
        if fc.abs() < fb.abs() {
            a = b;
            b = c;
            c = a;
            fa = fb;
            fb = fc;
            fc = fa;
        }
        let tol = 2.0 * f64::EPSILON * b.abs() + f64::MIN_POSITIVE;
        let m = 0.5 * (c - b);
        if m.abs() <= tol || fb == 0.0 {
            return b;
        }
        if e.abs() >= tol && fa.abs() > fb.abs() {
            let s = fb / fa;
            let (mut p, mut q);
            if a == c {
                p = 2.0 * m * s;
                q = 1.0 - s;
            } else {
                let qq = fa / fc;
                let r = fb / fc;
                p = s * (2.0 * m * qq * (qq - r) - (b - a) * (r - 1.0));
                q = (qq - 1.0) * (r - 1.0) * (s - 1.0);
            }
            if p > 0.0 {
                q = -q;
            } else {
                p = -p;
            }
            if 2.0 * p < (3.0 * m * q - (tol * q).abs()).min((e * q).abs()) {
                e = d;
                d = p / q;
            } else {
                d = m;
                e = m;
            }
        } else {
            d = m;
            e = m;
        }
        a = b;
        fa = fb;
        b += if d.abs() > tol { d } else { tol.copysign(m) };
        fb = f(b);
    }
    b
}

/// The root of a non-increasing `f` on `[0, ∞)` with `f(0) > 0` (given as `f0`): brackets by
/// doubling from `start > 0`, then [`brent`]. `None` when no sign change is found below
/// `start·2^1100` (the root is at infinity).
pub(crate) fn root_decreasing<F: FnMut(f64) -> f64>(mut f: F, f0: f64, start: f64) -> Option<f64> {
    let mut lo = 0.0;
    let mut flo = f0;
    let mut hi = if start.is_finite() && start > 0.0 { start } else { 1.0 };
    let mut fhi = f(hi);
    let mut k = 0;
    while fhi > 0.0 {
        lo = hi;
        flo = fhi;
        hi *= 2.0;
        fhi = f(hi);
        k += 1;
        if k > 1100 || !hi.is_finite() {
            return None;
        }
    }
    Some(brent(f, lo, hi, flo, fhi))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_roots_to_the_last_bits() {
        let r = brent(|x| x * x - 2.0, 0.0, 2.0, -2.0, 2.0);
        assert!((r - 2f64.sqrt()).abs() <= 4.0 * f64::EPSILON);
        let r = root_decreasing(|x| 1.0 / (1.0 + x) - 1e-6, 1.0 - 1e-6, 1.0).unwrap();
        assert!((r / (1e6 - 1.0) - 1.0).abs() < 1e-13, "{r}");
        // Tiny root.
        let r = root_decreasing(|x| 1e-30 - x, 1e-30, 1.0).unwrap();
        assert!((r / 1e-30 - 1.0).abs() < 1e-12, "{r}");
        assert!(root_decreasing(|_| 1.0, 1.0, 1.0).is_none());
    }
}
