//! AUP-RLHF's parts (Zhang et al. (2025), Alg. 1–2 and Thm 4): the theory preset, the options,
//! the phase sizes, the concentration test and keep probabilities of the outlier-robust mean, and
//! one run of AdapUserPriv-SGD on the SGD engine ([`crate::solver::sgd::engine`]).

use super::batch::{sample_users, UserSampler};
use super::check_positive;
use super::source::UserGradients;
use crate::data::UserIndex;
use crate::error::{check_delta, check_eps, Error, Result};
use crate::feasible::FeasibleSet;
use crate::mechanism::{uniform_f64, AboveThreshold, AtCalibration};
use crate::privacy::rdp::{Accountant, EpsilonReport};
use crate::privacy::{gaussian_vector, NoiseRng};
use crate::solver::sgd::engine::{self, Driven, Flow, IterateMean, Iterates, StepHook};
use crate::solver::sgd::Schedule;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The hyper-parameter formulas of Zhang et al. (2025), Thm 4 (the "theory preset"); every log
/// is natural (the paper does not state the base). They are **impractical**: `τ` exceeds the
/// trivial gradient diameter `4L` unless `m` is astronomically large, and `T ~ m²n²`.
pub mod theory {
    /// Number of phases `k = ⌈ln ln(mn)⌉`, at least 1.
    pub fn phases(n: usize, m: usize) -> usize {
        let v = ((m as f64 * n as f64).ln().ln()).ceil();
        if v.is_finite() && v >= 1.0 {
            v as usize
        } else {
            1
        }
    }
    /// `τ_i = 4L ln(n_i d m e^ε T_i/δ)/√m` (for example, n_i = 2500, m = 10, d = 768,
    /// T = 2500, ε = 3, δ = 1e-5, L = 1 gives 49.5).
    pub fn tau(n_i: usize, d: usize, m: usize, eps: f64, steps: u64, delta: f64, l: f64) -> f64 {
        let (n, d, m, t) = (n_i as f64, d as f64, m as f64, steps as f64);
        4.0 * l * (n.ln() + d.ln() + m.ln() + eps + t.ln() - delta.ln()) / m.sqrt()
    }
    /// `η_i = (B/(4L)) min{√m n_i ε/(T_i √d ln(m n_i d/δ)), T_i^{−3/4}, √(n_i m)/T_i}`.
    #[allow(clippy::too_many_arguments)]
    pub fn step_size(b: f64, l: f64, n_i: usize, m: usize, d: usize, eps: f64, delta: f64, steps: u64) -> f64 {
        let (n, m, d, t) = (n_i as f64, m as f64, d as f64, steps as f64);
        let a = m.sqrt() * n * eps / (t * d.sqrt() * (m * n * d / delta).ln());
        (b / (4.0 * l)) * a.min(t.powf(-0.75)).min((n * m).sqrt() / t)
    }
    /// `T_i = m² n_i² + m n_i √d` (the order of Thm 4 with constant 1).
    pub fn steps(n_i: usize, m: usize, d: usize) -> f64 {
        let (n, m) = (n_i as f64, m as f64);
        m * m * n * n + m * n * (d as f64).sqrt()
    }
    /// The per-coordinate noise standard deviation of the mean oracle,
    /// `σ · 2√2 τ √(ln(e^ε T/δ)) / ñ` (Alg. 2; for example τ = 49.5, ε = 3, T = 2500,
    /// δ = 1e-5 gives 661·σ/ñ).
    pub fn oracle_noise_std(sigma: f64, tau: f64, eps: f64, steps: u64, delta: f64, batch: f64) -> f64 {
        sigma * 2.0 * std::f64::consts::SQRT_2 * tau * (eps + (steps as f64).ln() - delta.ln()).sqrt() / batch
    }
}

/// The user batch of each AdapUserPriv-SGD phase.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum AupBatch {
    /// All users of the phase every step (`ñ_i = n_i`, `q = 1`; Thm 4's setting).
    Full,
    /// `ñ` expected users per step.
    Users(f64),
}

/// Options of [`aup_rlhf`](super::aup_rlhf) (Zhang et al. (2025), Alg. 1–2 and Thm 4).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AupOptions {
    /// The budget `ε` of each phase (phases use disjoint users).
    pub eps: f64,
    /// `δ`.
    pub delta: f64,
    /// The feature bound `L` (`‖φ‖ ≤ L`, so `‖x‖ ≤ 2L`; checked on every row).
    pub feature_bound: f64,
    /// Number of phases `k` (default 1, as in the paper's experiments).
    pub phases: usize,
    /// Use all users: the `n/2^k` users the phase sizes `n_i = ⌊n/2^{k+1−i}⌋` leave out join the
    /// last phase (default `None`: true for `k = 1`, false otherwise; with `k = 1` the paper's
    /// sizes leave half of the users unused).
    pub use_all_users: Option<bool>,
    /// Batch (default [`AupBatch::Full`]).
    pub batch: AupBatch,
    /// Steps per phase `T` (default 200).
    pub steps: u64,
    /// Step size `η` (default 0.5).
    pub step_size: f64,
    /// Radius `τ` of the concentration test (default `None`: `min(τ_theory, 4L)`:
    /// `4L` is the trivial diameter of the user gradients, so the test then passes by
    /// construction, privacy-neutrally). The paper's experiments used an unreported tuned τ.
    pub tau: Option<f64>,
    /// User sampler (default Poisson).
    pub sampler: UserSampler,
    /// AboveThreshold noise (default corrected, Δ = 2).
    pub at_calibration: AtCalibration,
    /// Use the realised batch size `|U_t|` instead of the nominal `ñ` in the thresholds and the
    /// noise (default false, paper-faithful; the realised size leaks nothing under label DP but
    /// departs from the analysis).
    pub realized_batch: bool,
    /// Projection after each step (default none, as in the paper's Alg. 2; its analysis assumes
    /// `Θ_B`).
    pub set: FeasibleSet,
    /// Start `θ_0` (default 0).
    pub theta0: Option<Vec<f64>>,
    /// The accountant of the Gaussian part (default: proven replace relation).
    pub accountant: Accountant,
    /// A fixed noise multiplier for the Gaussian part instead of the calibration to
    /// `(ε/2, δ/2)` (the guarantee then reports the accountant's ε for it).
    pub noise_multiplier: Option<f64>,
    /// The caller's interrupt flag (default `None`), as
    /// [`Control::interrupt`](crate::solver::Control::interrupt) of the solvers: a relaxed load
    /// before every phase's first step and every 256 steps; once set, the run stops
    /// between two steps and the fit is the average so far (the iterate if no step was taken),
    /// [`Termination::Interrupted`](crate::solver::Termination::Interrupted), and **no**
    /// guarantee.
    pub interrupt: Option<Arc<AtomicBool>>,
}

impl AupOptions {
    /// Practical defaults (documented on each field): one phase on all users, full batch,
    /// `T = 200`, `η = 0.5`, `τ = min(τ_theory, 4L)`, corrected AboveThreshold, Poisson.
    pub fn new(eps: f64, delta: f64, feature_bound: f64) -> Self {
        AupOptions {
            eps,
            delta,
            feature_bound,
            phases: 1,
            use_all_users: None,
            batch: AupBatch::Full,
            steps: 200,
            step_size: 0.5,
            tau: None,
            sampler: UserSampler::Poisson,
            at_calibration: AtCalibration::Corrected,
            realized_batch: false,
            set: FeasibleSet::Unconstrained,
            theta0: None,
            accountant: Accountant::default(),
            noise_multiplier: None,
            interrupt: None,
        }
    }
}

/// The user ranges of the phases: `n_i = ⌊n/2^{k+1−i}⌋`, `i = 1..k`, in user order, the
/// remainder joining the last phase when `use_all_users` (Zhang et al. (2025), Alg. 1).
pub(crate) fn phase_sizes(n: usize, k: usize, use_all_users: bool) -> Vec<usize> {
    let mut sizes: Vec<usize> = (1..=k).map(|i| n >> (k + 1 - i).min(63)).collect();
    if use_all_users {
        let used: usize = sizes.iter().sum();
        if let Some(last) = sizes.last_mut() {
            *last += n - used;
        }
    }
    sizes
}

/// The concentration score and neighbour counts of AdapUserPriv-SGD (Zhang et al. (2025),
/// Alg. 2 steps 6–9) for the `k = grads.len()/d` user gradients `g_a` (row-major):
///
/// `s = (1/max(ñ, k)) Σ_{a,b} 1(‖g_a − g_b‖ ≤ τ)` (ordered pairs, `a = b` included) and
/// `f_a = Σ_b 1(‖g_b − g_a‖ ≤ 2τ)`.
///
/// Changing one gradient flips at most `2(k−1)` ordered-pair indicators, so `s` has sensitivity
/// `2(k−1)/max(ñ, k) < 2` (and the bound is attained); the paper normalises by `ñ` alone, which
/// exceeds 2 when a Poisson batch has `k > ñ + 1` users — hence `max(ñ, k)`.
pub fn concentration(grads: &[f64], d: usize, tau: f64, nb: f64) -> (f64, Vec<usize>) {
    let k = grads.len() / d;
    let (t1, t2) = (tau * tau, 4.0 * tau * tau);
    let mut within = 0usize;
    let mut f = vec![0usize; k];
    for a in 0..k {
        for b in a..k {
            let d2: f64 = grads[a * d..(a + 1) * d]
                .iter()
                .zip(&grads[b * d..(b + 1) * d])
                .map(|(x, y)| (x - y) * (x - y))
                .sum();
            if d2 <= t1 {
                within += if a == b { 1 } else { 2 };
            }
            if d2 <= t2 {
                f[a] += 1;
                if a != b {
                    f[b] += 1;
                }
            }
        }
    }
    (within as f64 / nb.max(k as f64), f)
}

/// The keep probability of a user with `f` neighbours within `2τ` (Zhang et al. (2025),
/// Alg. 2 step 10): `clip((f − ñ/2)/(ñ/6), 0, 1)` — 0 below `ñ/2`, 1 from `2ñ/3` (for ñ = 60:
/// 0 at f = 30, 0.9 at 39, 1 at 40).
pub fn keep_probability(f: usize, nb: f64) -> f64 {
    ((f as f64 - nb / 2.0) / (nb / 6.0)).clamp(0.0, 1.0)
}

/// Checks the options of [`aup_rlhf`](super::aup_rlhf), every row against `‖x‖ ≤ 2L` and the
/// phases against the users, and returns the phase sizes ([`phase_sizes`]).
///
/// # Errors
/// As [`aup_rlhf`](super::aup_rlhf).
pub(super) fn checked_phase_sizes<S: UserGradients>(
    src: &S,
    users: &UserIndex,
    opts: &AupOptions,
) -> Result<Vec<usize>> {
    check_eps(opts.eps)?;
    check_delta(opts.delta)?;
    crate::privacy::check_feature_bound(opts.feature_bound)?;
    users.check_rows(src.samples())?;
    if opts.phases == 0 {
        return Err(Error::param("phases", "must be >= 1, got 0"));
    }
    if opts.steps == 0 {
        return Err(Error::param("steps", "must be >= 1, got 0"));
    }
    check_positive("step-size", opts.step_size)?;
    if let Some(t) = opts.tau {
        check_positive("tau", t)?;
    }
    if let AupBatch::Users(b) = opts.batch {
        check_positive("batch-users", b)?;
    }
    if let Some(s) = opts.noise_multiplier {
        crate::privacy::rdp::check_noise_multiplier(s)?;
    }
    // Rows must respect ‖x‖ ≤ 2L (K-wise: ‖φ_k − φ_l‖ ≤ 2L); the calibration of the test and
    // the noise relies on it.
    src.check_feature_bound(opts.feature_bound)?;
    let n = users.n_users();
    // The first phase has ⌊n/2^k⌋ users: refuse an empty one before allocating k phases.
    if opts.phases >= usize::BITS as usize || n >> opts.phases == 0 {
        return Err(Error::Shape(format!(
            "phase 1 of {} has no users (n = {n} users: at most log2(n) = {} phases)",
            opts.phases,
            n.max(1).ilog2()
        )));
    }
    let all = opts.use_all_users.unwrap_or(opts.phases == 1);
    let sizes = phase_sizes(n, opts.phases, all);
    if let Some(i) = sizes.iter().position(|&s| s == 0) {
        return Err(Error::Shape(format!(
            "phase {} of {} has no users (n = {n} users)",
            i + 1,
            opts.phases
        )));
    }
    Ok(sizes)
}

/// One run of AdapUserPriv-SGD on the users `pool` (Zhang et al. (2025), Alg. 2).
pub(super) struct PhaseOut {
    pub theta: Vec<f64>,
    pub steps: u64,
    pub halted_at: Option<u64>,
    /// Whether the caller's flag stopped the run (`steps` taken).
    pub interrupted: bool,
    pub sigma: f64,
    pub noise_std: f64,
    pub report: EpsilonReport,
    pub at_cost: f64,
    pub tau: f64,
}

/// The step hook of AdapUserPriv-SGD (Alg. 2, steps 4–12): the users' averaged gradients, the
/// concentration test (halting on `⊥`), the outlier-robust mean and its Gaussian noise; the
/// engine takes `θ_{t+1} = Π(θ_t − η(mean + noise))`.
struct AupStep<'o, 'r, S> {
    src: &'o mut S,
    users: &'o UserIndex,
    pool: &'o [usize],
    opts: &'o AupOptions,
    /// The nominal batch `ñ`.
    batch: f64,
    tau: f64,
    sigma: f64,
    at: AboveThreshold,
    rng: &'r mut NoiseRng,
    mean: Vec<f64>,
    noise: Vec<f64>,
}

impl<S: UserGradients> StepHook<FeasibleSet> for AupStep<'_, '_, S> {
    /// Draw order: the sampling uniforms, the AboveThreshold query noise, one keep coin per
    /// sampled user, then `d` normals.
    fn gradient(&mut self, _t: usize, theta: &[f64]) -> Result<Flow> {
        let (d, opts) = (self.src.dim(), self.opts);
        let u_t = sample_users(self.pool, self.batch, opts.sampler, self.rng);
        let k = u_t.len();
        let nb = if opts.realized_batch {
            k.max(1) as f64
        } else {
            self.batch
        };
        let mut grads = vec![0.0; k * d];
        for (a, &u) in u_t.iter().enumerate() {
            let rows: Vec<usize> = self.users.rows(u).collect();
            self.src.user_gradient(&rows, theta, &mut grads[a * d..(a + 1) * d]);
        }
        let (score, f) = concentration(&grads, d, self.tau, nb);
        if !self.at.query(score - 0.8 * nb, self.rng)? {
            return Ok(Flow::Halt);
        }
        let mut mean = vec![0.0; d];
        let mut kept = 0usize;
        for a in 0..k {
            if uniform_f64(self.rng) < keep_probability(f[a], nb) {
                kept += 1;
                mean.iter_mut()
                    .zip(&grads[a * d..(a + 1) * d])
                    .for_each(|(m, g)| *m += g);
            }
        }
        if kept > 0 {
            mean.iter_mut().for_each(|m| *m /= kept as f64);
        }
        self.mean = mean;
        let std = theory::oracle_noise_std(self.sigma, self.tau, opts.eps, opts.steps, opts.delta, nb);
        self.noise = gaussian_vector(d, std, self.rng);
        Ok(Flow::Continue)
    }

    /// `θ_j ← θ_j + α(mean_j + z_j)`.
    fn add_to(&self, alpha: f64, theta: &mut [f64]) {
        for (j, th) in theta.iter_mut().enumerate() {
            *th += alpha * (self.mean[j] + self.noise[j]);
        }
    }
}

/// AdapUserPriv-SGD (Alg. 2) with the per-user gradients `src` on the users `pool` from
/// `theta0`, on the SGD engine; returns the average of the iterates the steps started from
/// (`θ_1 = θ_0`, up to the halting step). `diameter` is the bound on `‖g_u − g_v‖` the default
/// `τ = min(τ_theory, diameter)` uses.
#[allow(clippy::too_many_arguments)]
pub(super) fn adap_user_priv_sgd<S: UserGradients>(
    src: &mut S,
    diameter: f64,
    users: &UserIndex,
    pool: &[usize],
    theta0: Vec<f64>,
    opts: &AupOptions,
    rng: &mut NoiseRng,
) -> Result<PhaseOut> {
    let d = src.dim();
    let n_i = pool.len();
    let batch = match opts.batch {
        AupBatch::Full => n_i as f64,
        AupBatch::Users(b) => b.min(n_i as f64),
    };
    let q = batch / n_i as f64;
    let m_min = pool.iter().map(|&u| users.count(u)).min().unwrap_or(1);
    let tau = match opts.tau {
        Some(t) => t,
        None => theory::tau(n_i, d, m_min, opts.eps, opts.steps, opts.delta, opts.feature_bound).min(diameter),
    };
    // σ ← PrivacyAccount(ε/2, δ/2, n, ñ, T).
    let acc = &opts.accountant;
    let sigma = match opts.noise_multiplier {
        Some(s) => s,
        None => {
            acc.calibrate_sigma(q, opts.steps, 0.5 * opts.eps, 0.5 * opts.delta)?
                .noise_multiplier
        }
    };
    let report = acc.epsilon(q, sigma, opts.steps, 0.5 * opts.delta)?;
    // One AboveThreshold instance per run, ε_AT = ε/2, sensitivity 2. The query is
    // s_t − (4/5)·ñ_t against threshold 0: with the nominal ñ this is the paper's test of s_t
    // against 4ñ/5; with the realised batch the threshold moves with |U_t| (public under label
    // DP: the sampling coins do not depend on labels).
    let at = AboveThreshold::new(0.0, 0.5 * opts.eps, 2.0, opts.at_calibration, rng)?;
    // The noise of the mean oracle: one formula (theory::oracle_noise_std) for the reported and
    // the added noise.
    let nominal_std = theory::oracle_noise_std(sigma, tau, opts.eps, opts.steps, opts.delta, batch);
    let steps = usize::try_from(opts.steps)
        .map_err(|_| Error::param("steps", format!("{} does not fit in usize", opts.steps)))?;
    let mut hook = AupStep {
        src,
        users,
        pool,
        opts,
        batch,
        tau,
        sigma,
        at,
        rng,
        mean: vec![0.0; d],
        noise: vec![0.0; d],
    };
    let mut it = Iterates::resume(theta0, IterateMean::before(d), 0);
    let sched = Schedule::Const(opts.step_size);
    let flag = opts.interrupt.as_deref();
    let driven = engine::drive_interruptible(&mut hook, &opts.set, &sched, &mut it, steps, flag)?;
    // A halt at step t counts that step: θ_t is in the average.
    let (steps, halted_at) = match driven {
        Driven::Done(Flow::Halt) => (it.t as u64 + 1, Some(it.t as u64 + 1)),
        Driven::Done(Flow::Continue) | Driven::Interrupted => (it.t as u64, None),
    };
    let interrupted = driven == Driven::Interrupted;
    Ok(PhaseOut {
        theta: if interrupted {
            it.into_output_or_iterate()
        } else {
            it.into_output()
        },
        steps,
        halted_at,
        interrupted,
        sigma,
        noise_std: nominal_std,
        report,
        at_cost: hook.at.privacy_cost(),
        tau,
    })
}

#[cfg(test)]
mod tests {
    use super::super::aup_rlhf_with;
    use super::super::batch::tests::{hex, HandWritten};
    use super::*;
    use crate::mechanism::simulation_rng;
    use crate::sim::{btl_users_equal, theta_star, UserFeatures};

    /// With the hand-written derivative, AUP-RLHF on the engine gives the bits its own loop gave
    /// on the cases of `tests/library/sgd_engine_bits.rs` (values recorded from that loop),
    /// including a halt at step 15.
    #[test]
    fn the_engine_reproduces_the_bits_of_the_hand_written_loop() {
        let th = theta_star(3, 1.0, true, &mut simulation_rng(71)).unwrap();
        let ua = btl_users_equal(
            200,
            5,
            &th,
            UserFeatures::Sphere { radius: 1.0 },
            &mut simulation_rng(72),
        )
        .unwrap();
        let av = ua.data.view().unwrap();
        let aup = |o: &AupOptions, seed: u64| {
            let fit = aup_rlhf_with(&HandWritten, av, &ua.users, o, &mut NoiseRng::seeded(seed)).unwrap();
            hex(&fit.theta)
        };
        let mut o = AupOptions::new(4.0, 1e-5, 0.5);
        o.steps = 30;
        o.set = FeasibleSet::theta_b(1.0).unwrap();
        assert_eq!(aup(&o, 81), "bfc83dbaf99e5d97 3fb987c324325df7 3fb6f3b2cf0a5d37");
        let mut o2 = o.clone();
        o2.phases = 2;
        assert_eq!(aup(&o2, 82), "bfcdd7aa5a06ba94 3fd00cd149b91fc3 bf920fc1cb5c2793");
        let mut o3 = o.clone();
        o3.batch = AupBatch::Users(150.0);
        o3.realized_batch = true;
        o3.theta0 = Some(vec![0.1, 0.2, -0.3]);
        assert_eq!(aup(&o3, 83), "bfb967aa80573cb6 3fc1a680bcafdaac bfa3caadf210f139");
        let mut o4 = o.clone();
        o4.batch = AupBatch::Users(120.0);
        o4.sampler = UserSampler::FixedSize;
        o4.tau = Some(1.5);
        o4.set = FeasibleSet::Unconstrained;
        assert_eq!(aup(&o4, 84), "400d45c101184b9b 3fe9a411db957e22 3fd2ea2b47be3a00");
        let mut o5 = o.clone();
        o5.tau = Some(0.4);
        o5.steps = 50;
        assert_eq!(aup(&o5, 85), "3fa34ab769f58206 3fda85e017dfdc81 bfdcef37051e8cc1");
    }

    #[test]
    fn theory_preset_matches_reference_examples() {
        // Thm 4's preset at practical sizes, L = 1: τ = 49.5 and std 661 σ/ñ; τ = 25.5 and 375 σ/ñ;
        // τ = 2.07 and 30 σ/ñ.
        let t1 = theory::tau(2500, 768, 10, 3.0, 2500, 1e-5, 1.0);
        assert!((t1 - 49.5).abs() < 0.05, "{t1}");
        assert!((theory::oracle_noise_std(1.0, t1, 3.0, 2500, 1e-5, 1.0) - 661.0).abs() < 1.0);
        let t2 = theory::tau(1800, 768, 50, 8.0, 1800, 1e-5, 1.0);
        assert!((t2 - 25.5).abs() < 0.05, "{t2}");
        assert!((theory::oracle_noise_std(1.0, t2, 8.0, 1800, 1e-5, 1.0) - 375.0).abs() < 1.0);
        let t3 = theory::tau(1_000_000, 10, 10_000, 1.0, 1_000_000, 1e-5, 1.0);
        assert!((t3 - 2.07).abs() < 0.005, "{t3}");
        assert!((theory::oracle_noise_std(1.0, t3, 1.0, 1_000_000, 1e-5, 1.0) - 30.0).abs() < 0.5);
        assert_eq!(theory::phases(2500, 10), 3); // ⌈ln ln 25000⌉ = ⌈2.31⌉
        assert!(theory::steps(100, 10, 4) > 1e6);
        let eta = theory::step_size(1.0, 1.0, 1000, 10, 5, 1.0, 1e-5, 100);
        assert!((eta - 0.25 * 100f64.powf(-0.75)).abs() < 1e-15, "{eta}");
    }

    #[test]
    fn phase_sizes_follow_the_paper() {
        assert_eq!(phase_sizes(1000, 1, false), vec![500]);
        assert_eq!(phase_sizes(1000, 1, true), vec![1000]);
        assert_eq!(phase_sizes(1000, 3, false), vec![125, 250, 500]);
        assert_eq!(phase_sizes(1000, 3, true), vec![125, 250, 625]);
        assert_eq!(phase_sizes(7, 3, false), vec![0, 1, 3]);
    }

    #[test]
    fn keep_probability_of_the_spec() {
        // ñ = 60: 0 at f = 30, 0.9 at f = 39, 1 at f = 40.
        assert_eq!(keep_probability(30, 60.0), 0.0);
        assert_eq!(keep_probability(12, 60.0), 0.0);
        assert!((keep_probability(39, 60.0) - 0.9).abs() < 1e-15);
        assert_eq!(keep_probability(40, 60.0), 1.0);
        assert_eq!(keep_probability(60, 60.0), 1.0);
    }

    /// Over random trials, replacing one gradient changes the score by at most
    /// `2(ñ−1)/ñ`, and the bound is attained.
    #[test]
    fn concentration_score_sensitivity() {
        use crate::mechanism::simulation_rng;
        use rand_distr::{Distribution, StandardNormal};
        let mut rng = simulation_rng(8);
        let (k, d, tau) = (12usize, 3usize, 1.0);
        let bound = 2.0 * (k as f64 - 1.0) / k as f64;
        let mut worst = 0.0f64;
        for trial in 0..3000 {
            let spread = 0.2 + (trial % 7) as f64 * 0.3;
            let mut g: Vec<f64> = (0..k * d)
                .map(|_| {
                    let z: f64 = StandardNormal.sample(&mut rng);
                    spread * z
                })
                .collect();
            let (s0, _) = concentration(&g, d, tau, k as f64);
            let a = trial % k;
            // Replace one user's gradient: sometimes far away, sometimes onto another user.
            for j in 0..d {
                g[a * d + j] = if trial % 3 == 0 {
                    100.0
                } else {
                    g[((a + 1) % k) * d + j]
                };
            }
            let (s1, _) = concentration(&g, d, tau, k as f64);
            worst = worst.max((s1 - s0).abs());
        }
        assert!(worst <= bound + 1e-12, "{worst} > {bound}");
        // Attained: all within τ, then one user moved far away.
        let g = vec![0.0; k * d];
        let mut h = g.clone();
        h[0] = 100.0;
        let (s0, f0) = concentration(&g, d, tau, k as f64);
        let (s1, _) = concentration(&h, d, tau, k as f64);
        assert_eq!(s0, k as f64);
        assert_eq!(f0, vec![k; k]);
        assert!(((s0 - s1) - bound).abs() < 1e-12);
        assert!(worst >= bound - 1e-12, "random trials reached {worst}");
        // A realised batch above ñ: normalising by max(ñ, k) keeps the sensitivity below 2.
        let (s_big, _) = concentration(&g, d, tau, 6.0);
        let (s_big1, _) = concentration(&h, d, tau, 6.0);
        assert!((s_big - s_big1).abs() < 2.0);
    }
}
