//! `privpref` command-line interface (its contract — JSON keys, exit codes, one-line errors — is
//! in `docs/cli.md`): `fit`, `privatize`, `demo`, `experiment`, `covariance`, `policy`,
//! `account`, `calibrate`.
//!
//! `account --sampling-rate Q --noise-multiplier S --steps T --delta D [--neighbours R]` prints
//! the (ε, δ) of the RDP accountant with the best order; `calibrate ... --epsilon E` the noise
//! multiplier (never under-noised).
//!
//! `fit --loss pl-top1|pl-ranking|pl-krr --k K [--eps E] [--top J]` fits the K-wise
//! (Plackett–Luce) estimators on `n × K × d` features and `n` choices or `n × K` rankings
//! ([`kwise`]); `privatize --mechanism krr --k K` randomises K-ary choices.
//!
//! `fit --solver sgd --label-mechanism krr|rrtopk|rr-prior|normal --eps E` runs label-private
//! SGD on clear labels (Ghazi et al. (2021); [`label_sgd`]): each label privatised once when it is
//! used.
//!
//! `fit --central --eps E --delta D --feature-bound L [--beta B]` releases objective
//! perturbation (Chowdhury, Zhou & Natarajan (2024), Algorithm 2) with its guarantee in the JSON;
//! `--mechanism private-mle` runs Algorithm 1 of "Provable protection of human judgements" (anon.,
//! 2025) instead. A run whose exactness certificate fails exits 1 with one line, unless
//! `--allow-unguaranteed` (then `"guarantee": null` and a warning on stderr).
//!
//! `privatize` writes `OUT.provenance.json` next to its labels (the mechanism, ε, K, the
//! generator and the labels file's size and SHA-256); the local fits read `Y.provenance.json`
//! when it exists and attach the guarantee it records, refuse one that does not match the labels
//! file, accept `--assert-provenance rr:EPS | krr:EPS:K` instead, and report `"provenance": null`
//! with a `"no_guarantee_reason"` (and no local guarantee) otherwise ([`provenance`]).
//!
//! Output files (`--out`, the labels and side-car of `privatize`, `policy --actions-out`, the
//! files of `demo` and `experiment`) are written to a temporary file in their directory and
//! renamed into place, so a killed run never leaves a half-written one ([`atomic`]).
//!
//! Exit codes: 0 success; 1 invalid input or I/O error (one line on stderr; also a memory-mapped
//! input truncated by another process during the run, [`npy::sigbus`]); 2 bad command
//! line; 3 the solver did not converge (the JSON result is still written, with
//! `"converged": false`).
//!
//! A fixed-budget SGD run (`--solver sgd`) that ran its whole budget ends with
//! `"termination": "completed"` and `"converged": false` (it has no KKT certificate; compare
//! `kkt_residual` with `kkt_tol`) and exits 0. Every other termination without convergence
//! exits 3.
//!
//! Solver options: `--memory M` (L-BFGS pairs, default 10), `--polish-iters K` (default 10)
//! and `--sample-start on|off` (default on) only with `--solver lbfgs` (or `auto`);
//! `--batch B` (1), `--epochs E` (1), `--step RULE` (`const:ETA`, `invt:C`, `theory`,
//! `lambda:L`, `statement` — the last still rejected; default `theory`), `--shuffle` (seeded by `--seed`) and
//! `--average last|polyak` (last) only with `--solver sgd`. An option given with another
//! solver is an error (exit 1). SGD runs draw a progress bar on stderr when it is a terminal.

mod account;
mod atomic;
mod central;
mod demo;
mod experiment;
mod fit_shared;
mod keys;
mod kwise;
mod label_sgd;
mod no_overwrite;
mod policy;
mod progress;
mod provenance;
mod ranks;
mod solver_args;

use clap::{Args, Parser, Subcommand};
use privpref::data::{npy, Features, PairwiseView};
use privpref::estimator::{fit, fit_features, fit_privatized, fit_privatized_features, SolverKind};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::{KaryRr, Mechanism, RandomizedResponse};
use privpref::par::Cut;
use privpref::privacy::{Generator, NoiseRng, PrivatizedLabels};
use privpref::solver::Termination;
use privpref::Error;
use serde_json::json;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "privpref",
    version,
    about = "Reward models from pairwise preferences under label differential privacy",
    allow_negative_numbers = true
)]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
    /// The memory a run may plan for, in bytes with an optional K, M, G or T (powers of 1024),
    /// e.g. 4G. Dense Newton (its d × d Hessian), the central mechanisms, covariance and policy
    /// (d × d matrices) check their peak against it first and stop with an error naming the size
    /// and the alternative; auto never chooses a solver that does not fit. Default: the
    /// environment variable PRIVPREF_MEMORY_LIMIT, else the memory available to the process
    /// (MemAvailable, the cgroup's memory.max, RLIMIT_AS).
    #[arg(long, global = true, value_name = "BYTES")]
    memory_limit: Option<String>,
}

/// The process-wide memory limit from `--memory-limit`, else `PRIVPREF_MEMORY_LIMIT`
/// (`privpref::solver::memory`); neither: the memory available to the process.
fn set_memory_limit(flag: Option<&str>) -> Result<(), Error> {
    let env = std::env::var("PRIVPREF_MEMORY_LIMIT")
        .ok()
        .filter(|v| !v.trim().is_empty());
    let bytes = flag
        .or(env.as_deref())
        .map(privpref::solver::memory::parse_bytes)
        .transpose()?;
    privpref::solver::memory::set_process_limit(bytes);
    Ok(())
}

#[derive(Subcommand)]
enum Cmd {
    /// Fit θ̂ = argmin over the feasible set of the mean loss (+ ridge, + linear term).
    // `allow_negative_numbers` is per command in clap 4 (not inherited from the parent): without
    // it `--eps -1` fails with "unexpected argument '-1'" instead of reaching the range check.
    #[command(allow_negative_numbers = true)]
    Fit(Box<FitArgs>),
    /// Randomise labels with randomized response (binary rr, or K-ary krr) (ε-label-LDP).
    #[command(allow_negative_numbers = true)]
    Privatize(PrivatizeArgs),
    /// The main job on built-in synthetic data: the comparison of MLE, MLE-RR and
    /// debiased RR of Chowdhury, Zhou & Natarajan (2024), with a verdict.
    #[command(allow_negative_numbers = true)]
    Demo(demo::DemoArgs),
    /// Private data covariance (1/n)Σxxᵀ + symmetric Gaussian noise (anon. 2025, Algorithm 2,
    /// corrected calibration), with PSD repair; standard DP of the record at (ε/2, δ/2).
    #[command(allow_negative_numbers = true)]
    Covariance(central::CovarianceArgs),
    /// Reproduce a paper experiment (fig1 | rates | robust | dpo | all): Markdown summary with
    /// predicted vs measured values, CSV of every repetition and SVG plots into --out-dir.
    #[command(allow_negative_numbers = true)]
    Experiment(experiment::ExperimentArgs),
    /// Pessimistic (or --greedy) policy of a fitted θ̂ on public states S.npy (n × A × d):
    /// Frank–Wolfe with a certified duality gap, purified and rounded to action indices.
    #[command(allow_negative_numbers = true)]
    Policy(Box<policy::PolicyArgs>),
    /// (ε, δ) of T Poisson-subsampled Gaussian steps (RDP accountant), with the best order.
    #[command(allow_negative_numbers = true)]
    Account(account::AccountArgs),
    /// The noise multiplier for a target (ε, δ) after T Poisson-subsampled Gaussian steps
    /// (conservative: never undershoots).
    #[command(allow_negative_numbers = true)]
    Calibrate(account::CalibrateArgs),
    /// Create the Ed25519 key pair that signs privatize's provenance side-cars: the secret key
    /// (mode 0600) and its public key, for fit --trusted-key. Never replaces a key.
    Keygen(KeygenArgs),
}

#[derive(Args)]
struct KeygenArgs {
    /// The key directory (default: $PRIVPREF_KEY_DIR, else $XDG_CONFIG_HOME/privpref, else
    /// $HOME/.config/privpref): writes signing-key.pem (secret) and signing-key.pub.pem
    /// (public).
    #[arg(long)]
    dir: Option<PathBuf>,
}

#[derive(Args)]
struct FitArgs {
    /// Pairwise feature differences, float64/float32 .npy of shape n × d; for the K-wise losses
    /// (pl-*), the features of the K alternatives, float64 .npy of shape n × K × d.
    #[arg(long)]
    x: PathBuf,
    /// Labels in {0,1}, integer or bool .npy of length n (1 = the first action of the difference
    /// preferred); for the K-wise losses, an integer .npy of shape n (chosen alternative) or
    /// n × K (ranking, best first).
    #[arg(long)]
    y: PathBuf,
    /// mle | mle-rr | debiased-rr | probit | probit-rr | debiased-probit | pl-top1 | pl-ranking |
    /// pl-krr; with
    /// --label-mechanism: mle | softmax | pl-top1.
    #[arg(long)]
    loss: String,
    /// RR privacy level ε > 0 (required by mle-rr, debiased-rr, probit-rr, debiased-probit and
    /// pl-krr).
    #[arg(long)]
    eps: Option<f64>,
    /// K-wise losses: alternatives per sample K (must match the features' shape).
    #[arg(long)]
    k: Option<usize>,
    /// pl-ranking: ranked stages J (1 ≤ J ≤ K − 1; default K − 1, the full ranking).
    #[arg(long)]
    top: Option<usize>,
    /// theta-b (Σθ = 0, ‖θ‖ ≤ B) | ball (‖θ‖ ≤ B) | sum-zero | none. Default: theta-b when
    /// --radius is given, none (unconstrained) when not; the Python `fit` has the same default.
    #[arg(long)]
    constraint: Option<String>,
    /// The bound B of theta-b and ball (alone: Θ_B = {Σθ = 0, ‖θ‖ ≤ B}).
    #[arg(long)]
    radius: Option<f64>,
    /// Ridge β of (β/2n)‖θ‖².
    #[arg(long, default_value_t = 0.0)]
    ridge: f64,
    /// Linear term w of (1/n)⟨w, θ⟩, float64 .npy of length d.
    #[arg(long)]
    linear_term: Option<PathBuf>,
    /// Non-negative sample weights (frequency semantics), float .npy of length n.
    #[arg(long)]
    weights: Option<PathBuf>,
    /// Warm start θ₀, float .npy of length d.
    #[arg(long)]
    theta0: Option<PathBuf>,
    /// auto (default: the fastest certified solver for the loss and the shape, see
    /// `privpref::estimator::auto_solver`) | newton | newton-cg | lbfgs | sgd (approximate).
    #[arg(long, default_value = "auto")]
    solver: String,
    /// Tolerance on the relative KKT residual (each coordinate of the KKT conditions at most
    /// this fraction of the magnitude of its terms; `privpref::solver::certificate`).
    #[arg(long, default_value_t = 1e-10)]
    tol: f64,
    /// Absolute tolerance on the largest KKT residual component, in gradient units (0 = off;
    /// depends on the units of the features).
    #[arg(long, default_value_t = 0.0)]
    tol_abs: f64,
    /// Maximum solver iterations: Newton and Newton-CG (outer) iterations; for L-BFGS, ten
    /// quasi-Newton iterations per unit (the default 100 allows 1000, comparable work to 100
    /// Newton steps).
    #[arg(long, default_value_t = 100)]
    max_iter: usize,
    /// No progress line on stderr (it is drawn only when stderr is a terminal, and cleared
    /// when the fit ends).
    #[arg(long)]
    quiet: bool,
    /// Worker threads, 1 to 256 (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
    /// Random seed: the shuffle seed of SGD (default 0); recorded, unused, by the exact solvers;
    /// with --label-mechanism, seeds the label randomisation (simulation only; default: OS-seeded
    /// CSPRNG).
    #[arg(long)]
    seed: Option<u64>,
    /// L-BFGS: correction pairs kept (default 10). Only with --solver lbfgs.
    #[arg(long)]
    memory: Option<usize>,
    /// L-BFGS: polishing iterations allowed after the KKT tolerance is met (default 10, ending
    /// early once the quasi-Newton model puts the point within about 10 × the tolerance of the
    /// minimiser; 0 stops at the first iterate meeting it: fewer passes, the same certificate).
    /// Only with --solver lbfgs or auto.
    #[arg(long)]
    polish_iters: Option<usize>,
    /// L-BFGS: `on` (default) starts a fit with many rows per feature (n ≥ 4096·d, convex
    /// loss, no --theta0) from a run on every 32nd row, handing its point and curvature to the
    /// full run, which certifies the answer as always; `off` starts at θ₀. Only with --solver
    /// lbfgs or auto.
    #[arg(long, value_name = "on|off")]
    sample_start: Option<String>,
    /// SGD: rows per step (default 1). Only with --solver sgd.
    #[arg(long)]
    batch: Option<usize>,
    /// SGD: passes over the data (default 1). Only with --solver sgd.
    #[arg(long)]
    epochs: Option<usize>,
    /// SGD step rule: const:ETA | invt:C | theory | lambda:L | statement (default theory); with
    /// --label-mechanism: theory | theory:C | invsqrt:C | const:ETA.
    #[arg(long)]
    step: Option<String>,
    /// SGD: visit the rows in a fresh random order (seeded by --seed) each epoch.
    #[arg(long)]
    shuffle: bool,
    /// SGD: returned point, last | polyak (default last).
    #[arg(long)]
    average: Option<String>,
    /// Local fits: state how the labels were privatised when they have no provenance side-car:
    /// rr:EPS (binary randomized response) or krr:EPS:K. The guarantee then says "asserted by the
    /// caller". Without it (and without a side-car), the fit carries no local guarantee.
    #[arg(long, value_name = "MECH:EPS[:K]")]
    assert_provenance: Option<String>,
    /// Local fits: the provenance side-car of --y, when it is not at Y.provenance.json (where it
    /// is read automatically).
    #[arg(long)]
    provenance: Option<PathBuf>,
    /// Local fits: a public key (SPKI PEM, from privpref keygen) whose signatures on provenance
    /// side-cars are trusted; repeatable. Default: the default key directory's public key
    /// ($PRIVPREF_KEY_DIR, else $XDG_CONFIG_HOME/privpref, else $HOME/.config/privpref). A side-car
    /// that no trusted key signed gives only a guarantee marked unverified (not for real data).
    #[arg(long, value_name = "PUBLIC.pem")]
    trusted_key: Vec<PathBuf>,
    /// Write the JSON result here instead of stdout.
    #[arg(long)]
    out: Option<PathBuf>,
    #[command(flatten)]
    central: central::CentralArgs,
    #[command(flatten)]
    label: label_sgd::LabelArgs,
}

#[derive(Args)]
struct PrivatizeArgs {
    /// Labels in {0,1} (rr) or {0,…,K−1} (krr), integer or bool .npy of length n.
    #[arg(long)]
    y: PathBuf,
    /// rr (binary randomized response) | krr (K-ary randomized response, needs --k).
    #[arg(long, default_value = "rr")]
    mechanism: String,
    /// krr: number of labels K (2 ≤ K ≤ 256).
    #[arg(long)]
    k: Option<usize>,
    /// Privacy level ε > 0.
    #[arg(long)]
    eps: f64,
    /// Seed a simulation generator instead of the OS-seeded CSPRNG (simulations only: anyone
    /// who knows the seed can undo the randomisation).
    #[arg(long)]
    seed: Option<u64>,
    /// Output .npy (uint8). The provenance side-car is written next to it, as
    /// OUT.provenance.json, signed with the signing key.
    #[arg(long)]
    out: PathBuf,
    /// The Ed25519 secret key (PKCS#8 PEM, mode 0600) that signs the side-car. Default: the
    /// default key directory's ($PRIVPREF_KEY_DIR, else $XDG_CONFIG_HOME/privpref, else
    /// $HOME/.config/privpref), created there on first use.
    #[arg(long, value_name = "SECRET.pem")]
    signing_key: Option<PathBuf>,
}

impl FitArgs {
    /// The provenance of `--y`: its side-car (or `--provenance`), verified against
    /// `--trusted-key`, else `--assert-provenance` ([`provenance::resolve`]).
    fn label_provenance(&self) -> Result<Option<privpref::privacy::Provenance>, Error> {
        provenance::resolve(
            &self.y,
            self.provenance.as_deref(),
            self.assert_provenance.as_deref(),
            &self.trusted_key,
        )
    }
}

/// A failure of a subcommand: the message and the exit code.
pub(crate) struct Failure {
    code: u8,
    pub(crate) message: String,
}

impl From<Error> for Failure {
    fn from(e: Error) -> Self {
        Failure {
            code: 1,
            message: e.to_string(),
        }
    }
}

/// The most worker threads `--threads` accepts (every subcommand): beyond a few per core,
/// starting and joining the threads costs more than any pass saves — 5000 threads turned a
/// 3 ms fit into 6.5 s.
pub const MAX_THREADS: usize = 256;

/// The worker pool of `--threads` (default: one thread per core), checked against
/// [`MAX_THREADS`].
pub fn pool(threads: Option<usize>) -> Result<rayon::ThreadPool, Error> {
    match threads {
        Some(0) => return Err(Error::param("threads", "must be at least 1")),
        Some(t) if t > MAX_THREADS => {
            return Err(Error::param(
                "threads",
                format!("must be at most {MAX_THREADS}, got {t}"),
            ))
        }
        _ => {}
    }
    let mut b = rayon::ThreadPoolBuilder::new();
    if let Some(t) = threads {
        b = b.num_threads(t);
    }
    b.build()
        .map_err(|e| Error::param("threads", format!("cannot start worker threads: {e}")))
}

/// The validated pairwise view of a feature matrix from `npy::load_matrix` (memory-mapped when
/// the file allows, so the features are not copied), with labels `y` and optional weights.
/// `float32` features stay `f32`: half the memory, and the kernels accumulate in `f64` with the
/// same bits as on the widened values.
///
/// Under mpirun (`group`), every rank holds the whole map and validates its own rows
/// ([`PairwiseView::new_distributed`]); the ranks first check that they read inputs of the same
/// shapes, so that they all reach the same outcome.
fn pairwise_view<'a>(
    x: &'a npy::LoadedMatrix,
    y: &'a [u8],
    weights: Option<&'a [f64]>,
    ranks: &'a ranks::Ranks,
    cut: Cut,
) -> Result<PairwiseView<'a>, Error> {
    if let Some(g) = ranks.group() {
        let bytes = match x.features() {
            Features::F64(_) => 8,
            Features::F32(_) => 4,
        };
        ranks.same_shapes(
            &[x.n(), x.d(), bytes, y.len(), weights.map_or(0, <[f64]>::len)],
            "rows, columns, bytes per value, labels, weights",
        )?;
        return PairwiseView::new_distributed(x.features(), x.n(), x.d(), y, weights, g, cut);
    }
    match x.features() {
        Features::F64(v) => PairwiseView::new(v, x.n(), x.d(), y, weights),
        Features::F32(v) => PairwiseView::new_f32(v, x.n(), x.d(), y, weights),
    }
}

/// The features of `x` as `f64`, for the estimators that take `&[f64]`: borrowed (from the map,
/// when mapped) for `float64` data, widened into a new vector for `float32` data.
fn features_f64(x: &npy::LoadedMatrix) -> std::borrow::Cow<'_, [f64]> {
    match x.features() {
        Features::F64(v) => std::borrow::Cow::Borrowed(v),
        Features::F32(v) => std::borrow::Cow::Owned(v.iter().map(|&f| f64::from(f)).collect()),
    }
}

fn write_json(out: &Option<PathBuf>, v: &serde_json::Value) -> Result<(), Failure> {
    let text = serde_json::to_string_pretty(v).expect("JSON values serialise");
    match out {
        Some(p) => atomic::write_bytes(p, (text + "\n").as_bytes()).map_err(Failure::from),
        // Not println!: it panics when stdout is a closed pipe or a full disk.
        None => {
            use std::io::Write;
            let mut o = std::io::stdout().lock();
            writeln!(o, "{text}")
                .and_then(|()| o.flush())
                .map_err(|e| stdout_err(&e).into())
        }
    }
}

/// A failed write to standard output (closed pipe, full disk) as an I/O error.
fn stdout_err(e: &std::io::Error) -> Error {
    Error::Io {
        path: "<stdout>".into(),
        message: e.to_string(),
    }
}

fn run_fit(a: FitArgs) -> Result<(), Failure> {
    if a.label.label_mechanism.is_some() || a.central.central {
        for (name, given) in [
            ("assert-provenance", a.assert_provenance.is_some()),
            ("provenance", a.provenance.is_some()),
        ] {
            if given {
                return Err(Error::param(
                    name,
                    format!("--{name} applies to local fits of privatised labels, not to --central or --label-mechanism (they fit clear labels)"),
                )
                .into());
            }
        }
    }
    if a.label.label_mechanism.is_some() {
        ranks::single_process("fit --label-mechanism")?;
        return label_sgd::run(a);
    }
    if let Some(name) = a.label.stray() {
        return Err(Error::param(name, format!("--{name} applies only with --label-mechanism")).into());
    }
    if kwise::is_kwise(&a.loss) {
        ranks::single_process("a K-wise fit")?;
        return kwise::run(a);
    }
    for (name, given) in [("k", a.k.is_some()), ("top", a.top.is_some())] {
        if given {
            return Err(Error::param(
                name,
                format!(
                    "--{name} applies only to the K-wise losses (pl-top1, pl-ranking, pl-krr), not `{}`",
                    a.loss
                ),
            )
            .into());
        }
    }
    let ranks = ranks::Ranks::from_env()?;
    let res = if a.central.central {
        run_fit_central(a, &ranks)
    } else if a.x.to_string_lossy().contains(RANK_FIELD) {
        run_fit_shards(a, &ranks)
    } else {
        run_fit_local(a, &ranks)
    };
    ranks.report(res)
}

/// The field of a per-rank path (`--x 'X.{rank}.npy'`): each rank reads its own shard file.
const RANK_FIELD: &str = "{rank}";

/// `path` with [`RANK_FIELD`] replaced by this process's rank (as given without one, or outside
/// mpirun).
fn rank_path(path: &std::path::Path, ranks: &ranks::Ranks) -> PathBuf {
    match ranks.group() {
        Some(g) => PathBuf::from(path.to_string_lossy().replace(RANK_FIELD, &g.rank().to_string())),
        None => path.to_path_buf(),
    }
}

/// `mpirun -np P privpref fit --x 'X.{rank}.npy' --y 'y.{rank}.npy' …`: each rank reads only
/// its own shard of the rows (rank r the file with `{rank}` replaced by r; the shards follow
/// each other in rank order, each but the last a multiple of the passes' block rows) and the
/// fit has the bits of the one-process fit on the concatenated files
/// ([`PairwiseView::new_shard`]). Clear labels, no weights (not supported yet on shards).
fn run_fit_shards(a: FitArgs, ranks: &ranks::Ranks) -> Result<(), Failure> {
    if let Some(name) = a.central.stray() {
        return Err(Error::param(name, format!("--{name} applies only with --central")).into());
    }
    let Some(g) = ranks.group() else {
        return Err(Error::param(
            "x",
            "a per-rank path (`{rank}` in --x) needs mpirun: each rank reads its own shard",
        )
        .into());
    };
    let refuse = |name: &'static str, why: &str| Err(Failure::from(Error::param(name, why.to_string())));
    if !a.y.to_string_lossy().contains(RANK_FIELD) {
        return refuse(
            "y",
            "with a per-rank --x, give a per-rank --y too (`{rank}` in the path)",
        );
    }
    if a.weights.is_some() {
        return refuse("weights", "weights are not supported yet with per-rank shard files");
    }
    if a.provenance.is_some() || a.assert_provenance.is_some() {
        return refuse(
            "provenance",
            "with per-rank shard files the labels' provenance comes from each shard's side-car (under mpirun, privatize --y 'y.{rank}.npy' --out 'yp.{rank}.npy' writes them)",
        );
    }
    let loss = LossSpec::parse(&a.loss, a.eps)?;
    let set = FeasibleSet::parse_default(a.constraint.as_deref(), a.radius)?;
    let solver = SolverKind::parse(&a.solver)?;
    let settings = a.solver_settings(solver)?;
    let of = |p: &std::path::Path, r: usize| PathBuf::from(p.to_string_lossy().replace(RANK_FIELD, &r.to_string()));
    let (xp, yp) = (of(&a.x, g.rank()), of(&a.y, g.rank()));
    // One shard per rank: a file for rank P would be left out of the fit.
    let extra = of(&a.x, g.size());
    let (x, y, prov) = ranks.agree((|| {
        if extra.exists() {
            return Err(Error::param(
                "x",
                format!(
                    "{} exists: more shard files than the {} ranks (one shard per rank)",
                    extra.display(),
                    g.size()
                ),
            ));
        }
        let x = npy::load_matrix(&xp)?;
        let y = npy::read_labels(&yp, 2)?;
        let prov = provenance::resolve(&yp, None, None, &a.trusted_key)?;
        Ok((x, y, prov))
    })())?;
    // Privatised shards: every shard must have been randomised alike (the same provenance, or
    // none), so that one guarantee covers all the labels.
    let kind = provenance::provenance_json(prov.as_ref()).to_string();
    let mine: Vec<f64> = kind.bytes().map(f64::from).chain(std::iter::once(-1.0)).collect();
    let all = g.all_gather(&mine);
    if all
        .split(|&v| v == -1.0)
        .filter(|k| !k.is_empty())
        .any(|k| k != &mine[..mine.len() - 1])
    {
        return refuse(
            "y",
            "the shards' labels were not all randomised alike: each shard's provenance side-car must state the same mechanism, eps and generator (or none may have one)",
        );
    }
    let labels = prov.map(|p| PrivatizedLabels::new(y.clone(), p)).transpose()?;
    let bytes = match x.features() {
        Features::F64(_) => 8,
        Features::F32(_) => 4,
    };
    ranks.same_shapes(&[x.d(), bytes], "columns, bytes per value")?;
    let pool = pool(a.threads)?;
    let threads = pool.current_num_threads();
    let view = pool.install(|| PairwiseView::new_shard(x.features(), x.d(), &y, None, g))?;
    let (n, d) = (view.n(), view.d());
    let opts = a.fit_options(loss, set, solver, &settings, n)?;
    let model = pool.install(|| match &labels {
        Some(l) => fit_privatized(view, l, &opts),
        None => fit(view, &opts),
    })?;
    let r = &model.report;
    let mut result = a.local_report_json(
        r,
        (loss.name(), loss.eps()),
        set,
        (n, d),
        model.guarantee.as_ref(),
        solver,
        &settings,
        threads,
    );
    result.insert("shard_files".into(), json!(true));
    finish_local_fit(&a, ranks, &pool, x, result, &model)
}

/// `fit` of a pairwise loss on clear or privatised labels (local label DP).
fn run_fit_local(a: FitArgs, ranks: &ranks::Ranks) -> Result<(), Failure> {
    if let Some(name) = a.central.stray() {
        return Err(Error::param(name, format!("--{name} applies only with --central")).into());
    }
    let loss = LossSpec::parse(&a.loss, a.eps)?;
    let set = FeasibleSet::parse_default(a.constraint.as_deref(), a.radius)?;
    let solver = SolverKind::parse(&a.solver)?;
    let settings = a.solver_settings(solver)?;
    // Each rank reads (maps) the files itself: a failure on any rank stops every rank.
    let (x, y, prov, weights) = ranks.agree((|| {
        let x = npy::load_matrix(&a.x)?;
        let y = npy::read_labels(&a.y, 2)?;
        let prov = a.label_provenance()?;
        let weights = a.weights.as_ref().map(npy::read_vector).transpose()?;
        Ok((x, y, prov, weights))
    })())?;
    let (n, d) = (x.n(), x.d());
    let labels = prov.map(|p| PrivatizedLabels::new(y.clone(), p)).transpose()?;
    // Under mpirun: the Hessian-free solvers spread the rows over every rank whatever d; the
    // others (dense Newton, auto) keep whole Hessian chunks per rank.
    let cut = match solver {
        SolverKind::Lbfgs | SolverKind::NewtonCg => Cut::HessianFree,
        _ => Cut::WholeChunks,
    };
    let pool = pool(a.threads)?;
    let threads = pool.current_num_threads();
    let model = if ranks.group().is_some() {
        // The validation pass runs on the pool of --threads too.
        let view = pool.install(|| pairwise_view(&x, &y, weights.as_deref(), ranks, cut))?;
        let opts = a.fit_options(loss, set, solver, &settings, n)?;
        pool.install(|| match &labels {
            Some(l) => fit_privatized(view, l, &opts),
            None => fit(view, &opts),
        })?
    } else {
        // One process: the features are validated inside the fit's first pass (one read of
        // the file fewer; the same answer and errors as validating first).
        let opts = a.fit_options(loss, set, solver, &settings, n)?;
        let w = weights.as_deref();
        pool.install(|| match &labels {
            Some(l) => fit_privatized_features(x.features(), n, d, l, w, &opts),
            None => fit_features(x.features(), n, d, &y, w, &opts),
        })?
    };
    let r = &model.report;
    let result = a.local_report_json(
        r,
        (loss.name(), loss.eps()),
        set,
        (n, d),
        model.guarantee.as_ref(),
        solver,
        &settings,
        threads,
    );
    finish_local_fit(&a, ranks, &pool, x, result, &model)
}

/// The end of a local fit on the features `x`: their dtype, the rank count and the labels'
/// provenance into `result`, which rank 0 writes; then the map's teardown on the pool's
/// threads rather than on one at exit. The exit status of the fit.
fn finish_local_fit(
    a: &FitArgs,
    ranks: &ranks::Ranks,
    pool: &rayon::ThreadPool,
    x: npy::LoadedMatrix,
    mut result: serde_json::Map<String, serde_json::Value>,
    model: &privpref::model::Fit,
) -> Result<(), Failure> {
    let dtype = match x.features() {
        Features::F64(_) => "float64",
        Features::F32(_) => "float32",
    };
    result.insert("x_dtype".into(), json!(dtype));
    result.insert("ranks".into(), json!(ranks.size()));
    let reason = model.no_guarantee.as_ref().map(ToString::to_string);
    provenance::insert_fields(&mut result, model.detail.provenance.as_ref(), reason.as_deref());
    let r = &model.report;
    let eps = LossSpec::parse(&a.loss, a.eps).ok().and_then(|l| l.eps());
    let note = fit_shared::no_guarantee_note(eps, model.guarantee.as_ref(), reason.as_deref(), None);
    if let (Some(note), true) = (note, ranks.is_root()) {
        eprintln!("{note}");
    }
    let status = if ranks.is_root() {
        fit_shared::finish(&a.out, result, r)
    } else {
        fit_shared::exit_status(r)
    };
    pool.install(|| x.release());
    status
}

/// `fit --central`: objective perturbation (or the private MLE) with its guarantee.
fn run_fit_central(a: FitArgs, ranks: &ranks::Ranks) -> Result<(), Failure> {
    if a.loss != "mle" {
        return Err(Error::param(
            "loss",
            format!(
                "--central fits the logistic loss on clear labels: use --loss mle, not `{}`",
                a.loss
            ),
        )
        .into());
    }
    let reject =
        |name: &'static str, why: &str| -> Result<(), Failure> { Err(Error::param(name, why.to_string()).into()) };
    if a.ridge != 0.0 {
        reject(
            "ridge",
            "--ridge is not used with --central (objective perturbation sets its own ridge: --beta)",
        )?;
    }
    if a.linear_term.is_some() {
        reject("linear-term", "--linear-term is not allowed with --central (the noise is drawn by the mechanism; fit a fixed w without --central)")?;
    }
    if a.theta0.is_some() {
        reject("theta0", "--theta0 is not supported with --central")?;
    }
    // `auto` (the default) is the exact Newton solver here.
    let solver = SolverKind::parse(&a.solver)?;
    if !matches!(solver, SolverKind::Newton | SolverKind::Auto) {
        reject(
            "solver",
            "--central needs the exact solver (--solver newton, or auto): its guarantee covers the exact minimiser only",
        )?;
    }
    a.solver_settings(solver)?;
    let set = FeasibleSet::parse_default(a.constraint.as_deref(), a.radius)?;
    let (x, y, weights) = ranks.agree((|| {
        let x = npy::load_matrix(&a.x)?;
        let y = npy::read_labels(&a.y, 2)?;
        let weights = a.weights.as_ref().map(npy::read_vector).transpose()?;
        Ok((x, y, weights))
    })())?;
    let pool = pool(a.threads)?;
    let view = pool.install(|| pairwise_view(&x, &y, weights.as_deref(), ranks, Cut::WholeChunks))?;
    let control = a.control();
    let threads = pool.current_num_threads();
    let input = central::CentralInput {
        view,
        set,
        eps: a.eps,
        seed: a.seed,
        control,
    };
    let mut result = pool.install(|| central::run(&a.central, input))?;
    pool.install(|| x.release());
    if let Some(obj) = result.as_object_mut() {
        obj.insert("threads".into(), json!(threads));
        obj.insert("ranks".into(), json!(ranks.size()));
    }
    if !ranks.is_root() {
        return Ok(());
    }
    write_json(&a.out, &result)?;
    if a.seed.is_some() {
        eprintln!("privpref: warning: --seed makes the noise reproducible by anyone who knows the seed (simulation only); omit it for real data");
    }
    if result["guarantee"].is_null() {
        eprintln!(
            "privpref: warning: released WITHOUT a privacy guarantee (--allow-unguaranteed): {}",
            result["refusal"].as_str().unwrap_or("refused")
        );
    }
    Ok(())
}

fn run_covariance(a: central::CovarianceArgs) -> Result<(), Failure> {
    let v = central::run_covariance(&a)?;
    write_json(&a.out, &v)?;
    if a.seed.is_some() {
        eprintln!("privpref: warning: --seed makes the noise reproducible by anyone who knows the seed (simulation only); omit it for real data");
    }
    Ok(())
}

fn run_policy(a: &policy::PolicyArgs) -> Result<(), Failure> {
    let ranks = ranks::Ranks::from_env()?;
    let res = run_policy_ranks(a, &ranks);
    ranks.report(res)
}

/// [`run_policy`] on the processes of this run (rank 0 writes).
fn run_policy_ranks(a: &policy::PolicyArgs, ranks: &ranks::Ranks) -> Result<(), Failure> {
    let pool = pool(a.threads)?;
    let threads = pool.current_num_threads();
    let (mut v, converged) = pool.install(|| policy::run(a, ranks))?;
    if let Some(o) = v.as_object_mut() {
        o.insert("threads".into(), json!(threads));
    }
    if !ranks.is_root() {
        return if converged {
            Ok(())
        } else {
            Err(Failure {
                code: 3,
                message: String::new(),
            })
        };
    }
    write_json(&a.out, &v)?;
    if v["theta_certified"] == json!(false) {
        eprintln!("privpref: note: the policy is conditional on an uncertified θ̂ (--allow-uncertified-theta): its certificate says nothing about the fit");
    }
    if !converged {
        return Err(Failure {
            code: 3,
            message: format!(
                "the policy optimisation stopped without its certificate: {} (relative gap {:.3e}, tolerance {:e}); the JSON was written",
                v["termination"].as_str().unwrap_or("?"),
                v["rel_gap"].as_f64().unwrap_or(f64::NAN),
                a.tol
            ),
        });
    }
    Ok(())
}

/// The exit code of a finished fit: `None` (exit 0) when converged, or when a fixed-budget
/// algorithm ran its budget (`completed`: no certificate, and the JSON says
/// `"converged": false`); 3 for every other termination.
fn failure_code(t: Termination) -> Option<u8> {
    match t {
        Termination::Converged | Termination::Completed => None,
        _ => Some(3),
    }
}

fn run_privatize(a: PrivatizeArgs) -> Result<(), Failure> {
    let ranks = ranks::Ranks::from_env()?;
    let res = if a.mechanism == "krr" {
        run_privatize_krr(a, &ranks)
    } else {
        run_privatize_rr(a, &ranks)
    };
    ranks.report(res)
}

/// `privatize --mechanism rr`.
fn run_privatize_rr(a: PrivatizeArgs, ranks: &ranks::Ranks) -> Result<(), Failure> {
    if a.mechanism != "rr" {
        return Err(Error::param(
            "mechanism",
            format!("unknown mechanism `{}` (expected rr or krr)", a.mechanism),
        )
        .into());
    }
    if let Some(k) = a.k {
        return Err(Error::param("k", format!("--k {k} applies only to --mechanism krr")).into());
    }
    let mech = RandomizedResponse::new(a.eps)?;
    let y = ranks.agree(npy::read_labels(rank_path(&a.y, ranks), 2))?;
    let mut info = json!({
        "mechanism": "rr",
        "eps": a.eps,
        "keep_probability": mech.transition_matrix()[0],
        "n": y.len(),
    });
    privatize_on(&a, ranks, &y, |part, rng| mech.privatize(part, rng), &mut info)
}

/// `privatize --mechanism krr --k K`: K-ary randomized response of chosen alternatives
/// (Chowdhury, Zhou & Natarajan (2024), Sec. 4.4), for `fit --loss pl-krr --eps E --k K`.
fn run_privatize_krr(a: PrivatizeArgs, ranks: &ranks::Ranks) -> Result<(), Failure> {
    let k =
        a.k.ok_or_else(|| Error::param("k", "--mechanism krr needs --k (number of labels)"))?;
    let mech = KaryRr::new(a.eps, k)?;
    let y = ranks.agree(npy::read_labels(rank_path(&a.y, ranks), k.min(256) as u32))?;
    let mut info = json!({
        "mechanism": "krr",
        "eps": a.eps,
        "k": k,
        "keep_probability": mech.keep_probability(),
        "n": y.len(),
    });
    privatize_on(&a, ranks, &y, |part, rng| mech.privatize(part, rng), &mut info)
}

/// Privatises `y` with `privatize` and writes the labels, their side-car and the summary: in
/// one process from `--seed` or the OS-seeded CSPRNG; under mpirun each rank privatises its
/// contiguous part of the labels from its own OS-seeded CSPRNG (independent streams, no seed
/// shared between ranks) and writes it into one output file, which rank 0 completes.
fn privatize_on(
    a: &PrivatizeArgs,
    ranks: &ranks::Ranks,
    y: &[u8],
    privatize: impl Fn(&[u8], &mut NoiseRng) -> Result<PrivatizedLabels, Error>,
    info: &mut serde_json::Value,
) -> Result<(), Failure> {
    let per_rank = a.y.to_string_lossy().contains(RANK_FIELD);
    let (key, key_path, created) = ranks.agree(keys::signing_key(a.signing_key.as_deref()))?;
    if created && ranks.is_root() {
        eprintln!(
            "privpref: note: created the signing key pair {} (secret, mode 0600) and {} on first use: fit trusts it by default on this machine; give the public key to whoever fits these labels elsewhere (fit --trusted-key)",
            key_path.display(),
            key_path.with_file_name(keys::PUBLIC).display()
        );
    }
    if let Some(o) = info.as_object_mut() {
        o.insert("signed_by".into(), json!(key.id().to_string()));
        o.insert("signing_key".into(), json!(key_path.display().to_string()));
    }
    let Some(g) = ranks.group() else {
        if per_rank {
            return Err(Error::param(
                "y",
                "a per-rank path (`{rank}` in --y) needs mpirun: each rank privatises its own shard",
            )
            .into());
        }
        let out = privatize(y, &mut NoiseRng::from_seed(a.seed)?)?;
        return finish_privatize(a, &out, &key, info);
    };
    if a.seed.is_some() {
        return Err(Error::param(
            "seed",
            "under mpirun every rank privatises its labels from its own OS-seeded CSPRNG; a simulation seed is for one process (run privatize --seed without mpirun)",
        )
        .into());
    }
    if per_rank {
        // Each rank its own shard file: privatised from its own CSPRNG into its own output and
        // side-car.
        if !a.out.to_string_lossy().contains(RANK_FIELD) {
            return Err(Error::param(
                "out",
                "with a per-rank --y, give a per-rank --out too (`{rank}` in the path)",
            )
            .into());
        }
        let out = rank_path(&a.out, ranks);
        let done = ranks.agree((|| {
            let labels = privatize(y, &mut NoiseRng::secure()?)?;
            atomic::write_with(&out, |tmp| npy::write_u8(tmp, labels.labels()))?;
            provenance::write_sidecar(&out, &labels, &key).inspect_err(|_| {
                let _ = std::fs::remove_file(&out);
            })?;
            Ok(labels)
        })())?;
        let counts = g.all_gather(&[y.len() as f64]);
        if !ranks.is_root() {
            return Ok(());
        }
        if let Some(o) = info.as_object_mut() {
            o.insert("n".into(), json!(counts.iter().sum::<f64>() as usize));
            o.insert("rng".into(), json!("ChaCha20 seeded from OS entropy, one per rank"));
            o.insert("seed".into(), json!(null));
            o.insert("ranks".into(), json!(g.size()));
            o.insert("out".into(), json!(a.out.display().to_string()));
            o.insert("per_rank_files".into(), json!(true));
            o.insert(
                "provenance".into(),
                provenance::provenance_json(Some(done.provenance())),
            );
        }
        return write_json(&None, info);
    }
    let (p, r, n) = (g.size(), g.rank(), y.len());
    let part = r * n / p..(r + 1) * n / p;
    let mine = ranks.agree(NoiseRng::secure().and_then(|mut rng| privatize(&y[part.clone()], &mut rng)))?;
    // Rank 0 lays the file out (header, n bytes) under a temporary name next to --out, which it
    // sends to the others; each rank writes its part in place; rank 0 renames the whole.
    let mut pid = (std::process::id() as u64).to_le_bytes();
    g.broadcast(&mut pid);
    let name = a
        .out
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = a
        .out
        .with_file_name(format!(".{name}.{}.mpi.tmp", u64::from_le_bytes(pid)));
    let io = |e: std::io::Error| Error::Io {
        path: tmp.display().to_string(),
        message: e.to_string(),
    };
    let laid = if ranks.is_root() {
        npy::write_u8(&tmp, &vec![0u8; n])
    } else {
        Ok(())
    };
    let written = ranks.agree(laid).and_then(|()| {
        ranks.agree((|| {
            use std::os::unix::fs::FileExt;
            let f = std::fs::OpenOptions::new().write(true).open(&tmp).map_err(io)?;
            let start = f.metadata().map_err(io)?.len() - n as u64;
            f.write_all_at(mine.labels(), start + part.start as u64).map_err(io)?;
            f.sync_data().map_err(io)
        })())
    });
    if !ranks.is_root() {
        return written.map_err(Failure::from);
    }
    let done = written.and_then(|()| std::fs::rename(&tmp, &a.out).map_err(io));
    if let Err(e) = done {
        let _ = std::fs::remove_file(&tmp);
        return Err(e.into());
    }
    let sidecar = match provenance::write_sidecar_of(&a.out, mine.provenance(), n, &key) {
        Ok(s) => s,
        Err(e) => {
            let _ = std::fs::remove_file(&a.out);
            return Err(e.into());
        }
    };
    if let Some(o) = info.as_object_mut() {
        o.insert("rng".into(), json!("ChaCha20 seeded from OS entropy, one per rank"));
        o.insert("seed".into(), json!(null));
        o.insert("ranks".into(), json!(p));
        o.insert("out".into(), json!(a.out.display().to_string()));
        o.insert("provenance_file".into(), json!(sidecar.display().to_string()));
        o.insert(
            "provenance".into(),
            provenance::provenance_json(Some(mine.provenance())),
        );
    }
    write_json(&None, info)
}

/// Writes the privatised labels and their provenance side-car, then the JSON summary
/// (`info` plus `rng`, `seed`, `out`, `provenance_file` and `provenance`). If the side-car
/// cannot be written, the labels file is removed: labels are never left without their record.
fn finish_privatize(
    a: &PrivatizeArgs,
    out: &PrivatizedLabels,
    key: &privpref::privacy::record::SigningKey,
    info: &mut serde_json::Value,
) -> Result<(), Failure> {
    if let Some(o) = info.as_object_mut() {
        o.insert("ranks".into(), json!(1));
    }
    atomic::write_with(&a.out, |tmp| npy::write_u8(tmp, out.labels()))?;
    let sidecar = match provenance::write_sidecar(&a.out, out, key) {
        Ok(p) => p,
        Err(e) => {
            let _ = std::fs::remove_file(&a.out);
            return Err(e.into());
        }
    };
    // Warn only once the output exists: a failure must stay a single stderr line.
    if a.seed.is_some() {
        eprintln!("privpref: warning: --seed makes the randomisation reproducible by anyone who knows the seed; omit it for real data");
    }
    let rng_name = match out.provenance().origin().generator() {
        Some(Generator::Simulation { .. }) => "xoshiro256++ seeded (simulation only)",
        _ => "ChaCha20 seeded from OS entropy",
    };
    if let Some(o) = info.as_object_mut() {
        o.insert("rng".into(), json!(rng_name));
        o.insert("seed".into(), json!(a.seed));
        o.insert("out".into(), json!(a.out.display().to_string()));
        o.insert("provenance_file".into(), json!(sidecar.display().to_string()));
        o.insert("provenance".into(), provenance::provenance_json(Some(out.provenance())));
    }
    write_json(&None, info)
}

/// `keygen`: a new key pair in `--dir` or the default key directory; prints its id and paths.
fn run_keygen(a: &KeygenArgs) -> Result<(), Failure> {
    let dir = match &a.dir {
        Some(d) => d.clone(),
        None => keys::default_dir()?,
    };
    let (key, secret, public) = keys::keygen(&dir)?;
    write_json(
        &None,
        &json!({
            "key_id": key.id().to_string(),
            "algorithm": "ed25519",
            "secret_key": secret.display().to_string(),
            "public_key": public.display().to_string(),
        }),
    )
}

/// The files a command reads and writes, for the check that no output replaces an input.
fn files_of(cmd: &Cmd) -> no_overwrite::Files {
    use no_overwrite::Files;
    fn p(o: &Option<PathBuf>) -> Option<&std::path::Path> {
        o.as_deref()
    }
    match cmd {
        Cmd::Fit(a) => {
            let sidecar = a.provenance.clone().unwrap_or_else(|| provenance::sidecar_path(&a.y));
            Files::default()
                .input("--x", Some(&a.x))
                .input("--y", Some(&a.y))
                .input("--linear-term", p(&a.linear_term))
                .input("--weights", p(&a.weights))
                .input("--theta0", p(&a.theta0))
                .input("--prior", p(&a.label.prior))
                .input("--clusters", p(&a.label.clusters))
                .input("--y's provenance side-car", Some(&sidecar))
                .output("--out", a.out.clone())
        }
        Cmd::Privatize(a) => Files::default()
            .input("--y", Some(&a.y))
            .output("--out", Some(a.out.clone()))
            .output("--out's provenance side-car", Some(provenance::sidecar_path(&a.out))),
        Cmd::Covariance(a) => Files::default().input("--x", Some(&a.x)).output("--out", a.out.clone()),
        Cmd::Policy(a) => Files::default()
            .input("--theta", Some(&a.theta))
            .input("--states", Some(&a.states))
            .input("--covariance", p(&a.covariance))
            .input("--x", p(&a.x))
            .input("--y", p(&a.y))
            .input("--reference-actions", p(&a.reference_actions))
            .input("--reference-vector", p(&a.reference_vector))
            .input("--weights", p(&a.weights))
            .output("--out", a.out.clone())
            .output("--actions-out", a.actions_out.clone()),
        Cmd::Account(a) => Files::default().output("--out", account::out(&a.common).clone()),
        Cmd::Calibrate(a) => Files::default().output("--out", account::out(&a.common).clone()),
        Cmd::Keygen(_) => Files::default(),
        Cmd::Demo(_) | Cmd::Experiment(_) => Files::default(),
    }
}

/// clap's suggestion for a mistyped option, value or subcommand (Jaro–Winkler similarity, clap's
/// `suggestions` feature), as `; did you mean '--radius'?` — the tip clap prints below its first
/// paragraph, which the one-line error keeps.
fn did_you_mean(e: &clap::Error) -> String {
    use clap::error::{ContextKind, ContextValue};
    [
        ContextKind::SuggestedArg,
        ContextKind::SuggestedValue,
        ContextKind::SuggestedSubcommand,
    ]
    .into_iter()
    .find_map(|k| match e.get(k) {
        Some(ContextValue::String(s)) => Some(format!("; did you mean '{s}'?")),
        Some(ContextValue::Strings(v)) if !v.is_empty() => Some(format!("; did you mean '{}'?", v.join("' or '"))),
        _ => None,
    })
    .unwrap_or_default()
}

fn main() -> ExitCode {
    // A `.npy` file truncated under its map: one line naming it and exit 1, not a bare SIGBUS.
    npy::install_sigbus_handler();
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        let at = info
            .location()
            .map(|l| format!(" at {}:{}", l.file(), l.line()))
            .unwrap_or_default();
        eprintln!("privpref: internal error (please report): {msg}{at}");
    }));
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            use clap::error::ErrorKind;
            if matches!(
                e.kind(),
                ErrorKind::DisplayHelp
                    | ErrorKind::DisplayVersion
                    | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
            ) {
                let _ = e.print();
                return if e.kind() == ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand {
                    ExitCode::from(2)
                } else {
                    ExitCode::SUCCESS
                };
            }
            // clap's message is a first paragraph (which may continue on indented lines, e.g. the
            // list of missing arguments), then tips and the usage: keep the first paragraph, on
            // one line.
            let text = e.to_string();
            let first: Vec<&str> = text.lines().map(str::trim).take_while(|l| !l.is_empty()).collect();
            let first = first.join(" ");
            let first = match first.trim_start_matches("error: ") {
                "" => "invalid command line",
                m => m,
            };
            eprintln!("privpref: {first}{} (see --help)", did_you_mean(&e));
            return ExitCode::from(2);
        }
    };
    if !matches!(cli.cmd, Cmd::Fit(_) | Cmd::Policy(_) | Cmd::Privatize(_)) {
        if let Err(e) = ranks::single_process("this subcommand") {
            eprintln!("privpref: {e}");
            return ExitCode::from(2);
        }
    }
    if let Err(e) = set_memory_limit(cli.memory_limit.as_deref()) {
        eprintln!("privpref: {e}");
        return ExitCode::from(1);
    }
    // Before any work: an output that is an input would destroy it.
    if let Err(e) = files_of(&cli.cmd).check() {
        eprintln!("privpref: {e}");
        return ExitCode::from(1);
    }
    let res = match cli.cmd {
        Cmd::Fit(a) => run_fit(*a),
        Cmd::Privatize(a) => run_privatize(a),
        Cmd::Demo(a) => demo::run(a).map_err(Failure::from),
        Cmd::Covariance(a) => run_covariance(a),
        Cmd::Experiment(a) => experiment::run(a).map_err(Failure::from),
        Cmd::Policy(a) => run_policy(&a),
        Cmd::Account(a) => account::run_account(&a)
            .map_err(Failure::from)
            .and_then(|v| write_json(account::out(&a.common), &v)),
        Cmd::Calibrate(a) => account::run_calibrate(&a)
            .map_err(Failure::from)
            .and_then(|v| write_json(account::out(&a.common), &v)),
        Cmd::Keygen(a) => run_keygen(&a),
    };
    match res {
        Ok(()) => ExitCode::SUCCESS,
        Err(f) => {
            // Under MPI, rank 0 has said it already (`Ranks::report`): the message is empty.
            if !f.message.is_empty() {
                eprintln!("privpref: {}", f.message);
            }
            ExitCode::from(f.code)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exit_codes_of_terminations() {
        assert_eq!(failure_code(Termination::Converged), None);
        assert_eq!(failure_code(Termination::Completed), None);
        for t in [
            Termination::MaxIterations,
            Termination::LineSearchFailed,
            Termination::NonFinite,
            Termination::NoMinimizer,
            Termination::Interrupted,
            Termination::Timeout,
        ] {
            assert_eq!(failure_code(t), Some(3), "{t}");
        }
    }
}
