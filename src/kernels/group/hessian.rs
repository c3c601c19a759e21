//! The Hessian `Σ_i w_i Φ_iᵀ H_i Φ_i` (factored blocks, Gram products) and Hessian-vector
//! products.

use super::{axpys, dot, par_for, stream_blocks};
use crate::data::GroupView;
use crate::kernels::gram;
use crate::loss::GroupLoss;
use crate::par::{tree_reduce, Blocks, Par};
use pulp::{Arch, Simd, WithSimd};

/// Target bytes of stacked factor rows per block of the Hessian pass.
const HESS_BLOCK_BYTES: usize = 1 << 21;

/// Factors the symmetric `k × k` block `a` (row-major, overwritten) as `Σ_r s_r l_r l_rᵀ`
/// (`s_r = ±1`) by diagonal pivoting: the largest remaining `|a_pp|` gives
/// `l = a[:,p]/√|a_pp|`. Remainders below `tol` (relative to the largest initial
/// entry) are dropped; a remainder with negligible diagonal but a non-negligible off-diagonal
/// entry `a_ij` (indefinite blocks only) is split as
/// `(|a_ij|/2)[(e_i ± e_j)(e_i ± e_j)ᵀ − (e_i ∓ e_j)(e_i ∓ e_j)ᵀ]`. Calls `emit(sign, l)`;
/// returns the number of negative terms. `l` is a `k`-long scratch vector (the caller's, so
/// that nothing is allocated per sample). Inlined into the SIMD context of its caller (so `emit`
/// can use the caller's SIMD operations without a call per intrinsic).
#[inline(always)]
fn factor_block(a: &mut [f64], k: usize, l: &mut [f64], mut emit: impl FnMut(f64, &[f64])) -> usize {
    let scale = a[..k * k].iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if !(scale > 0.0) {
        return 0;
    }
    let tol = 32.0 * f64::EPSILON * scale;
    let l = &mut l[..k];
    let mut nneg = 0;
    for _ in 0..2 * k {
        let (mut p, mut best) = (0, 0.0);
        for i in 0..k {
            let v = a[i * k + i].abs();
            if v > best {
                best = v;
                p = i;
            }
        }
        if best > tol {
            let app = a[p * k + p];
            let sign = app.signum();
            let inv = 1.0 / best.sqrt();
            for i in 0..k {
                l[i] = a[i * k + p] * inv;
            }
            for i in 0..k {
                for j in 0..k {
                    a[i * k + j] -= sign * l[i] * l[j];
                }
            }
            a[p * k + p] = 0.0;
            if sign < 0.0 {
                nneg += 1;
            }
            emit(sign, l);
            continue;
        }
        // Negligible diagonal: look for an off-diagonal remainder (indefinite blocks).
        let (mut bi, mut bj, mut off) = (0, 0, 0.0);
        for i in 0..k {
            for j in i + 1..k {
                if a[i * k + j].abs() > off {
                    off = a[i * k + j].abs();
                    bi = i;
                    bj = j;
                }
            }
        }
        if off <= tol {
            break;
        }
        let aij = a[bi * k + bj];
        let c = (0.5 * aij.abs()).sqrt();
        let sg = aij.signum();
        l.fill(0.0);
        l[bi] = c;
        l[bj] = sg * c;
        emit(1.0, l);
        l[bj] = -sg * c;
        emit(-1.0, l);
        nneg += 1;
        a[bi * k + bj] = 0.0;
        a[bj * k + bi] = 0.0;
    }
    nneg
}

struct HessRows<'s, 'a, L> {
    v: &'s GroupView<'a>,
    loss: &'s L,
    scores: &'s [f64],
    rows: std::ops::Range<usize>,
    pos: &'s mut Vec<f64>,
    neg: &'s mut Vec<f64>,
}

impl<L: GroupLoss> WithSimd for HessRows<'_, '_, L> {
    type Output = usize;
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> usize {
        let v = self.v;
        let (k, d) = (v.k(), v.d());
        let mut h = vec![0.0; k * k];
        let mut scratch = vec![0.0; self.loss.scratch_len(k)];
        let mut lvec = vec![0.0; k];
        let mut nneg_samples = 0;
        for i in self.rows.clone() {
            let w = v.weight(i);
            if w == 0.0 {
                continue;
            }
            let u = &self.scores[i * k..(i + 1) * k];
            self.loss.eval(u, v.order_of(i), None, Some(&mut h), &mut scratch);
            if w != 1.0 {
                h.iter_mut().for_each(|x| *x *= w);
            }
            let (pos, neg) = (&mut *self.pos, &mut *self.neg);
            let nneg = factor_block(
                &mut h,
                k,
                &mut lvec,
                #[inline(always)]
                |sign, l| {
                    let out = if sign > 0.0 { &mut *pos } else { &mut *neg };
                    let at = out.len();
                    out.resize(at + d, 0.0);
                    axpys(simd, v, i, l, &mut out[at..]);
                },
            );
            if nneg > 0 {
                nneg_samples += 1;
            }
        }
        nneg_samples
    }
}

/// `H = Σ_i w_i Φ_iᵀ (∂²ℓ_i/∂u²) Φ_i` (sum, not mean) at the scores `scores`, written in full
/// into the column-major `d × d` buffer `h`. Returns the number of samples whose block has
/// negative curvature (none for the convex group losses).
pub fn hessian<L: GroupLoss>(v: &GroupView<'_>, loss: &L, scores: &[f64], h: &mut [f64], par: Par) -> usize {
    let (n, k, d) = (v.n(), v.k(), v.d());
    assert_eq!(h.len(), d * d);
    assert_eq!(scores.len(), n * k);
    // About K factor rows of d values per sample.
    let blocks = Blocks::new(n, k * d, HESS_BLOCK_BYTES, 8);
    let arch = Arch::new();
    let leaf = |b: usize| -> (Vec<f64>, usize) {
        let r = blocks.range(b);
        let mut pos = Vec::with_capacity(r.len() * k * d);
        let mut neg = Vec::new();
        let nneg = arch.dispatch(HessRows {
            v,
            loss,
            scores,
            rows: r,
            pos: &mut pos,
            neg: &mut neg,
        });
        let mut hb = vec![0.0; d * d];
        gram::syrk_lower(&mut hb, &pos, pos.len() / d, d, 1.0, false);
        if !neg.is_empty() {
            gram::syrk_lower(&mut hb, &neg, neg.len() / d, d, -1.0, true);
        }
        (hb, nneg)
    };
    let combine = |(mut a, na): (Vec<f64>, usize), (b, nb): (Vec<f64>, usize)| {
        for j in 0..d {
            for i in j..d {
                a[j * d + i] += b[j * d + i];
            }
        }
        (a, na + nb)
    };
    let (hl, nneg) = tree_reduce(blocks.count(), par_for(v, par), &leaf, &combine);
    for j in 0..d {
        for i in j..d {
            let x = hl[j * d + i];
            h[j * d + i] = x;
            h[i * d + j] = x;
        }
    }
    nneg
}

struct HessVecBlock<'s, 'a, L> {
    v: &'s GroupView<'a>,
    loss: &'s L,
    scores: &'s [f64],
    x: &'s [f64],
    rows: std::ops::Range<usize>,
    out: &'s mut [f64],
}

impl<L: GroupLoss> WithSimd for HessVecBlock<'_, '_, L> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let v = self.v;
        let k = v.k();
        let mut h = vec![0.0; k * k];
        let mut z = vec![0.0; k];
        let mut y = vec![0.0; k];
        let mut scratch = vec![0.0; self.loss.scratch_len(k)];
        for i in self.rows.clone() {
            for (r, zr) in z.iter_mut().enumerate() {
                *zr = dot(simd, v.row(i, r), self.x);
            }
            self.loss.eval(
                &self.scores[i * k..(i + 1) * k],
                v.order_of(i),
                None,
                Some(&mut h),
                &mut scratch,
            );
            let w = v.weight(i);
            for (a, ya) in y.iter_mut().enumerate() {
                let row = &h[a * k..(a + 1) * k];
                *ya = w * row.iter().zip(&z).map(|(p, q)| p * q).sum::<f64>();
            }
            axpys(simd, v, i, &y, self.out);
        }
    }
}

/// `out = Σ_i w_i Φ_iᵀ H_i (Φ_i x)` (sum) at the scores `scores`, one pass over the features.
pub fn hess_vec<L: GroupLoss>(v: &GroupView<'_>, loss: &L, scores: &[f64], x: &[f64], out: &mut [f64], par: Par) {
    let d = v.d();
    assert_eq!(x.len(), d);
    assert_eq!(out.len(), d);
    let blocks = stream_blocks(v);
    let arch = Arch::new();
    let leaf = |b: usize| {
        let mut o = vec![0.0; d];
        arch.dispatch(HessVecBlock {
            v,
            loss,
            scores,
            x,
            rows: blocks.range(b),
            out: &mut o,
        });
        o
    };
    let combine = |mut a: Vec<f64>, b: Vec<f64>| {
        a.iter_mut().zip(&b).for_each(|(p, q)| *p += q);
        a
    };
    let r = tree_reduce(blocks.count(), par_for(v, par), &leaf, &combine);
    out.copy_from_slice(&r);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn factor_reconstructs_psd_and_indefinite_blocks() {
        // diag(p) − ppᵀ (rank K − 1) and an indefinite block with a zero diagonal.
        let p = [0.5, 0.3, 0.15, 0.05];
        let k = 4;
        let mut a: Vec<f64> = (0..16)
            .map(|t| {
                let (i, j) = (t / k, t % k);
                (if i == j { p[i] } else { 0.0 }) - p[i] * p[j]
            })
            .collect();
        let orig = a.clone();
        let mut rec = [0.0; 16];
        let mut terms = 0;
        let nneg = factor_block(&mut a, k, &mut [0.0; 4], |s, l| {
            terms += 1;
            for i in 0..k {
                for j in 0..k {
                    rec[i * k + j] += s * l[i] * l[j];
                }
            }
        });
        assert_eq!(nneg, 0);
        assert_eq!(terms, 3);
        for (x, y) in rec.iter().zip(&orig) {
            assert!((x - y).abs() < 1e-15, "{x} {y}");
        }
        let mut b = vec![0.0, 2.0, 2.0, 0.0];
        let orig = b.clone();
        let mut rec = [0.0; 4];
        let nneg = factor_block(&mut b, 2, &mut [0.0; 2], |s, l| {
            for i in 0..2 {
                for j in 0..2 {
                    rec[i * 2 + j] += s * l[i] * l[j];
                }
            }
        });
        assert_eq!(nneg, 1);
        for (x, y) in rec.iter().zip(&orig) {
            assert!((x - y).abs() < 1e-15);
        }
    }
}
