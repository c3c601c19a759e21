//! The SIMD kernel of [`run`](super::run): the `d × R` block advanced one time step at a time,
//! `L = S::F64_LANES` replications per SIMD vector, in the chunk-major padded layout of
//! [`to_chunks`].

use super::super::lanes::{self, Lanes, Proj, Wide};
use super::super::Averaging;
use super::{Checkpoint, ReplicaBlock, ReplicaOptions, ReplicaOutput, ReplicaProblem, ReplicaSteps, STOP_CHECK};
use crate::loss::{Loss, LossOut};
use crate::solver::{Control, Progress, Termination};
use pulp::{Simd, WithSimd};
use std::time::Duration;

/// One validated run of [`run`](super::run), dispatched to the best SIMD instruction set.
pub(super) struct Engine<'s, 'a, L: Loss> {
    pub block: ReplicaBlock<'a>,
    pub prob: &'s ReplicaProblem<'s, L>,
    pub opts: &'s ReplicaOptions<'s>,
    pub ctl: &'s Control,
    pub proj: Proj,
}

/// `d × R` (`v[j·R + r]`) divided by `scale` → chunk-major padded (`[(k·d + j)·L + l]`,
/// `r = k·L + l`); everything else (`v = None`, padding lanes) is `fill`.
fn to_chunks(v: Option<&[f64]>, d: usize, r: usize, lanes: usize, scale: f64, fill: f64) -> Vec<f64> {
    let nv = r.div_ceil(lanes);
    let mut out = vec![fill; nv * d * lanes];
    if let Some(v) = v {
        for j in 0..d {
            for rr in 0..r {
                let (k, l) = (rr / lanes, rr % lanes);
                out[(k * d + j) * lanes + l] = v[j * r + rr] / scale;
            }
        }
    }
    out
}

/// Chunk-major padded → `d × R`.
fn from_chunks(c: &[f64], d: usize, r: usize, lanes: usize) -> Vec<f64> {
    let mut out = vec![0.0; d * r];
    for j in 0..d {
        for rr in 0..r {
            let (k, l) = (rr / lanes, rr % lanes);
            out[j * r + rr] = c[(k * d + j) * lanes + l];
        }
    }
    out
}

/// The buffers of a run in the chunk-major padded layout of [`to_chunks`]: `⌈R/L⌉` SIMD chunks
/// of `L` replications (the last one padded), plus the current time step's inputs.
struct Chunks {
    d: usize,
    r: usize,
    ln: usize,
    nv: usize,
    /// The iterates `θ_t`.
    th: Vec<f64>,
    /// The linear term divided by `n`.
    bw: Vec<f64>,
    /// The Polyak–Ruppert averages, when averaging.
    avg: Option<Vec<f64>>,
    /// Per-lane step constants (`η_r` or `λ_r`; 1 in the padding and for a shared schedule).
    per_lane: Vec<f64>,
    /// The time step's feature panel.
    xp: Vec<f64>,
    /// The time step's labels, scores and loss derivatives, one per lane.
    y: Vec<f64>,
    s: Vec<f64>,
    g: Vec<f64>,
}

impl Chunks {
    /// The buffers of a run on `block`: warm starts (or 0) projected per replication, the
    /// linear term divided by `n`, the per-lane step constants.
    #[inline(always)]
    fn start<S: Simd, L: Loss>(
        o: Wide<S>,
        block: &ReplicaBlock<'_>,
        prob: &ReplicaProblem<'_, L>,
        opts: &ReplicaOptions<'_>,
        proj: Proj,
    ) -> Chunks {
        let (n, d, r) = (block.n, block.d, block.r);
        let ln = S::F64_LANES;
        let nv = r.div_ceil(ln);
        let rp = nv * ln;
        let w = n as f64;
        let mut th = to_chunks(opts.theta0, d, r, ln, 1.0, 0.0);
        let bw = to_chunks(prob.linear_term, d, r, ln, w, 0.0);
        let avg = (opts.average == Averaging::Polyak).then(|| vec![0.0; nv * d * ln]);
        let per_lane: Vec<f64> = match opts.steps {
            ReplicaSteps::Shared(_) => vec![1.0; rp],
            ReplicaSteps::PerReplicaConst(v) | ReplicaSteps::PerReplicaLambda(v) => {
                let mut p = vec![1.0; rp];
                p[..r].copy_from_slice(v);
                p
            }
        };
        let thv = S::as_mut_simd_f64s(&mut th).0;
        for k in 0..nv {
            lanes::project(o, &mut thv[k * d..(k + 1) * d], proj);
        }
        Chunks {
            d,
            r,
            ln,
            nv,
            th,
            bw,
            avg,
            per_lane,
            xp: vec![0.0; nv * d * ln],
            y: vec![0.0; rp],
            s: vec![0.0; rp],
            g: vec![0.0; rp],
        }
    }

    /// Loads time step `t`: its `d × R` panel into the padded feature chunks, its labels as
    /// `f64`, and the scores `x_{t,r}ᵀθ_r` of every replication.
    #[inline(always)]
    fn load_step<S: Simd>(&mut self, o: Wide<S>, block: &ReplicaBlock<'_>, t: usize) {
        let (d, r) = (self.d, self.r);
        let xt = &block.x[t * d * r..(t + 1) * d * r];
        {
            let xv = S::as_mut_simd_f64s(&mut self.xp).0;
            for j in 0..d {
                let (head, tail) = S::as_simd_f64s(&xt[j * r..(j + 1) * r]);
                for (k, &v) in head.iter().enumerate() {
                    xv[k * d + j] = v;
                }
                if !tail.is_empty() {
                    xv[head.len() * d + j] = o.0.partial_load_f64s(tail);
                }
            }
        }
        for (yb, &yv) in self.y.iter_mut().zip(&block.y[t * r..(t + 1) * r]) {
            *yb = yv as f64;
        }
        let xv = S::as_simd_f64s(&self.xp).0;
        let th = S::as_simd_f64s(&self.th).0;
        let sv = S::as_mut_simd_f64s(&mut self.s).0;
        for (k, s) in sv.iter_mut().enumerate() {
            *s = lanes::dot(o, &xv[k * d..(k + 1) * d], &th[k * d..(k + 1) * d]);
        }
    }

    /// Step `t1` of every chunk from the loss derivatives in `g` (`lanes::step`, projection
    /// included), then the running average when averaging.
    #[inline(always)]
    fn step<S: Simd>(&mut self, o: Wide<S>, steps: ReplicaSteps<'_>, t1: usize, beta_w: S::f64s, proj: Proj) {
        let d = self.d;
        let xv = S::as_simd_f64s(&self.xp).0;
        let pl = S::as_simd_f64s(&self.per_lane).0;
        let bw = S::as_simd_f64s(&self.bw).0;
        let gv = S::as_simd_f64s(&self.g).0;
        let th = S::as_mut_simd_f64s(&mut self.th).0;
        let shared = match steps {
            ReplicaSteps::Shared(s) => Some(o.splat(-s.eta(t1))),
            _ => None,
        };
        let tv = o.splat(t1 as f64);
        let inv_k = o.splat(1.0 / t1 as f64);
        for k in 0..self.nv {
            let neg_eta = match (shared, steps) {
                (Some(e), _) => e,
                (None, ReplicaSteps::PerReplicaLambda(_)) => o.neg(o.div(o.splat(1.0), o.mul(pl[k], tv))),
                (None, _) => o.neg(pl[k]),
            };
            let thk = &mut th[k * d..(k + 1) * d];
            lanes::step(
                o,
                &xv[k * d..(k + 1) * d],
                thk,
                gv[k],
                neg_eta,
                beta_w,
                &bw[k * d..(k + 1) * d],
                proj,
            );
            if let Some(a) = self.avg.as_deref_mut() {
                let av = S::as_mut_simd_f64s(a).0;
                lanes::average(o, &mut av[k * d..(k + 1) * d], thk, inv_k);
            }
        }
    }

    /// The returned points so far (the averages or the iterates), `d × R`.
    fn returned(&self) -> Vec<f64> {
        from_chunks(self.avg.as_deref().unwrap_or(&self.th), self.d, self.r, self.ln)
    }

    /// Replication 0's iterate.
    fn first_iterate(&self) -> Vec<f64> {
        (0..self.d).map(|j| self.th[j * self.ln]).collect()
    }
}

impl<L: Loss> WithSimd for Engine<'_, '_, L> {
    type Output = ReplicaOutput;
    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> ReplicaOutput {
        let Engine {
            block,
            prob,
            opts,
            ctl,
            proj,
        } = self;
        let o = Wide(simd);
        let (n, d, r) = (block.n, block.d, block.r);
        let mut ch = Chunks::start(o, &block, prob, opts, proj);
        let beta_w = o.splat(prob.ridge / n as f64);
        let mut checkpoints = Vec::with_capacity(opts.checkpoints.len());
        let mut next_cp = 0;
        let mut termination = Termination::Completed;
        let mut steps = 0;
        for t in 0..n {
            if t % STOP_CHECK == 0 && t > 0 {
                if let Some(s) = ctl.stop_requested() {
                    termination = s;
                    break;
                }
            }
            ch.load_step(o, &block, t);
            prob.loss.eval_simd(
                simd,
                &ch.s,
                &ch.y,
                LossOut {
                    d1: Some(&mut ch.g),
                    ..Default::default()
                },
            );
            let t1 = t + 1;
            ch.step(o, opts.steps, t1, beta_w, proj);
            steps = t1;
            if next_cp < opts.checkpoints.len() && opts.checkpoints[next_cp] == t1 {
                checkpoints.push(Checkpoint {
                    step: t1,
                    theta: ch.returned(),
                });
                next_cp += 1;
            }
            if ctl.wants_progress(t1) {
                ctl.notify_progress(&Progress {
                    solver: "sgd-replicated",
                    iteration: t1,
                    budget: n,
                    objective: f64::NAN,
                    kkt_residual: f64::NAN,
                    data_passes: None,
                    theta: &ch.first_iterate(),
                });
            }
        }
        let theta = ch.returned();
        let non_finite = (0..r)
            .filter(|&rr| (0..d).any(|j| !theta[j * r + rr].is_finite()))
            .collect();
        ReplicaOutput {
            d,
            replications: r,
            theta,
            checkpoints,
            steps,
            termination,
            non_finite,
            elapsed: Duration::ZERO,
        }
    }
}
