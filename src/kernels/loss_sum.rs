//! O(n) loss sums from cached scores, for line searches (no access to `X`).

use super::row_ops::{batch_sum, labels_f64};
use super::{Rows, MAX_BATCH};
use crate::loss::{Loss, LossOut};
use crate::par::Par;
use pulp::{Arch, Simd, WithSimd};

struct LossSum<'a, L> {
    y: &'a [u8],
    w: Option<&'a [f64]>,
    t: &'a [f64],
    s: Option<&'a [f64]>,
    alpha: f64,
    scale: f64,
    loss: &'a L,
}

impl<L: Loss> WithSimd for LossSum<'_, L> {
    type Output = f64;
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> f64 {
        let mut yb = [0.0; MAX_BATCH];
        let mut tb = [0.0; MAX_BATCH];
        let mut vb = [0.0; MAX_BATCH];
        let n = self.y.len();
        let mut acc = 0.0;
        let mut r0 = 0;
        while r0 < n {
            let m = MAX_BATCH.min(n - r0);
            labels_f64(&self.y[r0..r0 + m], &mut yb[..m]);
            match self.s {
                Some(s) => {
                    for i in 0..m {
                        tb[i] = self.alpha.mul_add(s[r0 + i], self.t[r0 + i]);
                    }
                }
                None => tb[..m].copy_from_slice(&self.t[r0..r0 + m]),
            }
            if self.scale != 1.0 {
                tb[..m].iter_mut().for_each(|v| *v *= self.scale);
            }
            self.loss.eval_simd(
                simd,
                &tb[..m],
                &yb[..m],
                LossOut {
                    value: Some(&mut vb[..m]),
                    ..Default::default()
                },
            );
            acc += batch_sum(&vb[..m], self.w.map(|w| &w[r0..r0 + m]));
            r0 += m;
        }
        acc
    }
}

/// `Σ_i w_i ℓ(t_i + α s_i; y_i)` (or `Σ w_i ℓ(t_i)` when `s` is `None`) over the labels and weights
/// of `rows`: O(n), no access to `X`.
pub fn loss_sum<L: Loss>(rows: Rows<'_>, loss: &L, t: &[f64], s: Option<&[f64]>, alpha: f64, par: Par) -> f64 {
    loss_sum_scaled(rows, loss, t, s, alpha, 1.0, par)
}

/// `Σ_i w_i ℓ(c·(t_i + α s_i); y_i)`: the loss along a projection arc `c(α)·(θ + α s)` (radial
/// projection onto a ball), O(n) from cached scores. `c = 1` gives [`loss_sum`] bit for bit.
pub(crate) fn loss_sum_scaled<L: Loss>(
    rows: Rows<'_>,
    loss: &L,
    t: &[f64],
    s: Option<&[f64]>,
    alpha: f64,
    scale: f64,
    par: Par,
) -> f64 {
    let n = rows.n();
    assert_eq!(t.len(), rows.held().len());
    // The blocks of the passes over X (so a shard reads the scores of its own rows only).
    let blocks = rows.stream_blocks();
    let arch = Arch::new();
    let leaf = |b: usize| {
        let r = blocks.range(b);
        arch.dispatch(LossSum {
            y: rows.y_at(r.clone()),
            w: rows.w_at(r.clone()),
            t: &t[rows.local(r.clone())],
            s: s.map(|s| &s[rows.local(r.clone())]),
            alpha,
            scale,
            loss,
        })
    };
    rows.reduce_with(blocks, par.for_bytes(n * 24), &leaf, &|a, b| a + b)
}
