//! The one pass over the `n × A × d` state-action features that each Frank–Wolfe iteration
//! makes: it applies the previous step to the stored policy, accumulates the policy's mean
//! feature, and evaluates all `A` scores `⟨θ, φ(s, a)⟩` of every state to get the greedy
//! (linear-maximisation) policy, its mean feature and `Σ_s ρ_s max_a ⟨θ, φ(s, a)⟩`.
//!
//! **Determinism.** States are cut into blocks whose size depends only on `(n, A, d)`
//! ([`Blocks`]); each block is reduced in state order with SIMD dot products / axpys of fixed
//! lane order, and blocks are combined by the fixed-shape tree of [`crate::par`]: the same bits
//! for any number of threads. **Memory.** Beyond the borrowed input: the policy (`n × A`
//! probabilities and `n` action indices, both owned by the caller) and `O(d)` per block on the
//! reduction tree (at most `O(d log(#blocks))` live at once per thread).

use super::states::StateActions;
use crate::par::{Blocks, Par, Partial};
use pulp::{Arch, Simd, WithSimd};

/// Target bytes of features per block (1 MiB: 256 states at `A = 8`, `d = 64`).
const BLOCK_BYTES: usize = 1 << 20;

/// Sums of one pass (unnormalised: multiply by `1/Σw`).
#[derive(Debug, Clone)]
pub(crate) struct PassSums {
    /// `Σ_s w_s φ(s, a*(s))`, `a*` the greedy action (lowest index on ties).
    pub greedy: Vec<f64>,
    /// `Σ_s w_s Σ_a π_s(a) φ(s, a)` of the (updated) stored policy, when one is stored.
    pub policy: Vec<f64>,
    /// `Σ_s w_s max_a ⟨θ, φ(s, a)⟩`.
    pub max_score: f64,
    /// `Σ_s w_s ⟨θ, Σ_a π_s(a) φ(s, a)⟩`, when a policy is stored.
    pub policy_score: f64,
    /// `Σ_s w_s max_a ‖φ(s, a)‖`, when requested.
    pub max_norm: f64,
}

impl PassSums {
    fn zero(d: usize) -> Self {
        PassSums {
            greedy: vec![0.0; d],
            policy: vec![0.0; d],
            max_score: 0.0,
            policy_score: 0.0,
            max_norm: 0.0,
        }
    }
    fn add(mut self, o: PassSums) -> PassSums {
        self.greedy.iter_mut().zip(&o.greedy).for_each(|(a, b)| *a += b);
        self.policy.iter_mut().zip(&o.policy).for_each(|(a, b)| *a += b);
        self.max_score += o.max_score;
        self.policy_score += o.policy_score;
        self.max_norm += o.max_norm;
        self
    }
}

impl Partial for PassSums {
    fn put(&self, out: &mut Vec<f64>) {
        self.greedy.put(out);
        self.policy.put(out);
        out.extend([self.max_score, self.policy_score, self.max_norm]);
    }
    fn take(src: &mut &[f64]) -> Self {
        let greedy = Vec::take(src);
        let policy = Vec::take(src);
        PassSums {
            greedy,
            policy,
            max_score: f64::take(src),
            policy_score: f64::take(src),
            max_norm: f64::take(src),
        }
    }
}

/// What a pass does besides the greedy evaluation.
#[derive(Debug, Clone, Copy)]
pub(crate) struct PassSpec {
    /// Apply `π_s ← (1 − γ)π_s + γ e_{a_prev(s)}` first (`a_prev` = the action buffer's content).
    pub step: Option<f64>,
    /// Accumulate `Σ_a π_s(a) φ(s, a)` of the stored policy.
    pub policy_sum: bool,
    /// Accumulate `max_a ‖φ(s, a)‖`.
    pub norms: bool,
}

#[inline(always)]
pub(super) fn dot<S: Simd>(simd: S, x: &[f64], th: &[S::f64s], tail: &[f64]) -> f64 {
    let (xh, xt) = S::as_simd_f64s(x);
    let z = simd.splat_f64s(0.0);
    let (mut c0, mut c1, mut c2, mut c3) = (z, z, z, z);
    let mut xc = xh.chunks_exact(4);
    let mut tc = th.chunks_exact(4);
    for (a, b) in (&mut xc).zip(&mut tc) {
        c0 = simd.mul_add_e_f64s(a[0], b[0], c0);
        c1 = simd.mul_add_e_f64s(a[1], b[1], c1);
        c2 = simd.mul_add_e_f64s(a[2], b[2], c2);
        c3 = simd.mul_add_e_f64s(a[3], b[3], c3);
    }
    for (a, b) in xc.remainder().iter().zip(tc.remainder()) {
        c0 = simd.mul_add_e_f64s(*a, *b, c0);
    }
    let mut s = simd.reduce_sum_f64s(simd.add_f64s(simd.add_f64s(c0, c1), simd.add_f64s(c2, c3)));
    for (a, b) in xt.iter().zip(tail) {
        s += a * b;
    }
    s
}

#[inline(always)]
pub(super) fn axpy<S: Simd>(simd: S, alpha: f64, x: &[f64], acc: &mut [f64]) {
    let (xh, xt) = S::as_simd_f64s(x);
    let (ah, at) = S::as_mut_simd_f64s(acc);
    let av = simd.splat_f64s(alpha);
    for (a, b) in ah.iter_mut().zip(xh) {
        *a = simd.mul_add_e_f64s(av, *b, *a);
    }
    for (a, b) in at.iter_mut().zip(xt) {
        *a += alpha * b;
    }
}

struct BlockPass<'a> {
    states: &'a StateActions<'a>,
    theta: &'a [f64],
    lo: usize,
    probs: &'a mut [f64],
    actions: &'a mut [u32],
    spec: PassSpec,
}

impl WithSimd for BlockPass<'_> {
    type Output = PassSums;
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> PassSums {
        let st = self.states;
        let (na, d) = (st.actions(), st.d());
        let (th, tt) = S::as_simd_f64s(self.theta);
        let mut out = PassSums::zero(d);
        let has_policy = !self.probs.is_empty();
        let mut scores = vec![0.0; na];
        for (i, act) in self.actions.iter_mut().enumerate() {
            let s = self.lo + i;
            let w = st.raw_weight(s);
            let feats = st.state(s);
            // All A scores once (the only full read of the state's rows).
            let mut best = f64::NEG_INFINITY;
            let mut arg = 0usize;
            let mut nmax: f64 = 0.0;
            for (a, sc) in scores.iter_mut().enumerate() {
                let f = &feats[a * d..(a + 1) * d];
                let v = dot(simd, f, th, tt);
                *sc = v;
                if v > best {
                    best = v;
                    arg = a;
                }
                if self.spec.norms {
                    let (fh, ft) = S::as_simd_f64s(f);
                    nmax = nmax.max(dot(simd, f, fh, ft).sqrt());
                }
            }
            if has_policy {
                let row = &mut self.probs[i * na..(i + 1) * na];
                if let Some(gamma) = self.spec.step {
                    if gamma >= 1.0 {
                        row.iter_mut().for_each(|p| *p = 0.0);
                        row[*act as usize] = 1.0;
                    } else if gamma > 0.0 {
                        row.iter_mut().for_each(|p| *p *= 1.0 - gamma);
                        row[*act as usize] += gamma;
                    }
                }
                if self.spec.policy_sum {
                    let mut sc = 0.0;
                    for (a, &p) in row.iter().enumerate() {
                        if p != 0.0 {
                            axpy(simd, w * p, &feats[a * d..(a + 1) * d], &mut out.policy);
                            sc += p * scores[a];
                        }
                    }
                    out.policy_score += w * sc;
                }
            }
            *act = arg as u32;
            out.max_score += w * best;
            out.max_norm += w * nmax;
            axpy(simd, w, &feats[arg * d..(arg + 1) * d], &mut out.greedy);
        }
        out
    }
}

/// The blocks of a pass over `states`.
pub(crate) fn blocks(states: &StateActions<'_>) -> Blocks {
    Blocks::new(states.n(), states.actions() * states.d(), BLOCK_BYTES, 8)
}

/// A per-block computation of a pass: it reads the block's states (starting at state `lo`),
/// writes their rows of `probs` (`A` per state, or empty) and `actions`, and returns partial
/// sums that [`BlockKernel::add`] combines along the fixed reduction tree.
pub(crate) trait BlockKernel: Sync {
    /// The block's partial sums.
    type Sums: Partial + Send;
    /// The partial sums of the states `lo..lo + actions.len()`.
    fn block(&self, lo: usize, probs: &mut [f64], actions: &mut [u32]) -> Self::Sums;
    /// Combines the sums of two adjacent subtrees (left first).
    fn add(a: Self::Sums, b: Self::Sums) -> Self::Sums;
}

struct Greedy<'a> {
    states: &'a StateActions<'a>,
    theta: &'a [f64],
    spec: PassSpec,
}

impl BlockKernel for Greedy<'_> {
    type Sums = PassSums;
    fn block(&self, lo: usize, probs: &mut [f64], actions: &mut [u32]) -> PassSums {
        Arch::new().dispatch(BlockPass {
            states: self.states,
            theta: self.theta,
            lo,
            probs,
            actions,
            spec: self.spec,
        })
    }
    fn add(a: PassSums, b: PassSums) -> PassSums {
        a.add(b)
    }
}

#[allow(clippy::too_many_arguments)]
fn reduce<K: BlockKernel>(
    kernel: &K,
    na: usize,
    bl: Blocks,
    lo: usize,
    hi: usize,
    probs: &mut [f64],
    actions: &mut [u32],
    par: Par,
) -> K::Sums {
    if hi - lo == 1 {
        return kernel.block(bl.range(lo).start, probs, actions);
    }
    let mid = lo + (hi - lo) / 2;
    let split = bl.range(mid).start - bl.range(lo).start;
    let (a_l, a_r) = actions.split_at_mut(split);
    let pw = if probs.is_empty() { 0 } else { split * na };
    let (p_l, p_r) = probs.split_at_mut(pw);
    let (x, y) = if par == Par::Rayon {
        rayon::join(
            || reduce(kernel, na, bl, lo, mid, p_l, a_l, par),
            || reduce(kernel, na, bl, mid, hi, p_r, a_r, par),
        )
    } else {
        (
            reduce(kernel, na, bl, lo, mid, p_l, a_l, Par::Seq),
            reduce(kernel, na, bl, mid, hi, p_r, a_r, Par::Seq),
        )
    };
    K::add(x, y)
}

/// Runs `kernel` over every block of `states` and reduces the sums along the fixed tree (in
/// one process or across the members of a distributed `states`): the same bits for any thread
/// or rank count.
pub(crate) fn run_kernel<K: BlockKernel>(
    states: &StateActions<'_>,
    kernel: &K,
    probs: &mut [f64],
    actions: &mut [u32],
    par: Par,
) -> K::Sums {
    assert_eq!(actions.len(), states.n());
    assert!(probs.is_empty() || probs.len() == states.n() * states.actions());
    let bl = blocks(states);
    let na = states.actions();
    let par = par.for_bytes(states.phi().len() * 8);
    let Some(shard) = states.shard() else {
        return reduce(kernel, na, bl, 0, bl.count(), probs, actions, par);
    };
    // Distributed: this member's maximal subtrees (their states' rows of `probs` and
    // `actions` are written here, the others' rows elsewhere), then the tree above them.
    let parts = shard
        .owned_nodes(bl)
        .into_iter()
        .map(|(r, _)| {
            let rows = bl.range(r.start).start..bl.range(r.end - 1).end;
            let p = if probs.is_empty() {
                &mut [][..]
            } else {
                &mut probs[rows.start * na..rows.end * na]
            };
            let t = reduce(kernel, na, bl, r.start, r.end, p, &mut actions[rows], par);
            (r, t)
        })
        .collect();
    shard.finish(bl.count(), parts, &K::add)
}

/// One pass (module docs). `probs` is the stored policy (`n × A`, or empty for none);
/// `actions` (length `n`) holds the previous greedy actions on entry (used by `spec.step`) and
/// the new greedy actions under `theta` on exit.
pub(crate) fn run(
    states: &StateActions<'_>,
    theta: &[f64],
    probs: &mut [f64],
    actions: &mut [u32],
    spec: PassSpec,
    par: Par,
) -> PassSums {
    assert_eq!(theta.len(), states.d());
    run_kernel(states, &Greedy { states, theta, spec }, probs, actions, par)
}

/// On a distributed `states`, gives every member every state's rows of `probs` (`n × A`, or
/// empty) and `actions` (`n`), each from the member whose passes write them (the owner of the
/// state's block); nothing to do in one process.
pub(crate) fn gather_rows(states: &StateActions<'_>, probs: &mut [f64], actions: &mut [u32]) {
    let Some(shard) = states.shard() else {
        return;
    };
    let bl = blocks(states);
    let na = states.actions();
    let own = shard.owned_nodes(bl);
    // The owned blocks are one contiguous run, and the runs of the members follow each other
    // in rank order, so the concatenation of the members' rows is the whole table.
    let rows = match (own.first(), own.last()) {
        (Some((a, _)), Some((b, _))) => bl.range(a.start).start..bl.range(b.end - 1).end,
        _ => 0..0,
    };
    let mut mine: Vec<f64> = actions[rows.clone()].iter().map(|&a| f64::from(a)).collect();
    if !probs.is_empty() {
        mine.extend_from_slice(&probs[rows.start * na..rows.end * na]);
    }
    let all = shard
        .collective()
        .all_gather(&[&[rows.start as f64, rows.end as f64][..], &mine].concat());
    let mut src = &all[..];
    while let [lo, hi, rest @ ..] = src {
        let (lo, hi) = (*lo as usize, *hi as usize);
        let (acts, rest) = rest.split_at(hi - lo);
        for (o, &a) in actions[lo..hi].iter_mut().zip(acts) {
            *o = a as u32;
        }
        src = if probs.is_empty() {
            rest
        } else {
            let (p, rest) = rest.split_at((hi - lo) * na);
            probs[lo * na..hi * na].copy_from_slice(p);
            rest
        };
    }
}
