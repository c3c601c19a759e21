//! The crate's numerics that depend on nothing else in it: vector products and norms, the
//! SIMD and scalar special functions of the kernels ([`simd`]), and a bracketing root finder
//! (`roots`), and the notation of numbers in messages ([`show`]). Every other module takes these from here (one copy of each).

pub(crate) mod quadrature;
pub(crate) mod roots;
pub mod show;
pub mod simd;
pub(crate) mod special;

/// `aᵀb`, summed in order.
#[inline]
pub fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Euclidean norm, without overflow or underflow: the plain `√Σv²` when the largest entry is
/// within `[2⁻⁴⁵⁰, 2⁴⁵⁰]` (the same bits as always), otherwise computed on `v / 2^k` for the
/// power of two `2^k` nearest the largest entry (exact scaling).
pub fn norm(v: &[f64]) -> f64 {
    let big = v.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    if !(big.is_finite()) {
        return if big.is_nan() || v.iter().any(|x| x.is_nan()) {
            f64::NAN
        } else {
            f64::INFINITY
        };
    }
    const LO: f64 = 3.5e-136; // 2⁻⁴⁵⁰
    const HI: f64 = 2.9e135; // 2⁴⁵⁰
    if big == 0.0 || (LO..=HI).contains(&big) {
        return v.iter().map(|x| x * x).sum::<f64>().sqrt();
    }
    // (Clamped so that 2^±k stays finite; subnormal entries then scale to about 1e-23.)
    let k = (big.log2().round() as i32).clamp(-1020, 1020);
    let s = 2f64.powi(-k);
    v.iter().map(|x| (x * s) * (x * s)).sum::<f64>().sqrt() / s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn norm_neither_overflows_nor_underflows() {
        let close = |a: f64, b: f64| (a - b).abs() <= 2.0 * f64::EPSILON * b;
        assert_eq!(norm(&[3.0, 4.0]), 5.0);
        assert!(close(norm(&[3e-200, 4e-200]), 5e-200));
        assert!(close(norm(&[3e200, -4e200]), 5e200));
        assert!(close(norm(&[1e308, 1e308]), 1e308 * 2f64.sqrt()));
        assert!(close(norm(&[5e-324, 0.0]), 5e-324));
        assert_eq!(norm(&[0.0, 0.0]), 0.0);
        assert_eq!(norm(&[f64::INFINITY, 1.0]), f64::INFINITY);
        assert!(norm(&[f64::NAN, 1.0]).is_nan());
        assert!(norm(&[f64::INFINITY, f64::NAN]).is_nan());
    }
}
