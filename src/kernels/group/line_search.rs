//! For line searches: the scores of a direction and O(nK) loss sums from cached scores.

use super::{dot, par_for, stream_blocks};
use crate::data::GroupView;
use crate::loss::GroupLoss;
use crate::par::{tree_reduce, tree_reduce_rows, Par};
use pulp::{Arch, Simd, WithSimd};

struct MatVecBlock<'s, 'a> {
    v: &'s GroupView<'a>,
    s: &'s [f64],
    rows: std::ops::Range<usize>,
    out: &'s mut [f64],
}

impl WithSimd for MatVecBlock<'_, '_> {
    type Output = ();
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let k = self.v.k();
        for (b, i) in self.rows.clone().enumerate() {
            for r in 0..k {
                self.out[b * k + r] = dot(simd, self.v.row(i, r), self.s);
            }
        }
    }
}

/// `out[i·K + k] = φ_ikᵀ s` (the same dot products as the scores of
/// [`value_grad`](super::value_grad)).
pub fn matvec(v: &GroupView<'_>, s: &[f64], out: &mut [f64], par: Par) {
    let k = v.k();
    assert_eq!(s.len(), v.d());
    assert_eq!(out.len(), v.n() * k);
    let blocks = stream_blocks(v);
    let arch = Arch::new();
    let leaf = |b: usize, o: &mut [f64]| {
        arch.dispatch(MatVecBlock {
            v,
            s,
            rows: blocks.range(b),
            out: o,
        })
    };
    tree_reduce_rows(blocks, k, par_for(v, par), out, &leaf, &|(), ()| ());
}

/// `Σ_i w_i ℓ_i(c·(t_i + α s_i))` (`s = None`: `Σ w_i ℓ_i(c·t_i)`) from cached scores `t` and a
/// direction's scores `s` (each `n·K`), no access to the features.
///
/// The sum uses the blocks, the per-sample accumulation and the tree of
/// [`value_grad`](super::value_grad), so at `α = 0, c = 1` it returns the fused pass's value bit for bit, and along a line the rounding of
/// the long sum is the same at every trial point: a line search compares values whose
/// difference is the objective's change, not a difference of summation orders (which, for `n`
/// in the thousands, can exceed the change near the minimiser).
#[allow(clippy::too_many_arguments)]
pub fn loss_sum<L: GroupLoss>(
    v: &GroupView<'_>,
    loss: &L,
    t: &[f64],
    s: Option<&[f64]>,
    alpha: f64,
    scale: f64,
    par: Par,
) -> f64 {
    let (n, k) = (v.n(), v.k());
    assert_eq!(t.len(), n * k);
    let blocks = stream_blocks(v);
    let leaf = |b: usize| {
        let mut u = vec![0.0; k];
        let mut scratch = vec![0.0; loss.scratch_len(k)];
        let mut acc = 0.0;
        for i in blocks.range(b) {
            let ti = &t[i * k..(i + 1) * k];
            match s {
                Some(s) => {
                    let si = &s[i * k..(i + 1) * k];
                    for r in 0..k {
                        u[r] = alpha.mul_add(si[r], ti[r]);
                    }
                }
                None => u.copy_from_slice(ti),
            }
            if scale != 1.0 {
                u.iter_mut().for_each(|x| *x *= scale);
            }
            let li = loss.eval(&u, v.order_of(i), None, None, &mut scratch);
            if v.weights().is_some() {
                acc += v.weight(i) * li;
            } else {
                acc += li;
            }
        }
        acc
    };
    tree_reduce(blocks.count(), par_for(v, par), &leaf, &|a, b| a + b)
}
