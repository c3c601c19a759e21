//! Hostile input: extreme but legal data through every exact solver (and SGD), generated from a
//! fixed seed in classes — feature magnitudes from 1e-300 to 1e300, subnormals, one huge row,
//! mixed column scales 1e-8..1e8, degenerate shapes, extreme weights and radii, every loss and
//! feasible set. For every case and solver:
//!
//! * **no panic** (each fit runs under `catch_unwind`);
//! * **no false certificate**: a converged report's relative KKT residual, recomputed
//!   independently of the solvers (`common::independent_kkt`: gradient in doubled precision,
//!   term magnitudes by a plain loop), is within the tolerance (`≤ 10·tol`, for the rounding of
//!   the recomputation); `certified_global` only with convergence; the point is feasible;
//! * **the right answer**: where two solvers both certify a global minimiser of a convex
//!   problem, their scores `Xθ` agree (the optimal scores of a strictly convex loss are unique,
//!   even where `θ` is not) to `1e-6` relative;
//! * **scale covariance**: `θ(sX) = θ(X)/s` (with `B → B/s`) for `s` from `1e-250` to `1e250`,
//!   to `1e-9` relative, whenever both fits are certified; and a fit refused at one scale is
//!   not certified at another with a different answer.
//!
//! `cargo test --release --test library hostile -- --nocapture` prints the number of cases per class
//! and how they ended; with `HOSTILE_VERBOSE=1` also every exact fit that did not converge.

use crate::common;
use common::independent_kkt;
use privpref::data::PairwiseView;
use privpref::estimator::{fit, FitOptions, Solver, SolverKind};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::objective::Objective;
use privpref::solver::sgd::{Averaging, SgdOptions, StepRule};
use privpref::solver::SolveReport;
use privpref::with_loss;
use rand::{Rng, RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Cases per class.
const CASES: usize = 40;
/// A recomputed relative KKT residual above `SLACK·tol` at a converged point is a false
/// certificate.
const SLACK: f64 = 10.0;

/// One generated problem.
#[derive(Debug, Clone)]
struct Case {
    class: &'static str,
    x: Vec<f64>,
    y: Vec<u8>,
    w: Option<Vec<f64>>,
    n: usize,
    d: usize,
    loss: LossSpec,
    set: FeasibleSet,
    ridge: f64,
}

impl Case {
    fn describe(&self) -> String {
        let maxabs = self.x.iter().fold(0.0f64, |m, v| m.max(v.abs()));
        format!(
            "[{}: n={}, d={}, {:?}, {:?}, ridge {}, max|x| {:.1e}, weights {}]",
            self.class,
            self.n,
            self.d,
            self.loss,
            self.set,
            self.ridge,
            maxabs,
            self.w.is_some()
        )
    }
    /// The same problem with `X → sX` and the radius `B → B/s` (the ridge `β → β s²` keeps the
    /// objective the same function of `Xθ`).
    fn scaled(&self, s: f64) -> Case {
        let mut c = self.clone();
        c.x.iter_mut().for_each(|v| *v *= s);
        c.set = match self.set {
            FeasibleSet::ThetaB { radius } => FeasibleSet::theta_b(radius.get() / s).unwrap(),
            FeasibleSet::Ball { radius } => FeasibleSet::ball(radius.get() / s).unwrap(),
            other => other,
        };
        c.ridge = self.ridge * s * s;
        c
    }
}

fn normal<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    // Box–Muller (enough for test data).
    let u: f64 = rng.random::<f64>().max(1e-300);
    let v: f64 = rng.random();
    (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
}

/// BTL-like data: features N(0, 1), labels from a random θ with ‖θ‖ = 1 (and some noise).
fn base<R: Rng + ?Sized>(rng: &mut R, n: usize, d: usize) -> (Vec<f64>, Vec<u8>) {
    let th: Vec<f64> = (0..d).map(|_| normal(rng)).collect();
    let nt = th.iter().map(|v| v * v).sum::<f64>().sqrt().max(1e-12);
    let x: Vec<f64> = (0..n * d).map(|_| normal(rng)).collect();
    let y = (0..n)
        .map(|i| {
            let t: f64 = x[i * d..(i + 1) * d].iter().zip(&th).map(|(a, b)| a * b / nt).sum();
            u8::from(rng.random::<f64>() < 1.0 / (1.0 + (-t).exp()))
        })
        .collect();
    (x, y)
}

fn pick_loss<R: Rng + ?Sized>(rng: &mut R) -> LossSpec {
    match rng.random_range(0..4) {
        0 => LossSpec::Mle,
        1 => LossSpec::Probit,
        2 => LossSpec::DebiasedRr {
            eps: [0.1, 1.0, 5.0][rng.random_range(0..3)],
        },
        _ => LossSpec::MleRr {
            eps: [0.5, 2.0][rng.random_range(0..2)],
        },
    }
}

fn pick_set<R: Rng + ?Sized>(rng: &mut R, loss: LossSpec, radius: f64) -> FeasibleSet {
    // Debiased RR is unbounded below without a ball.
    let k = if matches!(loss, LossSpec::DebiasedRr { .. }) {
        rng.random_range(0..2)
    } else {
        rng.random_range(0..4)
    };
    match k {
        0 => FeasibleSet::theta_b(radius).unwrap(),
        1 => FeasibleSet::ball(radius).unwrap(),
        2 => FeasibleSet::SumZero,
        _ => FeasibleSet::Unconstrained,
    }
}

/// One case of `class`.
fn generate(class: &'static str, rng: &mut Xoshiro256PlusPlus) -> Case {
    let n = rng.random_range(40..400);
    let d = rng.random_range(2..7);
    let (mut x, y) = base(rng, n, d);
    let loss = pick_loss(rng);
    let r0 = [0.5, 2.0, 20.0][rng.random_range(0..3)];
    let mut set = pick_set(rng, loss, r0);
    let mut w = None;
    let mut ridge = 0.0;
    match class {
        "uniform magnitude" => {
            let s = 10f64.powf(rng.random_range(-300.0..300.0));
            x.iter_mut().for_each(|v| *v *= s);
            set = match set {
                FeasibleSet::ThetaB { radius } => FeasibleSet::theta_b(radius.get() / s).unwrap(),
                FeasibleSet::Ball { radius } => FeasibleSet::ball(radius.get() / s).unwrap(),
                other => other,
            };
        }
        "subnormals" => {
            for v in x.iter_mut() {
                if rng.random::<f64>() < 0.3 {
                    *v = f64::from_bits(rng.random_range(1..(1u64 << 52))) * if rng.random() { 1.0 } else { -1.0 };
                }
            }
        }
        "one huge row" => {
            let i = rng.random_range(0..n);
            let big = 10f64.powf(rng.random_range(2.0..300.0));
            if rng.random() {
                let j = rng.random_range(0..d);
                x[i * d + j] = big;
            } else {
                x[i * d..(i + 1) * d].iter_mut().for_each(|v| *v *= big);
            }
        }
        "mixed column scales" => {
            let s: Vec<f64> = (0..d).map(|_| 10f64.powf(rng.random_range(-8.0..8.0))).collect();
            for i in 0..n {
                for j in 0..d {
                    x[i * d + j] *= s[j];
                }
            }
        }
        "degenerate shapes" => {
            let n2 = rng.random_range(1..6);
            let d2 = rng.random_range(1..5);
            let (x2, mut y2) = base(rng, n2, d2);
            let mut x2 = x2;
            match rng.random_range(0..5) {
                0 => x2.iter_mut().for_each(|v| *v = 0.0),
                1 => y2.iter_mut().for_each(|v| *v = 1),
                2 => {
                    let c = x2[0];
                    x2.iter_mut().for_each(|v| *v = c);
                }
                3 => {
                    for i in 0..n2 {
                        x2[i * d2] = 0.0;
                    }
                }
                _ => {}
            }
            let r2 = [1e-300, 1.0, 1e300][rng.random_range(0..3)];
            return Case {
                class,
                x: x2,
                y: y2,
                w: None,
                n: n2,
                d: d2,
                loss,
                set: pick_set(rng, loss, r2),
                ridge: [0.0, 0.0, 1.0][rng.random_range(0..3)],
            };
        }
        "extreme weights" => {
            let mut ws: Vec<f64> = (0..n)
                .map(|_| match rng.random_range(0..4) {
                    0 => 0.0,
                    1 => 10f64.powf(rng.random_range(-300.0..-100.0)),
                    2 => 10f64.powf(rng.random_range(100.0..300.0)),
                    _ => rng.random::<f64>(),
                })
                .collect();
            ws[0] = 1.0;
            w = Some(ws);
        }
        "extreme radii and ridge" => {
            let r = 10f64.powf(rng.random_range(-300.0..300.0));
            set = pick_set(rng, loss, r);
            ridge = [0.0, 1e-300, 1e300, 1.0][rng.random_range(0..4)];
        }
        other => unreachable!("{other}"),
    }
    Case {
        class,
        x,
        y,
        w,
        n,
        d,
        loss,
        set,
        ridge,
    }
}

/// How one fit ended.
#[derive(Debug)]
enum Outcome {
    Panic(String),
    Error(String),
    Report(Box<SolveReport>),
}

fn options(c: &Case, solver: SolverKind) -> FitOptions {
    let mut o = FitOptions::new(c.loss, c.set);
    o.ridge = c.ridge;
    o.solver = solver.into();
    if solver == SolverKind::Sgd {
        o.solver = Solver::Sgd({
            let mut o = SgdOptions::default();
            o.step = StepRule::Const(0.05);
            o.batch = 8;
            o.epochs = 2;
            o.shuffle = true;
            o.seed = 1;
            o.average = Averaging::Polyak;
            o
        });
    }
    o
}

fn run(c: &Case, solver: SolverKind) -> Outcome {
    let r = catch_unwind(AssertUnwindSafe(|| {
        let view = PairwiseView::new(&c.x, c.n, c.d, &c.y, c.w.as_deref())?;
        fit(view, &options(c, solver))
    }));
    match r {
        Err(p) => Outcome::Panic(
            p.downcast_ref::<String>()
                .cloned()
                .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default(),
        ),
        Ok(Err(e)) => Outcome::Error(e.to_string()),
        Ok(Ok(m)) => Outcome::Report(Box::new(m.report)),
    }
}

/// The relative KKT residual of `theta` recomputed independently (None if the recomputation
/// itself is not finite, e.g. overflowing products in the plain loop).
fn recomputed_kkt(c: &Case, theta: &[f64]) -> Option<f64> {
    let view = PairwiseView::new(&c.x, c.n, c.d, &c.y, c.w.as_deref()).ok()?;
    with_loss!(c.loss, |loss| {
        let obj = Objective::new(view, loss).with_ridge(c.ridge).ok()?;
        let k = independent_kkt(&obj, &c.set, theta).relative;
        k.is_finite().then_some(k)
    })
    .ok()
    .flatten()
}

/// RMS of `X v`.
fn scores_rms(c: &Case, v: &[f64]) -> f64 {
    let mut s = 0.0;
    for i in 0..c.n {
        let t: f64 = c.x[i * c.d..(i + 1) * c.d].iter().zip(v).map(|(a, b)| a * b).sum();
        s += t * t;
    }
    (s / c.n as f64).sqrt()
}

/// Problems of one report.
fn check_report(c: &Case, solver: SolverKind, r: &SolveReport) -> Vec<String> {
    let mut bad = Vec::new();
    let tag = solver.name();
    if r.certificate.certified_global && !r.converged() {
        bad.push(format!(
            "{tag}: certified_global without convergence ({})",
            r.termination
        ));
    }
    if r.converged() {
        if !c
            .set
            .contains(&r.theta, 1e-9 * c.set.radius().unwrap_or(1.0).max(1e-300))
            && c.set.radius().is_some()
        {
            bad.push(format!("{tag}: converged at an infeasible point"));
        }
        if !(r.certificate.kkt_residual <= r.certificate.kkt_tol) {
            bad.push(format!(
                "{tag}: converged with reported κ {:.3e} > tol {:.1e}",
                r.certificate.kkt_residual, r.certificate.kkt_tol
            ));
        }
        match recomputed_kkt(c, &r.theta) {
            Some(k) if k <= SLACK * r.certificate.kkt_tol => {}
            Some(k) => bad.push(format!(
                "{tag}: FALSE CERTIFICATE — converged, but the recomputed relative KKT residual is {k:.3e} (reported {:.3e}, tol {:.1e})",
                r.certificate.kkt_residual, r.certificate.kkt_tol
            )),
            None => {}
        }
    }
    bad
}

#[derive(Default, Debug)]
struct Tally {
    cases: usize,
    fits: usize,
    converged: usize,
    not_converged: usize,
    errors: usize,
    panics: usize,
    false_certificates: usize,
    compared: usize,
}

const SOLVERS: [SolverKind; 5] = [
    SolverKind::Auto,
    SolverKind::Newton,
    SolverKind::NewtonCg,
    SolverKind::Lbfgs,
    SolverKind::Sgd,
];

fn class_run(class: &'static str, seed: u64, tallies: &mut BTreeMap<&'static str, Tally>) -> Vec<String> {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
    let mut failures = Vec::new();
    let t = tallies.entry(class).or_default();
    for _ in 0..CASES {
        let c = generate(class, &mut rng);
        t.cases += 1;
        let mut certified: Vec<(SolverKind, Vec<f64>)> = Vec::new();
        let mut bad = Vec::new();
        for solver in SOLVERS {
            t.fits += 1;
            match run(&c, solver) {
                Outcome::Panic(m) => {
                    t.panics += 1;
                    bad.push(format!("{}: PANIC {m}", solver.name()));
                }
                Outcome::Error(e) => {
                    t.errors += 1;
                    if e.contains('\n') {
                        bad.push(format!("{}: multi-line error {e:?}", solver.name()));
                    }
                }
                Outcome::Report(r) => {
                    if std::env::var("HOSTILE_VERBOSE").is_ok() && !r.converged() && solver != SolverKind::Sgd {
                        eprintln!(
                            "{} {}: {} κ={:.2e} it={}",
                            c.describe(),
                            solver.name(),
                            r.termination,
                            r.certificate.kkt_residual,
                            r.counts.iterations
                        );
                    }
                    if r.converged() {
                        t.converged += 1;
                    } else {
                        t.not_converged += 1;
                    }
                    let b = check_report(&c, solver, &r);
                    t.false_certificates += b.iter().filter(|m| m.contains("FALSE CERTIFICATE")).count();
                    bad.extend(b);
                    if r.certificate.certified_global && !matches!(c.loss, LossSpec::MleRr { .. }) {
                        certified.push((solver, r.theta.clone()));
                    }
                }
            }
        }
        // Certified global minimisers of the same convex problem: the same optimal scores.
        if let Some((s0, t0)) = certified.first() {
            let size = scores_rms(&c, t0).max(1.0);
            for (s1, t1) in &certified[1..] {
                let diff: Vec<f64> = t0.iter().zip(t1).map(|(a, b)| a - b).collect();
                let rel = scores_rms(&c, &diff) / size;
                t.compared += 1;
                if !(rel <= 1e-6) && rel.is_finite() {
                    bad.push(format!(
                        "{} and {} both certify a global minimiser but their scores differ by {rel:.3e} (relative)",
                        s0.name(),
                        s1.name()
                    ));
                }
            }
        }
        if !bad.is_empty() {
            failures.push(format!("{}:\n    {}", c.describe(), bad.join("\n    ")));
        }
    }
    failures
}

fn report(tallies: &BTreeMap<&'static str, Tally>, failures: &[String]) {
    eprintln!("| class | cases | fits | converged | not converged | typed errors | panics | false certificates | agreement checks |");
    eprintln!("|---|---|---|---|---|---|---|---|---|");
    for (k, t) in tallies {
        eprintln!(
            "| {k} | {} | {} | {} | {} | {} | {} | {} | {} |",
            t.cases, t.fits, t.converged, t.not_converged, t.errors, t.panics, t.false_certificates, t.compared
        );
    }
    assert!(
        failures.is_empty(),
        "{} hostile cases failed:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

macro_rules! class_test {
    ($name:ident, $class:expr, $seed:expr) => {
        #[test]
        fn $name() {
            let mut tallies = BTreeMap::new();
            let failures = class_run($class, $seed, &mut tallies);
            report(&tallies, &failures);
        }
    };
}

class_test!(uniform_magnitudes_1e_minus_300_to_1e300, "uniform magnitude", 1);
class_test!(subnormal_features, "subnormals", 2);
class_test!(one_huge_row, "one huge row", 3);
class_test!(mixed_column_scales_1e_minus_8_to_1e8, "mixed column scales", 4);
class_test!(degenerate_shapes, "degenerate shapes", 5);
class_test!(extreme_weights, "extreme weights", 6);
class_test!(extreme_radii_and_ridge, "extreme radii and ridge", 7);

/// `θ(sX) = θ(X)/s` (radius `B/s`, ridge `βs²`) for `s` across 500 orders of magnitude: both
/// fits certified agree to 1e-9 in the scores; a fit certified at one scale and not at another
/// is allowed (the arithmetic may not reach the certificate at extreme scales), a different
/// certified answer is not.
#[test]
fn scale_covariance() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(8);
    let mut failures = Vec::new();
    let (mut compared, mut refused) = (0usize, 0usize);
    for _ in 0..CASES {
        let n = rng.random_range(60..300);
        let d = rng.random_range(2..6);
        let (x, y) = base(&mut rng, n, d);
        let loss = [LossSpec::Mle, LossSpec::Probit, LossSpec::DebiasedRr { eps: 1.0 }][rng.random_range(0..3)];
        let set = pick_set(&mut rng, loss, 2.0);
        let c = Case {
            class: "scale covariance",
            x,
            y,
            w: None,
            n,
            d,
            loss,
            set,
            ridge: if rng.random() { 0.0 } else { 0.5 },
        };
        for solver in [SolverKind::Auto, SolverKind::Newton] {
            let Outcome::Report(r0) = run(&c, solver) else {
                failures.push(format!(
                    "{}: {} failed on the unscaled problem",
                    c.describe(),
                    solver.name()
                ));
                continue;
            };
            if !r0.converged() {
                continue;
            }
            for e in [-250i32, -120, -30, -3, 2, 40, 150, 250] {
                let s = 10f64.powi(e) * 1.37;
                // The ridge must stay representable as β·s².
                if c.ridge != 0.0 && !(c.ridge * s * s).is_normal() {
                    continue;
                }
                let cs = c.scaled(s);
                match run(&cs, solver) {
                    Outcome::Report(r) if r.converged() => {
                        compared += 1;
                        // θ(sX)·s against θ(X), in the scores of the unscaled data.
                        let back: Vec<f64> = r.theta.iter().map(|t| t * s).collect();
                        let diff: Vec<f64> = back.iter().zip(&r0.theta).map(|(a, b)| a - b).collect();
                        let rel = scores_rms(&c, &diff) / scores_rms(&c, &r0.theta).max(1e-300);
                        if !(rel <= 1e-9) {
                            failures.push(format!(
                                "{} {} at s = {s:.2e}: θ(sX)·s differs from θ(X) by {rel:.3e} in the scores",
                                c.describe(),
                                solver.name()
                            ));
                        }
                    }
                    Outcome::Panic(m) => failures.push(format!("{} at s = {s:.2e}: PANIC {m}", c.describe())),
                    _ => refused += 1,
                }
            }
        }
    }
    eprintln!("scale covariance: {compared} certified pairs compared, {refused} scaled fits not certified");
    assert!(compared >= 200, "only {compared} comparisons");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

/// The column-spread family: 50 problems whose column scales span `10²` to `10⁶` (log-uniform
/// over the columns), BTL labels, the logistic, probit and debiased-RR losses, with the ball
/// inactive (unconstrained or a loose ball) and active (`Θ_B` and a ball tighter than the
/// minimiser). Every exact solver converges and agrees with Newton to `1e-8` in the
/// column-scaled norm `‖c ∘ (θ − θ_newton)‖ / max(1, ‖c ∘ θ_newton‖)` (`c_j` the column RMS —
/// the units of the scores).
#[test]
fn column_spread_family_every_solver_converges_and_agrees_with_newton() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(50);
    let mut failures = Vec::new();
    let mut active = 0usize;
    for k in 0..50 {
        let spread = 10f64.powf(2.0 + 4.0 * k as f64 / 49.0);
        let (n, d) = (2000, 8);
        let (mut x, y) = base(&mut rng, n, d);
        let s: Vec<f64> = (0..d).map(|j| spread.powf(j as f64 / (d - 1) as f64 - 0.5)).collect();
        let mut order: Vec<usize> = (0..d).collect();
        for j in (1..d).rev() {
            order.swap(j, rng.random_range(0..=j));
        }
        for i in 0..n {
            for j in 0..d {
                x[i * d + j] *= s[order[j]];
            }
        }
        let c: Vec<f64> = (0..d)
            .map(|j| ((0..n).map(|i| x[i * d + j] * x[i * d + j]).sum::<f64>() / n as f64).sqrt())
            .collect();
        let loss = [LossSpec::Mle, LossSpec::Probit, LossSpec::DebiasedRr { eps: 2.0 }][k % 3];
        // The unconstrained minimiser's size sets the radii.
        let unconstrained = Case {
            class: "spread",
            x: x.clone(),
            y: y.clone(),
            w: None,
            n,
            d,
            loss: LossSpec::Mle,
            set: FeasibleSet::Unconstrained,
            ridge: 0.0,
        };
        let Outcome::Report(r0) = run(&unconstrained, SolverKind::Newton) else {
            panic!("newton failed on the unconstrained problem of spread {spread:.1e}");
        };
        let size = r0.theta.iter().map(|t| t * t).sum::<f64>().sqrt();
        let set = match (k / 3) % 4 {
            0 if !matches!(loss, LossSpec::DebiasedRr { .. }) => FeasibleSet::Unconstrained,
            0 | 1 => FeasibleSet::ball(10.0 * size).unwrap(),
            2 => FeasibleSet::theta_b(0.5 * size).unwrap(),
            _ => FeasibleSet::ball(0.3 * size).unwrap(),
        };
        let case = Case {
            class: "spread",
            x,
            y,
            w: None,
            n,
            d,
            loss,
            set,
            ridge: 0.0,
        };
        let Outcome::Report(newton) = run(&case, SolverKind::Newton) else {
            failures.push(format!(
                "spread {spread:.1e} {loss:?} {set:?}: newton did not return a report"
            ));
            continue;
        };
        if !newton.converged() {
            failures.push(format!(
                "spread {spread:.1e} {loss:?} {set:?}: newton {} (κ {:.2e})",
                newton.termination, newton.certificate.kkt_residual
            ));
            continue;
        }
        active += usize::from(newton.certificate.on_boundary);
        let cn = |v: &[f64]| v.iter().zip(&c).map(|(a, b)| (a * b) * (a * b)).sum::<f64>().sqrt();
        let scale = cn(&newton.theta).max(1.0);
        for solver in [SolverKind::NewtonCg, SolverKind::Lbfgs, SolverKind::Auto] {
            match run(&case, solver) {
                Outcome::Report(r) if r.converged() => {
                    let diff: Vec<f64> = r.theta.iter().zip(&newton.theta).map(|(a, b)| a - b).collect();
                    let rel = cn(&diff) / scale;
                    if !(rel <= 1e-8) {
                        failures.push(format!(
                            "spread {spread:.1e} {loss:?} {set:?}: {} differs from newton by {rel:.2e}",
                            solver.name()
                        ));
                    }
                }
                Outcome::Report(r) => failures.push(format!(
                    "spread {spread:.1e} {loss:?} {set:?}: {} {} after {} iterations (κ {:.2e})",
                    solver.name(),
                    r.termination,
                    r.counts.iterations,
                    r.certificate.kkt_residual
                )),
                other => failures.push(format!("spread {spread:.1e}: {} {other:?}", solver.name())),
            }
        }
    }
    eprintln!("column-spread family: 50 problems, {active} with the ball active at the solution");
    assert!(active >= 10, "only {active} problems with an active ball");
    assert!(
        failures.is_empty(),
        "{} failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
}
