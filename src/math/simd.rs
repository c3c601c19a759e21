//! Vectorised elementary functions for the loss kernels, generic over `pulp::Simd` (AVX-512,
//! AVX2 or the scalar fallback, chosen at run time by `pulp::Arch`).
//!
//! * `exp_nonpos`: `e^x` for `x ≤ 0` — Cody–Waite reduction `x = k ln2 + r`, `|r| ≤ ln2/2`, a
//!   degree-13 Taylor polynomial for `e^r` (truncation `< 4e-18` relative), and `2^k` built in
//!   the exponent bits. Results below `2^-1022` (i.e. `x < -708.39`) are flushed to `0`.
//! * `log1p_unit`: `log(1+u)` for `u ∈ [0, 1]` — `2·atanh(s)` with `s = u/(2+u)` when
//!   `1+u ≤ √2`, else `ln 2 + 2·atanh((u−1)/(u+3))`, so `|s| ≤ 0.1716` and an odd series of 11
//!   terms reaches double precision.
//! * [`Logistic`]: from one `exp` and one `log1p`, the stable `softplus(±a)`, `σ(a)` and
//!   `σ'(a)` (`softplus(a) = max(a,0) + log1p(e^{-|a|})`, never `ln(1 + e^a)`).
//!
//! Accuracy against mpmath (tests/library/losses.rs): a few ulps.
//!
//! These are the building blocks of a vectorised [`Loss::eval_simd`](crate::loss::Loss::eval_simd)
//! (with [`map_lanes`](crate::loss::map_lanes)), public so that a loss written outside the crate
//! is as fast and as stable as the library's own; [`scalar`] has the reference forms for its
//! scalar methods.

use pulp::Simd;

const LN2_HI: f64 = f64::from_bits(0x3FE6_2E42_FEE0_0000); // ln 2 rounded to 32 significant bits (fdlibm)
const LN2_LO: f64 = f64::from_bits(0x3DEA_39EF_3579_3C76); // ln 2 − LN2_HI (fdlibm)
const LOG2_E: f64 = std::f64::consts::LOG2_E;
/// Below this, `e^x < 2^-1022` and [`exp_nonpos`] returns 0.
pub const EXP_FLUSH: f64 = -708.396_418_532_264_1;
const ROUND_MAGIC: f64 = 6_755_399_441_055_744.0; // 1.5·2^52: adding it rounds to an integer
const TWO52: f64 = 4_503_599_627_370_496.0; // 2^52

/// `e^x` for `x ≤ 0` (lanes with `x > 0` are not meaningful). See the module docs.
#[inline(always)]
pub fn exp_nonpos<S: Simd>(simd: S, x: S::f64s) -> S::f64s {
    exp_em1_nonpos(simd, x).0
}

/// `(e^x, e^x − 1)` for `x ≤ 0`. The second value is accurate to a few ulps also for tiny
/// `|x|` (where `e^x − 1` computed from `e^x` would cancel): for `|x| ≤ ln2/2` it is `r·q(r)`
/// straight from the polynomial. Below [`EXP_FLUSH`] the pair is `(0, −1)`.
#[inline(always)]
pub fn exp_em1_nonpos<S: Simd>(simd: S, x: S::f64s) -> (S::f64s, S::f64s) {
    let flush = simd.less_than_f64s(x, simd.splat_f64s(EXP_FLUSH));
    let xc = simd.max_f64s(x, simd.splat_f64s(EXP_FLUSH));
    // k = round(x / ln 2) as a float, in [-1022, 0].
    let kr = simd.add_f64s(simd.mul_f64s(xc, simd.splat_f64s(LOG2_E)), simd.splat_f64s(ROUND_MAGIC));
    let k = simd.sub_f64s(kr, simd.splat_f64s(ROUND_MAGIC));
    // r = x − k ln2 (two-step Cody–Waite; k·LN2_HI is exact since LN2_HI has 32 bits).
    let r = simd.mul_add_e_f64s(k, simd.splat_f64s(-LN2_HI), xc);
    let r = simd.mul_add_e_f64s(k, simd.splat_f64s(-LN2_LO), r);
    // q(r) = (e^r − 1)/r = Σ_{j=1..13} r^{j−1}/j!, by Horner.
    const INV_FACT: [f64; 14] = [
        1.0,
        1.0,
        1.0 / 2.0,
        1.0 / 6.0,
        1.0 / 24.0,
        1.0 / 120.0,
        1.0 / 720.0,
        1.0 / 5040.0,
        1.0 / 40320.0,
        1.0 / 362880.0,
        1.0 / 3628800.0,
        1.0 / 39916800.0,
        1.0 / 479001600.0,
        1.0 / 6227020800.0,
    ];
    let mut q = simd.splat_f64s(INV_FACT[13]);
    let mut j = 13;
    while j > 1 {
        j -= 1;
        q = simd.mul_add_e_f64s(q, r, simd.splat_f64s(INV_FACT[j]));
    }
    let rq = simd.mul_f64s(r, q); // e^r − 1
    let p = simd.add_f64s(simd.splat_f64s(1.0), rq); // e^r
                                                     // 2^k: (k + 1023) is an integer in [1, 1023]; put it in the exponent field.
    let biased = simd.add_f64s(k, simd.splat_f64s(1023.0 + TWO52));
    let ebits = simd.sub_u64s(
        simd.transmute_u64s_f64s(biased),
        simd.transmute_u64s_f64s(simd.splat_f64s(TWO52)),
    );
    let pow2 = simd.transmute_f64s_u64s(simd.mul_u64s(ebits, simd.splat_u64s(1u64 << 52)));
    let e = simd.mul_f64s(p, pow2);
    let k_zero = simd.equal_f64s(k, simd.splat_f64s(0.0));
    let em1 = simd.select_f64s(k_zero, rq, simd.sub_f64s(e, simd.splat_f64s(1.0)));
    (
        simd.select_f64s(flush, simd.splat_f64s(0.0), e),
        simd.select_f64s(flush, simd.splat_f64s(-1.0), em1),
    )
}

/// `log(1 + u)` for `u ∈ [0, 1]` (normal or zero: subnormal `u` may lose its last bits, which
/// never happens here because [`exp_em1_nonpos`] flushes below `2^-1022`). See the module docs.
#[inline(always)]
pub fn log1p_unit<S: Simd>(simd: S, u: S::f64s) -> S::f64s {
    let one = simd.splat_f64s(1.0);
    let big = simd.greater_than_f64s(u, simd.splat_f64s(std::f64::consts::SQRT_2 - 1.0));
    let num = simd.select_f64s(big, simd.sub_f64s(u, one), u);
    let den = simd.select_f64s(
        big,
        simd.add_f64s(u, simd.splat_f64s(3.0)),
        simd.add_f64s(u, simd.splat_f64s(2.0)),
    );
    let s = simd.div_f64s(num, den);
    let s2 = simd.mul_f64s(s, s);
    // 2·atanh(s) = 2s·(1 + s²/3 + s⁴/5 + ... + s^20/21); |s| ≤ 0.1716 so s^22/23 < 1e-18.
    let mut p = simd.splat_f64s(1.0 / 21.0);
    let mut k = 19.0;
    while k >= 1.0 {
        p = simd.mul_add_e_f64s(p, s2, simd.splat_f64s(1.0 / k));
        k -= 2.0;
    }
    let two_s = simd.add_f64s(s, s);
    let core = simd.mul_f64s(two_s, p);
    let off = simd.select_f64s(big, simd.splat_f64s(std::f64::consts::LN_2), simd.splat_f64s(0.0));
    simd.add_f64s(core, off)
}

/// Stable logistic quantities of one argument `a`, from `e = e^{-|a|}` and `L = log1p(e)`.
#[derive(Clone, Copy)]
pub struct Logistic<V> {
    /// `e^{-|a|}` ∈ (0, 1].
    pub e: V,
    /// `e^{-|a|} − 1` ∈ (−1, 0], accurate for small `|a|`.
    pub em1: V,
    /// `log1p(e^{-|a|})`.
    pub l: V,
    /// `softplus(a) = max(a,0) + L`.
    pub sp_pos: V,
    /// `softplus(-a) = max(-a,0) + L`.
    pub sp_neg: V,
}

/// Computes [`Logistic`] for `a` (one `exp`, one `log1p`).
#[inline(always)]
pub fn logistic<S: Simd>(simd: S, a: S::f64s) -> Logistic<S::f64s> {
    let abs = simd.abs_f64s(a);
    let (e, em1) = exp_em1_nonpos(simd, simd.neg_f64s(abs));
    let l = log1p_unit(simd, e);
    let zero = simd.splat_f64s(0.0);
    Logistic {
        e,
        em1,
        l,
        sp_pos: simd.add_f64s(simd.max_f64s(a, zero), l),
        sp_neg: simd.add_f64s(simd.max_f64s(simd.neg_f64s(a), zero), l),
    }
}

/// `σ(a)` from `a` and `e = e^{-|a|}`: `1/(1+e)` for `a ≥ 0`, `e/(1+e)` otherwise.
#[inline(always)]
pub fn sigmoid_from<S: Simd>(simd: S, a: S::f64s, e: S::f64s) -> S::f64s {
    let one = simd.splat_f64s(1.0);
    let inv = simd.div_f64s(one, simd.add_f64s(one, e));
    let neg = simd.less_than_f64s(a, simd.splat_f64s(0.0));
    simd.select_f64s(neg, simd.mul_f64s(e, inv), inv)
}

/// `σ'(a) = e/(1+e)²` from `e = e^{-|a|}` (even in `a`).
#[inline(always)]
pub fn dsigmoid_from<S: Simd>(simd: S, e: S::f64s) -> S::f64s {
    let one = simd.splat_f64s(1.0);
    let q = simd.add_f64s(one, e);
    simd.div_f64s(e, simd.mul_f64s(q, q))
}

/// Scalar reference implementations (std/libm), used by the scalar `Loss` methods.
pub mod scalar {
    /// `softplus(a) = log(1 + e^a)`, stable.
    #[inline]
    pub fn softplus(a: f64) -> f64 {
        a.max(0.0) + (-a.abs()).exp().ln_1p()
    }
    /// `σ(a)`, stable.
    #[inline]
    pub fn sigmoid(a: f64) -> f64 {
        let e = (-a.abs()).exp();
        if a >= 0.0 {
            1.0 / (1.0 + e)
        } else {
            e / (1.0 + e)
        }
    }
    /// `σ'(a) = σ(a)σ(-a)`, stable.
    #[inline]
    pub fn dsigmoid(a: f64) -> f64 {
        let e = (-a.abs()).exp();
        e / ((1.0 + e) * (1.0 + e))
    }
    /// `log(e^a + e^b)`, stable.
    #[inline]
    pub fn logaddexp(a: f64, b: f64) -> f64 {
        let m = a.max(b);
        m + (-(a - b).abs()).exp().ln_1p()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use pulp::{Arch, Scalar, WithSimd};

    struct VecExp<'a> {
        x: &'a [f64],
        out: &'a mut [f64],
        which: u8,
    }
    impl WithSimd for VecExp<'_> {
        type Output = ();
        #[inline(always)]
        fn with_simd<S: Simd>(self, simd: S) {
            let (xh, xt) = S::as_simd_f64s(self.x);
            let (oh, ot) = S::as_mut_simd_f64s(self.out);
            let f = |v: S::f64s| match self.which {
                0 => exp_nonpos(simd, v),
                1 => log1p_unit(simd, v),
                _ => exp_em1_nonpos(simd, v).1,
            };
            for (o, &v) in oh.iter_mut().zip(xh) {
                *o = f(v);
            }
            if !xt.is_empty() {
                let v = simd.partial_load_f64s(xt);
                simd.partial_store_f64s(ot, f(v));
            }
        }
    }

    fn ulps(a: f64, b: f64) -> f64 {
        if a == b {
            return 0.0;
        }
        ((a - b).abs() / (b.abs() * f64::EPSILON)).max(0.0)
    }

    #[test]
    fn exp_matches_std() {
        let xs: Vec<f64> = (0..20001)
            .map(|i| -(i as f64) * 0.0354)
            .chain([
                0.0,
                -1e-300,
                -5e-17,
                -708.0,
                -708.39,
                -709.0,
                -745.2,
                -1e3,
                -1e300,
                f64::NEG_INFINITY,
            ])
            .collect();
        let mut out = vec![0.0; xs.len()];
        Arch::new().dispatch(VecExp {
            x: &xs,
            out: &mut out,
            which: 0,
        });
        let mut out_s = vec![0.0; xs.len()];
        Scalar::new().vectorize(VecExp {
            x: &xs,
            out: &mut out_s,
            which: 0,
        });
        for (i, &x) in xs.iter().enumerate() {
            let want = x.exp();
            if x < EXP_FLUSH {
                assert_eq!(out[i], 0.0, "x={x}");
                assert_eq!(out_s[i], 0.0, "x={x}");
            } else {
                assert!(ulps(out[i], want) <= 3.0, "x={x}: {} vs {}", out[i], want);
                assert!(ulps(out_s[i], want) <= 3.0, "scalar x={x}: {} vs {}", out_s[i], want);
            }
        }
    }

    #[test]
    fn expm1_is_accurate_near_zero() {
        let xs: Vec<f64> = (0..4000)
            .map(|i| -(i as f64) * 1e-3)
            .chain([-1e-300, -1e-20, -1e-12, -3e-9, -0.34657, -0.34658, -1e3])
            .collect();
        let mut out = vec![0.0; xs.len()];
        Arch::new().dispatch(VecExp {
            x: &xs,
            out: &mut out,
            which: 2,
        });
        for (i, &x) in xs.iter().enumerate() {
            let want = x.exp_m1();
            assert!(ulps(out[i], want) <= 4.0, "x={x}: {} vs {}", out[i], want);
        }
    }

    #[test]
    fn log1p_matches_std() {
        let xs: Vec<f64> = (0..=20000)
            .map(|i| i as f64 / 20000.0)
            .chain([1e-300, 1e-17, 1e-9, 0.41421356, 0.41421357])
            .collect();
        let mut out = vec![0.0; xs.len()];
        Arch::new().dispatch(VecExp {
            x: &xs,
            out: &mut out,
            which: 1,
        });
        for (i, &x) in xs.iter().enumerate() {
            let want = x.ln_1p();
            assert!(ulps(out[i], want) <= 3.0, "x={x}: {} vs {}", out[i], want);
        }
    }
}
