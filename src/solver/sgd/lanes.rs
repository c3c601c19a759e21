//! The canonical per-step arithmetic of projected SGD, written once for "lanes".
//!
//! A *lane* is one independent SGD run. The single-run solver uses one `f64` lane ([`One`]);
//! the replicated engine advances `S::F64_LANES` runs per SIMD vector ([`Wide`]). Every
//! function here is generic over [`Lanes`], so both code paths execute the same IEEE operation
//! sequence per lane and give bit-identical results:
//!
//! * dot product `s = xᵀθ`: 8 partial sums `a_k`, `k = j mod 8`, each accumulated by fused
//!   multiply-add in increasing `j` from `+0`, combined as
//!   `((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7))` ([`combine8`]). The same 8-way scheme (with plain
//!   additions) gives the sum used for centring, and (with FMA) the squared norm;
//! * step `g_j = fma(c, x_j, fma(β/W, θ_j, b_j/W))`, `θ_j ← fma(−η, g_j, θ_j)`;
//! * projection: centre (`θ_j ← θ_j − (Σθ)/d`) when the sum-zero constraint is imposed, then,
//!   with a radius `B`, if `‖θ‖² > B²` scale by `B/√‖θ‖²` (centre first, then shrink: the exact
//!   projection onto `Θ_B`);
//! * Polyak–Ruppert average after `k` averaged iterates: `a_j ← fma(θ_j − a_j, 1/k, a_j)`.
//!
//! `fma` is always the correctly rounded fused multiply-add (`f64::mul_add`, or
//! `Simd::mul_add_f64s`, never the "fuse if cheap" variant), and `√` and `/` are correctly
//! rounded, so a lane's result does not depend on the instruction set or on its position.

use pulp::Simd;

/// Arithmetic on a group of lanes.
pub(crate) trait Lanes: Copy {
    /// One value per lane.
    type V: Copy;
    /// Every lane `v`.
    fn splat(self, v: f64) -> Self::V;
    /// `a + b`.
    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a − b`.
    fn sub(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a · b`.
    fn mul(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a / b`.
    fn div(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a · b + c` with a single rounding.
    fn fma(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// `−a`.
    fn neg(self, a: Self::V) -> Self::V;
    /// Per lane: `b / √n2` where `n2 > b2`, else `1`. Returns whether any lane is not `1`.
    fn clip_scale(self, n2: Self::V, b2: f64, b: f64) -> (Self::V, bool);
}

/// One scalar lane (the ordinary single-run solver).
#[derive(Clone, Copy)]
pub(crate) struct One;

impl Lanes for One {
    type V = f64;
    #[inline(always)]
    fn splat(self, v: f64) -> f64 {
        v
    }
    #[inline(always)]
    fn add(self, a: f64, b: f64) -> f64 {
        a + b
    }
    #[inline(always)]
    fn sub(self, a: f64, b: f64) -> f64 {
        a - b
    }
    #[inline(always)]
    fn mul(self, a: f64, b: f64) -> f64 {
        a * b
    }
    #[inline(always)]
    fn div(self, a: f64, b: f64) -> f64 {
        a / b
    }
    #[inline(always)]
    fn fma(self, a: f64, b: f64, c: f64) -> f64 {
        a.mul_add(b, c)
    }
    #[inline(always)]
    fn neg(self, a: f64) -> f64 {
        -a
    }
    #[inline(always)]
    fn clip_scale(self, n2: f64, b2: f64, b: f64) -> (f64, bool) {
        if n2 > b2 {
            (b / n2.sqrt(), true)
        } else {
            (1.0, false)
        }
    }
}

/// `S::F64_LANES` lanes in one SIMD vector (the replicated engine).
#[derive(Clone, Copy)]
pub(crate) struct Wide<S: Simd>(pub S);

impl<S: Simd> Lanes for Wide<S> {
    type V = S::f64s;
    #[inline(always)]
    fn splat(self, v: f64) -> S::f64s {
        self.0.splat_f64s(v)
    }
    #[inline(always)]
    fn add(self, a: S::f64s, b: S::f64s) -> S::f64s {
        self.0.add_f64s(a, b)
    }
    #[inline(always)]
    fn sub(self, a: S::f64s, b: S::f64s) -> S::f64s {
        self.0.sub_f64s(a, b)
    }
    #[inline(always)]
    fn mul(self, a: S::f64s, b: S::f64s) -> S::f64s {
        self.0.mul_f64s(a, b)
    }
    #[inline(always)]
    fn div(self, a: S::f64s, b: S::f64s) -> S::f64s {
        self.0.div_f64s(a, b)
    }
    #[inline(always)]
    fn fma(self, a: S::f64s, b: S::f64s, c: S::f64s) -> S::f64s {
        self.0.mul_add_f64s(a, b, c)
    }
    #[inline(always)]
    fn neg(self, a: S::f64s) -> S::f64s {
        self.0.neg_f64s(a)
    }
    #[inline(always)]
    fn clip_scale(self, n2: S::f64s, b2: f64, b: f64) -> (S::f64s, bool) {
        let s = self.0;
        // Usually no lane is outside the ball: then skip the √ and the division, which would
        // otherwise sit on the step-to-step dependency chain (same bits: the scale would be 1).
        if s.reduce_max_f64s(n2) <= b2 {
            return (s.splat_f64s(1.0), false);
        }
        let over = s.greater_than_f64s(n2, s.splat_f64s(b2));
        let scale = s.div_f64s(s.splat_f64s(b), s.sqrt_f64s(n2));
        (s.select_f64s(over, scale, s.splat_f64s(1.0)), true)
    }
}

/// `((a0+a4)+(a2+a6)) + ((a1+a5)+(a3+a7))`.
#[inline(always)]
pub(crate) fn combine8<O: Lanes>(o: O, a: &[O::V; 8]) -> O::V {
    let lo = o.add(o.add(a[0], a[4]), o.add(a[2], a[6]));
    let hi = o.add(o.add(a[1], a[5]), o.add(a[3], a[7]));
    o.add(lo, hi)
}

/// Runs `$body` with `$l` bound to the constants `0, 1, …, $len − 1` (`$len < 8`): the
/// remainder of a chunked loop, unrolled so that accumulator arrays stay in registers.
macro_rules! unroll_rem {
    ($len:expr, |$l:ident| $body:block) => {{
        let len: usize = $len;
        debug_assert!(len < 8);
        if len > 0 {
            let $l = 0usize;
            $body
        }
        if len > 1 {
            let $l = 1usize;
            $body
        }
        if len > 2 {
            let $l = 2usize;
            $body
        }
        if len > 3 {
            let $l = 3usize;
            $body
        }
        if len > 4 {
            let $l = 4usize;
            $body
        }
        if len > 5 {
            let $l = 5usize;
            $body
        }
        if len > 6 {
            let $l = 6usize;
            $body
        }
    }};
}

/// `s = xᵀθ` with the canonical 8-way FMA accumulation (`x` and `th` have length `d`).
#[inline(always)]
pub(crate) fn dot<O: Lanes>(o: O, x: &[O::V], th: &[O::V]) -> O::V {
    debug_assert_eq!(x.len(), th.len());
    let mut a = [o.splat(0.0); 8];
    let xc = x.chunks_exact(8);
    let tc = th.chunks_exact(8);
    let (xr, tr) = (xc.remainder(), tc.remainder());
    for (xs, ts) in xc.zip(tc) {
        for l in 0..8 {
            a[l] = o.fma(xs[l], ts[l], a[l]);
        }
    }
    let tr = &tr[..xr.len()];
    unroll_rem!(xr.len(), |l| {
        a[l] = o.fma(xr[l], tr[l], a[l]);
    });
    combine8(o, &a)
}

/// What the projection has to do (from the feasible set).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct Proj {
    /// Centre (sum-zero constraint).
    pub center: bool,
    /// `(B, B²)` when the norm is bounded.
    pub ball: Option<(f64, f64)>,
}

impl Proj {
    /// No projection (the unconstrained set).
    pub(crate) const NONE: Proj = Proj {
        center: false,
        ball: None,
    };
    /// The projection onto `set`.
    pub fn of(set: &crate::feasible::FeasibleSet) -> Self {
        Proj {
            center: set.sum_zero(),
            ball: set.radius().map(|b| (b, b * b)),
        }
    }
}

/// One coordinate of the step: `θ ← fma(−η, fma(c, x, fma(β/W, θ, b/W)), θ)`.
#[inline(always)]
fn coord<O: Lanes>(o: O, x: O::V, th: O::V, c: O::V, neg_eta: O::V, beta_w: O::V, bw: O::V) -> O::V {
    let g = o.fma(c, x, o.fma(beta_w, th, bw));
    o.fma(neg_eta, g, th)
}

/// The step `θ_j ← θ_j − η (c·x_j + (β/W) θ_j + b_j/W)` (all lanes), followed by the
/// projection. `neg_eta = −η`, `beta_w = β/W`, `bw[j] = b_j/W`; `x`, `th`, `bw` have length `d`.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub(crate) fn step<O: Lanes>(
    o: O,
    x: &[O::V],
    th: &mut [O::V],
    c: O::V,
    neg_eta: O::V,
    beta_w: O::V,
    bw: &[O::V],
    proj: Proj,
) {
    if proj.center {
        step_impl::<O, true>(o, x, th, c, neg_eta, beta_w, bw, proj.ball)
    } else {
        step_impl::<O, false>(o, x, th, c, neg_eta, beta_w, bw, proj.ball)
    }
}

#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn step_impl<O: Lanes, const CENTER: bool>(
    o: O,
    x: &[O::V],
    th: &mut [O::V],
    c: O::V,
    neg_eta: O::V,
    beta_w: O::V,
    bw: &[O::V],
    ball: Option<(f64, f64)>,
) {
    debug_assert!(x.len() == th.len() && bw.len() == th.len());
    let mut sum = [o.splat(0.0); 8];
    let d = th.len();
    let full = d / 8 * 8;
    let (tf, tr) = th.split_at_mut(full);
    let (xf, xr) = x.split_at(full);
    let (bf, br) = bw.split_at(full);
    for ((ts, xs), bs) in tf.chunks_exact_mut(8).zip(xf.chunks_exact(8)).zip(bf.chunks_exact(8)) {
        for l in 0..8 {
            let v = coord(o, xs[l], ts[l], c, neg_eta, beta_w, bs[l]);
            ts[l] = v;
            if CENTER {
                sum[l] = o.add(sum[l], v);
            }
        }
    }
    let (xr, br) = (&xr[..tr.len()], &br[..tr.len()]);
    unroll_rem!(tr.len(), |l| {
        let v = coord(o, xr[l], tr[l], c, neg_eta, beta_w, br[l]);
        tr[l] = v;
        if CENTER {
            sum[l] = o.add(sum[l], v);
        }
    });
    project_impl::<O, CENTER>(o, th, &sum, ball);
}

/// `θ_j ← θ_j − m` and the canonical partial sums of `θ_j²` (only when `norm`).
#[inline(always)]
fn center_and_norm<O: Lanes>(o: O, th: &mut [O::V], m: O::V, norm: bool) -> [O::V; 8] {
    let mut nrm = [o.splat(0.0); 8];
    let full = th.len() / 8 * 8;
    let (tf, tr) = th.split_at_mut(full);
    for ts in tf.chunks_exact_mut(8) {
        for l in 0..8 {
            let v = o.sub(ts[l], m);
            ts[l] = v;
            if norm {
                nrm[l] = o.fma(v, v, nrm[l]);
            }
        }
    }
    unroll_rem!(tr.len(), |l| {
        let v = o.sub(tr[l], m);
        tr[l] = v;
        if norm {
            nrm[l] = o.fma(v, v, nrm[l]);
        }
    });
    nrm
}

/// The canonical partial sums of `θ_j²`.
#[inline(always)]
fn norm_sq<O: Lanes>(o: O, th: &[O::V]) -> [O::V; 8] {
    let mut nrm = [o.splat(0.0); 8];
    let c = th.chunks_exact(8);
    let tr = c.remainder();
    for ts in c {
        for l in 0..8 {
            nrm[l] = o.fma(ts[l], ts[l], nrm[l]);
        }
    }
    unroll_rem!(tr.len(), |l| {
        nrm[l] = o.fma(tr[l], tr[l], nrm[l]);
    });
    nrm
}

/// The projection, given the canonical partial sums of `θ` (used only when centring).
#[inline(always)]
fn project_impl<O: Lanes, const CENTER: bool>(o: O, th: &mut [O::V], sum: &[O::V; 8], ball: Option<(f64, f64)>) {
    let nrm = if CENTER {
        let m = o.div(combine8(o, sum), o.splat(th.len() as f64));
        center_and_norm(o, th, m, ball.is_some())
    } else if ball.is_some() {
        norm_sq(o, th)
    } else {
        return;
    };
    if let Some((b, b2)) = ball {
        let (scale, any) = o.clip_scale(combine8(o, &nrm), b2, b);
        if any {
            for v in th.iter_mut() {
                *v = o.mul(*v, scale);
            }
        }
    }
}

/// The projection of an arbitrary point (computes the canonical sums first).
#[inline(always)]
pub(crate) fn project<O: Lanes>(o: O, th: &mut [O::V], proj: Proj) {
    let mut sum = [o.splat(0.0); 8];
    if proj.center {
        let c = th.chunks_exact(8);
        let tr = c.remainder();
        for ts in c {
            for l in 0..8 {
                sum[l] = o.add(sum[l], ts[l]);
            }
        }
        unroll_rem!(tr.len(), |l| {
            sum[l] = o.add(sum[l], tr[l]);
        });
        project_impl::<O, true>(o, th, &sum, proj.ball);
    } else {
        project_impl::<O, false>(o, th, &sum, proj.ball);
    }
}

/// Polyak–Ruppert running mean: `a_j ← fma(θ_j − a_j, 1/k, a_j)` with `inv_k = 1/k`.
#[inline(always)]
pub(crate) fn average<O: Lanes>(o: O, avg: &mut [O::V], th: &[O::V], inv_k: O::V) {
    for (a, &t) in avg.iter_mut().zip(th) {
        *a = o.fma(o.sub(t, *a), inv_k, *a);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::feasible::FeasibleSet;

    #[test]
    fn dot_uses_the_canonical_order() {
        // Values chosen so that a different summation order changes the result.
        let x: Vec<f64> = (0..13)
            .map(|j| if j % 3 == 0 { 1e16 } else { 1.0 + j as f64 })
            .collect();
        let th: Vec<f64> = (0..13).map(|j| if j % 2 == 0 { 1.0 } else { -1.0 }).collect();
        let mut a = [0.0f64; 8];
        for j in 0..13 {
            a[j % 8] = x[j].mul_add(th[j], a[j % 8]);
        }
        let want = ((a[0] + a[4]) + (a[2] + a[6])) + ((a[1] + a[5]) + (a[3] + a[7]));
        assert_eq!(dot(One, &x, &th).to_bits(), want.to_bits());
    }

    /// The fused step (update, centring sums, projection) is the update followed by the
    /// projection, bit for bit: the engine's hooks may fuse them.
    #[test]
    fn fused_step_is_the_update_then_the_projection() {
        for set in [
            FeasibleSet::theta_b(0.5).unwrap(),
            FeasibleSet::ball(0.5).unwrap(),
            FeasibleSet::SumZero,
            FeasibleSet::Unconstrained,
        ] {
            for d in [1usize, 3, 8, 11, 20] {
                let x: Vec<f64> = (0..d).map(|j| (j as f64 * 0.7).sin()).collect();
                let th: Vec<f64> = (0..d).map(|j| 0.3 * j as f64 - 0.7).collect();
                let bw: Vec<f64> = (0..d).map(|j| 1e-3 * j as f64).collect();
                let mut a = th.clone();
                step(One, &x, &mut a, 0.9, -0.3, 0.01, &bw, Proj::of(&set));
                let mut b = th.clone();
                step(One, &x, &mut b, 0.9, -0.3, 0.01, &bw, Proj::NONE);
                project(One, &mut b, Proj::of(&set));
                let bits = |v: &[f64]| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
                assert_eq!(bits(&a), bits(&b), "{set:?} d = {d}");
            }
        }
    }

    #[test]
    fn projection_matches_the_feasible_set() {
        for set in [
            FeasibleSet::theta_b(0.5).unwrap(),
            FeasibleSet::ball(0.5).unwrap(),
            FeasibleSet::SumZero,
            FeasibleSet::Unconstrained,
        ] {
            for d in [1usize, 3, 8, 11] {
                let v: Vec<f64> = (0..d).map(|j| 0.3 * j as f64 - 0.7).collect();
                let mut a = v.clone();
                project(One, &mut a, Proj::of(&set));
                let mut b = v.clone();
                set.project(&mut b);
                for (p, q) in a.iter().zip(&b) {
                    assert!((p - q).abs() < 1e-15, "{set:?} d={d}: {a:?} vs {b:?}");
                }
            }
        }
    }
}
