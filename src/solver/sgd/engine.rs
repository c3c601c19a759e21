//! The one projected-SGD step driver. Every single-run SGD loop of the crate — the solver's
//! single-sample, mini-batch and K-wise steps, label-private SGD (Ghazi et al. (2021)),
//! user-level DP-SGD and AUP-RLHF (Zhang et al. (2025)) — is [`drive`] with a [`StepHook`]
//! (the replicated engine, `replicated`, advances many one-pass runs at once, vectorised over
//! runs, with the same lane arithmetic and schedules):
//!
//! ```text
//! θ_1 = Π(θ_0)
//! for t = t_0 + 1, t_0 + 2, …:
//!     g_t      ← hook.gradient(t, θ_t)        (read a row; privatise a label; clip per-user
//!                                              gradients and add noise; … — or halt)
//!     θ_{t+1}  = Π(θ_t − η_t g_t)             (η_t from the Schedule, Π onto the feasible set)
//!     averages ← θ_t or θ_{t+1}                (IterateMean)
//! ```
//!
//! The hook owns what differs between the algorithms: how `g_t` is computed and in which form it
//! is kept (a data row times a scalar, a lifted score gradient `Φ_iᵀs`, a noisy sum divided by the
//! batch size), and so the exact rounding of `θ + α g_t` ([`StepHook::add_to`]). The engine owns
//! the rest: the step counter, `η_t`, the projection, the averages. Hooks are generic parameters,
//! so every loop is monomorphised (no dynamic dispatch per step).
//!
//! **Projections.** [`Projection`] is implemented by [`FeasibleSet`] (its reference arithmetic)
//! and by the solver's lane projection `Proj` (the canonical 8-way sums shared with the replicated
//! engine, bit for bit). A hook states which one it runs with; the solver's hooks fuse the update
//! with the projection ([`StepHook::descend`]), which gives the same bits as `add_to` followed by
//! the projection.

use super::lanes::{self, One, Proj};
use super::step::Schedule;
use crate::error::Result;
use crate::feasible::FeasibleSet;
use pulp::Arch;
use std::borrow::Cow;
use std::sync::atomic::{AtomicBool, Ordering};

/// The projection `Π` onto a feasible set, in a fixed arithmetic.
pub(crate) trait Projection {
    /// `θ ← Π(θ)`.
    fn project(&self, theta: &mut [f64]);
}

impl Projection for FeasibleSet {
    /// [`FeasibleSet::project`]: centre, then shrink onto the ball.
    fn project(&self, theta: &mut [f64]) {
        FeasibleSet::project(self, theta)
    }
}

impl Projection for Proj {
    /// The canonical lane projection (module `lanes`), under run-time SIMD dispatch.
    fn project(&self, theta: &mut [f64]) {
        let proj = *self;
        Arch::new().dispatch(
            #[inline(always)]
            || lanes::project(One, theta, proj),
        );
    }
}

/// What the driver does after a hook's gradient call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Flow {
    /// Take the step.
    Continue,
    /// Stop before the step (e.g. AboveThreshold reported `⊥`): the step is not taken.
    Halt,
}

/// The per-step part of an SGD algorithm (module docs). `P` is the projection arithmetic the
/// hook's algorithm runs with.
pub(crate) trait StepHook<P: Projection> {
    /// Computes and keeps the stochastic gradient `g_t` at `θ_t` for step `t ≥ 1` (privatising,
    /// clipping and adding noise as the algorithm does), or halts.
    ///
    /// # Errors
    /// The algorithm's own (e.g. a privacy check that fails); the run stops with it.
    fn gradient(&mut self, t: usize, theta: &[f64]) -> Result<Flow>;

    /// `θ ← θ + α g_t` for the gradient of the last [`StepHook::gradient`] call, in the hook's
    /// own arithmetic.
    fn add_to(&self, alpha: f64, theta: &mut [f64]);

    /// `θ ← Π(θ + α g_t)`: [`StepHook::add_to`], then `proj`. A hook may fuse the two when that
    /// gives the same bits.
    #[inline(always)]
    fn descend(&self, alpha: f64, theta: &mut [f64], proj: &P) {
        self.add_to(alpha, theta);
        proj.project(theta);
    }

    /// Called with `θ_{t+1}` after step `t` (e.g. to check it, or to record a release).
    ///
    /// # Errors
    /// The algorithm's own; the run stops with it.
    #[inline(always)]
    fn after_step(&mut self, t: usize, theta: &[f64]) -> Result<()> {
        let _ = (t, theta);
        Ok(())
    }
}

/// The point a run returns, and what the engine accumulates for it.
#[derive(Debug, Clone)]
pub(crate) enum IterateMean {
    /// The last iterate `θ_{T+1}`.
    Last,
    /// The Polyak–Ruppert running mean of `θ_2 … θ_{t+1}` (`t` the step counter), updated after
    /// every step as `a ← fma(θ_{t+1} − a, 1/t, a)`: readable at any step.
    Polyak(Vec<f64>),
    /// `(1/k) Σ θ_s` over the iterates `θ_s` the steps started from (`k` of them, the last one
    /// included when the hook halted there), summed, divided at the end.
    Before {
        /// `Σ θ_s`.
        sum: Vec<f64>,
        /// `k`.
        count: usize,
    },
    /// `(1/k) Σ θ_{t+1}` over the steps `t ≥ from` (suffix averaging), summed, divided at the
    /// end.
    After {
        /// The first step whose result is averaged.
        from: usize,
        /// `Σ θ_{t+1}`.
        sum: Vec<f64>,
        /// `k`.
        count: usize,
    },
}

impl IterateMean {
    /// The Polyak–Ruppert running mean for `d` parameters.
    pub fn polyak(d: usize) -> Self {
        IterateMean::Polyak(vec![0.0; d])
    }
    /// The mean of the starting iterates for `d` parameters.
    pub fn before(d: usize) -> Self {
        IterateMean::Before {
            sum: vec![0.0; d],
            count: 0,
        }
    }
    /// The mean of the iterates after steps `t ≥ from`, for `d` parameters.
    pub fn after(d: usize, from: usize) -> Self {
        IterateMean::After {
            from,
            sum: vec![0.0; d],
            count: 0,
        }
    }
}

/// The state of a run: the iterate, its average and the step counter.
#[derive(Debug, Clone)]
pub(crate) struct Iterates {
    /// `θ_{t+1}`.
    pub theta: Vec<f64>,
    /// The average.
    pub mean: IterateMean,
    /// Steps taken so far (including those of earlier calls of [`drive`], and a caller's offset).
    pub t: usize,
}

impl Iterates {
    /// Continues from `theta` (already in the feasible set) after `t` steps.
    pub(crate) fn resume(theta: Vec<f64>, mean: IterateMean, t: usize) -> Self {
        Iterates { theta, mean, t }
    }
    /// `θ_1 = Π(θ_0)` (default 0, `d` parameters), no step taken.
    pub fn start<P: Projection>(d: usize, theta0: Option<&[f64]>, proj: &P, mean: IterateMean) -> Self {
        let mut theta = theta0.map_or_else(|| vec![0.0; d], <[f64]>::to_vec);
        proj.project(&mut theta);
        Iterates { theta, mean, t: 0 }
    }
    /// The point the run returns now: the last iterate, the running Polyak–Ruppert mean, or a
    /// summed mean divided by its count.
    pub fn output(&self) -> Cow<'_, [f64]> {
        match &self.mean {
            IterateMean::Last => Cow::Borrowed(&self.theta),
            IterateMean::Polyak(a) => Cow::Borrowed(a),
            IterateMean::Before { sum, count } | IterateMean::After { sum, count, .. } => {
                let k = *count as f64;
                Cow::Owned(sum.iter().map(|s| s / k).collect())
            }
        }
    }
    /// [`Iterates::output`] by value.
    pub(crate) fn into_output(self) -> Vec<f64> {
        match self.mean {
            IterateMean::Last => self.theta,
            IterateMean::Polyak(a) => a,
            IterateMean::Before { sum, count } | IterateMean::After { sum, count, .. } => {
                let k = count as f64;
                sum.into_iter().map(|s| s / k).collect()
            }
        }
    }
    /// [`Iterates::into_output`], or the iterate `θ_{t+1}` when the average has no term yet
    /// (a run interrupted before its first averaged step: the mean would be `0/0`).
    pub(crate) fn into_output_or_iterate(self) -> Vec<f64> {
        match &self.mean {
            IterateMean::Before { count: 0, .. } | IterateMean::After { count: 0, .. } => self.theta,
            _ => self.into_output(),
        }
    }
}

/// Runs at most `steps` steps of projected SGD from `it` (module docs): for each, the hook's
/// gradient at `θ_t`, `η_t` from `sched` at the global step `t = it.t + 1`, the hook's descent
/// `θ_{t+1} = Π(θ_t − η_t g_t)` onto `proj`, the averages. Returns [`Flow::Halt`] when the hook
/// halted (that step not taken, `it.t` not advanced), [`Flow::Continue`] after `steps` steps.
///
/// Inline, so that a caller inside a SIMD dispatch runs the whole loop there.
///
/// # Errors
/// The hook's errors; the state is left as it was when the error occurred.
#[inline(always)]
pub(crate) fn drive<P: Projection, H: StepHook<P>>(
    hook: &mut H,
    proj: &P,
    sched: &Schedule,
    it: &mut Iterates,
    steps: usize,
) -> Result<Flow> {
    // One loop per kind of average, so that the step loop carries no test of the kind.
    let Iterates { theta, mean, t } = it;
    match mean {
        IterateMean::Last => run(hook, proj, sched, theta, t, steps, |_| {}, |_, _| {}),
        IterateMean::Polyak(a) => run(
            hook,
            proj,
            sched,
            theta,
            t,
            steps,
            |_| {},
            |th, t| lanes::average(One, a, th, 1.0 / t as f64),
        ),
        IterateMean::Before { sum, count } => run(
            hook,
            proj,
            sched,
            theta,
            t,
            steps,
            |th| {
                sum.iter_mut().zip(th).for_each(|(a, v)| *a += v);
                *count += 1;
            },
            |_, _| {},
        ),
        IterateMean::After { from, sum, count } => {
            let from = *from;
            run(
                hook,
                proj,
                sched,
                theta,
                t,
                steps,
                |_| {},
                |th, t| {
                    if t >= from {
                        sum.iter_mut().zip(th).for_each(|(a, v)| *a += v);
                        *count += 1;
                    }
                },
            )
        }
    }
}

/// Steps between two checks of a caller's interrupt flag in [`drive_interruptible`]. Fewer
/// than the SGD solver's 4096: a step of the estimators driven this way costs at least `K`
/// candidate gradients or a batch of per-user gradients (LP-Normal-SGD with `K = 20` labels and
/// `d = 60`: about 0.6 ms), and a relaxed atomic load every 256 such steps costs nothing
/// measurable.
pub(crate) const STOP_CHECK: usize = 256;

/// How [`drive_interruptible`] ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Driven {
    /// As [`drive`] ended: all steps taken ([`Flow::Continue`]) or the hook halted.
    Done(Flow),
    /// The caller's flag was set: the run stopped at a check, between two steps (`it.t` steps
    /// taken).
    Interrupted,
}

/// [`drive`] in runs of at most [`STOP_CHECK`] steps, with a relaxed load of `interrupt`
/// before each run (the first one included, so a flag set before the call takes no step).
/// The state only lives in `it` and the hook, so the runs give the same bits as one call of
/// [`drive`].
///
/// # Errors
/// The hook's errors, as [`drive`].
pub(crate) fn drive_interruptible<P: Projection, H: StepHook<P>>(
    hook: &mut H,
    proj: &P,
    sched: &Schedule,
    it: &mut Iterates,
    steps: usize,
    interrupt: Option<&AtomicBool>,
) -> Result<Driven> {
    let Some(flag) = interrupt else {
        return drive(hook, proj, sched, it, steps).map(Driven::Done);
    };
    let mut done = 0;
    while done < steps {
        if flag.load(Ordering::Relaxed) {
            return Ok(Driven::Interrupted);
        }
        let run = STOP_CHECK.min(steps - done);
        if drive(hook, proj, sched, it, run)? == Flow::Halt {
            return Ok(Driven::Done(Flow::Halt));
        }
        done += run;
    }
    Ok(Driven::Done(Flow::Continue))
}

/// The step loop of [`drive`], with the average's updates before (`θ_t`) and after
/// (`θ_{t+1}`, `t`) each step.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
fn run<P: Projection, H: StepHook<P>>(
    hook: &mut H,
    proj: &P,
    sched: &Schedule,
    theta: &mut [f64],
    t: &mut usize,
    steps: usize,
    mut before: impl FnMut(&[f64]),
    mut after: impl FnMut(&[f64], usize),
) -> Result<Flow> {
    for _ in 0..steps {
        let next = *t + 1;
        before(theta);
        if hook.gradient(next, theta)? == Flow::Halt {
            return Ok(Flow::Halt);
        }
        let eta = sched.eta(next);
        hook.descend(-eta, theta, proj);
        *t = next;
        hook.after_step(next, theta)?;
        after(theta, next);
    }
    Ok(Flow::Continue)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `g_t = θ_t − c` (the gradient of `½‖θ − c‖²`), halting at step `halt`.
    struct Quadratic {
        c: Vec<f64>,
        g: Vec<f64>,
        halt: usize,
        seen: Vec<usize>,
    }

    impl<P: Projection> StepHook<P> for Quadratic {
        fn gradient(&mut self, t: usize, theta: &[f64]) -> Result<Flow> {
            self.seen.push(t);
            if t == self.halt {
                return Ok(Flow::Halt);
            }
            self.g = theta.iter().zip(&self.c).map(|(a, b)| a - b).collect();
            Ok(Flow::Continue)
        }
        fn add_to(&self, alpha: f64, theta: &mut [f64]) {
            theta.iter_mut().zip(&self.g).for_each(|(v, g)| *v += alpha * g);
        }
    }

    fn hook(halt: usize) -> Quadratic {
        Quadratic {
            c: vec![3.0, -1.0],
            g: vec![],
            halt,
            seen: vec![],
        }
    }

    #[test]
    fn drives_the_steps_with_the_schedule_the_projection_and_the_means() {
        let set = FeasibleSet::ball(2.0).unwrap();
        let sched = Schedule::Const(0.5);
        // By hand: θ ← Π(θ − ½(θ − c)) = Π((θ + c)/2) from θ_1 = Π(θ_0).
        let mut want = vec![vec![4.0f64, 0.0]];
        set.project(&mut want[0]);
        for _ in 0..4 {
            let p = want.last().unwrap();
            let mut q: Vec<f64> = p.iter().zip([3.0, -1.0]).map(|(a, c)| a - 0.5 * (a - c)).collect();
            set.project(&mut q);
            want.push(q);
        }
        for (mean, expect) in [
            (IterateMean::Last, want[4].clone()),
            (
                IterateMean::before(2),
                (0..2).map(|j| (0..4).map(|s| want[s][j]).sum::<f64>() / 4.0).collect(),
            ),
            (
                IterateMean::after(2, 3),
                (0..2).map(|j| (want[3][j] + want[4][j]) / 2.0).collect(),
            ),
        ] {
            let mut it = Iterates::start(2, Some(&[4.0, 0.0]), &set, mean);
            let mut h = hook(0);
            assert_eq!(drive(&mut h, &set, &sched, &mut it, 4).unwrap(), Flow::Continue);
            assert_eq!(it.t, 4);
            assert_eq!(h.seen, vec![1, 2, 3, 4]);
            let got = it.output().into_owned();
            for (a, b) in got.iter().zip(&expect) {
                assert!((a - b).abs() < 1e-15, "{got:?} vs {expect:?}");
            }
        }
        // A halt at step 3: two steps taken, θ_3 counted by the mean of the starting iterates.
        let mut it = Iterates::start(2, Some(&[4.0, 0.0]), &set, IterateMean::before(2));
        let mut h = hook(3);
        assert_eq!(drive(&mut h, &set, &sched, &mut it, 10).unwrap(), Flow::Halt);
        assert_eq!(it.t, 2);
        assert_eq!(it.theta, want[2]);
        let m = it.into_output();
        for j in 0..2 {
            assert!((m[j] - (want[0][j] + want[1][j] + want[2][j]) / 3.0).abs() < 1e-15);
        }
        // The counter continues across calls (and from an offset).
        let mut it = Iterates::resume(vec![0.0, 0.0], IterateMean::Last, 7);
        let mut h = hook(0);
        drive(&mut h, &set, &Schedule::InvT(1.0), &mut it, 2).unwrap();
        assert_eq!((it.t, h.seen), (9, vec![8, 9]));
    }

    /// The checked runs give the bits of one call of [`drive`]; a flag set before the call takes
    /// no step; a flag set during step `t` stops the run at the next multiple of
    /// [`STOP_CHECK`]; a halt is still a halt.
    #[test]
    fn interruptible_runs_stop_at_the_next_check_and_change_no_bit() {
        let set = FeasibleSet::ball(2.0).unwrap();
        let sched = Schedule::InvSqrtT { c: 0.5, g: 1.0 };
        let steps = 3 * STOP_CHECK + 17;
        let mut plain = Iterates::start(2, Some(&[4.0, 0.0]), &set, IterateMean::after(2, 100));
        assert_eq!(
            drive(&mut hook(0), &set, &sched, &mut plain, steps).unwrap(),
            Flow::Continue
        );
        let flag = AtomicBool::new(false);
        let mut it = Iterates::start(2, Some(&[4.0, 0.0]), &set, IterateMean::after(2, 100));
        let d = drive_interruptible(&mut hook(0), &set, &sched, &mut it, steps, Some(&flag)).unwrap();
        assert_eq!(d, Driven::Done(Flow::Continue));
        assert_eq!((it.t, &it.theta), (plain.t, &plain.theta));
        assert_eq!(it.into_output(), plain.into_output());

        flag.store(true, Ordering::Relaxed);
        let mut it = Iterates::start(2, Some(&[4.0, 0.0]), &set, IterateMean::before(2));
        let d = drive_interruptible(&mut hook(0), &set, &sched, &mut it, steps, Some(&flag)).unwrap();
        assert_eq!((d, it.t), (Driven::Interrupted, 0));
        // The mean has no term: the iterate θ_1 instead of 0/0.
        assert_eq!(it.into_output_or_iterate(), vec![2.0, 0.0]);

        /// Sets the flag while computing the gradient of step `at`.
        struct SetAt<'f> {
            inner: Quadratic,
            flag: &'f AtomicBool,
            at: usize,
        }
        impl<P: Projection> StepHook<P> for SetAt<'_> {
            fn gradient(&mut self, t: usize, theta: &[f64]) -> Result<Flow> {
                if t == self.at {
                    self.flag.store(true, Ordering::Relaxed);
                }
                <Quadratic as StepHook<P>>::gradient(&mut self.inner, t, theta)
            }
            fn add_to(&self, alpha: f64, theta: &mut [f64]) {
                <Quadratic as StepHook<P>>::add_to(&self.inner, alpha, theta)
            }
        }
        let flag = AtomicBool::new(false);
        let mut h = SetAt {
            inner: hook(0),
            flag: &flag,
            at: STOP_CHECK + 3,
        };
        let mut it = Iterates::start(2, Some(&[4.0, 0.0]), &set, IterateMean::Last);
        let d = drive_interruptible(&mut h, &set, &sched, &mut it, steps, Some(&flag)).unwrap();
        assert_eq!((d, it.t), (Driven::Interrupted, 2 * STOP_CHECK));

        let mut it = Iterates::start(2, Some(&[4.0, 0.0]), &set, IterateMean::Last);
        let flag = AtomicBool::new(false);
        let d = drive_interruptible(&mut hook(STOP_CHECK + 5), &set, &sched, &mut it, steps, Some(&flag)).unwrap();
        assert_eq!((d, it.t), (Driven::Done(Flow::Halt), STOP_CHECK + 4));
    }
}
