//! Composition of discrete privacy loss distributions: convolution by FFT (`rustfft`),
//! self-composition by squaring, pessimistic truncation after every convolution.
//!
//! **Floating-point error.** Each transform of length `n = 2^k` has a relative ℓ₂ error at most
//! `kη/(1 − kη)`, `η = μ + γ₄(√2 + μ) ≈ 6u + μ` (Higham, *Accuracy and Stability of Numerical
//! Algorithms*, 2002, Thm 24.2; `u = 2⁻⁵³`, `μ` the twiddle factors' error, taken `≤ 2u`).
//! With `‖Fa‖₂ = √n‖a‖₂`, `‖Fb‖∞ ≤ ‖b‖₁` and the inverse transform scaled by `1/n`, the computed
//! `a ∗ b` is off by at most about `kη(2‖a‖₂‖b‖₁ + ‖a‖₁‖b‖₂)` in ℓ₂; we carry
//! `2·k·8u·(‖a‖₂‖b‖₁ + ‖a‖₁‖b‖₂)` per convolution plus the propagated errors
//! `e_a‖b‖₁ + e_b‖a‖₁` (Young's inequality), and [`LossPmf::delta`] adds `e·‖f₀‖₂` to `δ`
//! (Cauchy–Schwarz). A worst-case bound: it doubles with every squaring, so at `T = 10 000` it
//! is the largest part of the gap to `dp_accounting` (`bench-results/accounting.md`).

use super::pmf::LossPmf;
use super::MAX_LEN;
use crate::error::{Error, Result};
use rustfft::num_complex::Complex;
use rustfft::FftPlanner;

/// Below this length (of the shorter input) the convolution is computed directly.
const DIRECT_LEN: usize = 64;

/// The per-convolution floating-point error bound of the module docs.
fn fft_error(n: usize, a: (f64, f64), b: (f64, f64)) -> f64 {
    let log2n = (n.max(2) as f64).log2();
    let u = 0.5 * f64::EPSILON;
    2.0 * log2n * 8.0 * u * (a.1 * b.0 + a.0 * b.1)
}

/// `a ∗ b` (losses add), truncated pessimistically at tail mass `tail`.
///
/// # Errors
/// [`Error::InvalidParam`] (named `pld-grid`) when the result would exceed [`MAX_LEN`] points.
pub(super) fn compose(a: &LossPmf, b: &LossPmf, tail: f64, planner: &mut FftPlanner<f64>) -> Result<LossPmf> {
    let (na, nb) = (a.mass.len(), b.mass.len());
    let out_len = na + nb - 1;
    if out_len > MAX_LEN {
        return Err(Error::param(
            "pld-grid",
            format!("the composed loss needs {out_len} grid points, more than {MAX_LEN}; use a wider grid (PldAccountant::with_grid) or the RDP accountant"),
        ));
    }
    let (norm_a, norm_b) = (a.norms(), b.norms());
    let (mass, conv_err) = if na.min(nb) <= DIRECT_LEN {
        (direct(&a.mass, &b.mass, out_len), 0.0)
    } else {
        let n = out_len.next_power_of_two();
        (fft_convolve(&a.mass, &b.mass, n, planner), fft_error(n, norm_a, norm_b))
    };
    let mut c = LossPmf {
        h: a.h,
        offset: a.offset + b.offset,
        mass,
        inf: a.inf + b.inf - a.inf * b.inf,
        fp_error: conv_err + a.fp_error * norm_b.0 + b.fp_error * norm_a.0,
    };
    c.truncate(tail);
    Ok(c)
}

/// `a` composed with itself `times ≥ 1` times, by squaring.
///
/// # Errors
/// As [`compose`].
pub(super) fn self_compose(a: &LossPmf, times: u64, tail: f64) -> Result<LossPmf> {
    let mut planner = FftPlanner::new();
    let mut result: Option<LossPmf> = None;
    let mut base = a.clone();
    let mut t = times;
    loop {
        if t & 1 == 1 {
            result = Some(match result {
                None => base.clone(),
                Some(r) => compose(&r, &base, tail, &mut planner)?,
            });
        }
        t >>= 1;
        if t == 0 {
            break;
        }
        base = compose(&base, &base, tail, &mut planner)?;
    }
    Ok(result.expect("times >= 1"))
}

fn direct(a: &[f64], b: &[f64], out_len: usize) -> Vec<f64> {
    let mut c = vec![0.0; out_len];
    for (i, &x) in a.iter().enumerate() {
        if x == 0.0 {
            continue;
        }
        for (j, &y) in b.iter().enumerate() {
            c[i + j] += x * y;
        }
    }
    c
}

fn fft_convolve(a: &[f64], b: &[f64], n: usize, planner: &mut FftPlanner<f64>) -> Vec<f64> {
    let fwd = planner.plan_fft_forward(n);
    let inv = planner.plan_fft_inverse(n);
    let load = |v: &[f64]| -> Vec<Complex<f64>> {
        let mut buf = vec![Complex::new(0.0, 0.0); n];
        for (z, &x) in buf.iter_mut().zip(v) {
            z.re = x;
        }
        buf
    };
    let mut fa = load(a);
    fwd.process(&mut fa);
    if std::ptr::eq(a, b) {
        for z in fa.iter_mut() {
            *z = *z * *z;
        }
    } else {
        let mut fb = load(b);
        fwd.process(&mut fb);
        for (z, w) in fa.iter_mut().zip(&fb) {
            *z *= *w;
        }
    }
    inv.process(&mut fa);
    let scale = 1.0 / n as f64;
    fa.iter().take(a.len() + b.len() - 1).map(|z| z.re * scale).collect()
}
