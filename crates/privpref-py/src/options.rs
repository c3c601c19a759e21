//! Keyword arguments to the library's options: the loss, the feasible set, the solver and its
//! settings, the stopping rule. Names and defaults are those of the CLI (`docs/cli.md`).

use privpref::estimator::{FitOptions, Solver, SolverKind};
use privpref::feasible::FeasibleSet;
use privpref::solver::lbfgs::LbfgsOptions;
use privpref::solver::sgd::{Averaging, SgdOptions, StepRule};
use privpref::solver::Control;
use privpref::{Error, Result};
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

/// The settings every fit of a smooth objective takes.
#[derive(Clone, Debug)]
pub struct SolveArgs {
    /// `auto`, `newton`, `newton-cg`, `lbfgs` or `sgd`.
    pub solver: String,
    /// Relative KKT tolerance.
    pub tol: f64,
    /// Absolute KKT tolerance (0: off).
    pub tol_abs: f64,
    /// Outer iterations allowed.
    pub max_iter: usize,
    /// L-BFGS: pairs kept.
    pub memory: Option<usize>,
    /// L-BFGS: polishing iterations.
    pub polish_iters: Option<usize>,
    /// SGD: mini-batch size.
    pub batch: Option<usize>,
    /// SGD: epochs.
    pub epochs: Option<usize>,
    /// SGD: step rule (`const:ETA`, `invt:C`, `theory`, `lambda:L`, `statement`).
    pub step: Option<String>,
    /// SGD: shuffle each epoch (seeded by `seed`).
    pub shuffle: bool,
    /// SGD: `last` or `polyak`.
    pub average: Option<String>,
    /// SGD: the shuffle seed.
    pub seed: Option<u64>,
}

impl SolveArgs {
    /// The library's solver with its settings; a setting given for another solver is an error
    /// naming it (as the CLI's).
    pub fn solver(&self) -> Result<Solver> {
        let kind = SolverKind::parse(&self.solver)?;
        let sgd_given = [
            ("batch", self.batch.is_some()),
            ("epochs", self.epochs.is_some()),
            ("step", self.step.is_some()),
            ("shuffle", self.shuffle),
            ("average", self.average.is_some()),
        ];
        let lbfgs_given = [
            ("memory", self.memory.is_some()),
            ("polish_iters", self.polish_iters.is_some()),
        ];
        let takes_lbfgs = matches!(kind, SolverKind::Lbfgs | SolverKind::Auto);
        for (given, allowed, owner) in [
            (&sgd_given[..], kind == SolverKind::Sgd, "sgd"),
            (&lbfgs_given[..], takes_lbfgs, "lbfgs"),
        ] {
            if let Some((name, _)) = given.iter().find(|(_, g)| *g).filter(|_| !allowed) {
                return Err(Error::param(
                    name,
                    format!("{name}= applies only to solver=\"{owner}\", not \"{}\"", kind.name()),
                ));
            }
        }
        Ok(match kind {
            SolverKind::Lbfgs | SolverKind::Auto => {
                let mut o = LbfgsOptions::default();
                if let Some(m) = self.memory {
                    o.memory = m;
                }
                if let Some(k) = self.polish_iters {
                    o.polish_iters = k;
                }
                if kind == SolverKind::Lbfgs {
                    Solver::Lbfgs(o)
                } else {
                    Solver::Auto(o)
                }
            }
            SolverKind::Sgd => {
                let mut o = SgdOptions::default();
                if let Some(s) = &self.step {
                    o.step = StepRule::parse(s)?;
                }
                for (name, v, field) in [
                    ("batch", self.batch, &mut o.batch),
                    ("epochs", self.epochs, &mut o.epochs),
                ] {
                    match v {
                        Some(0) => return Err(Error::param(name, "must be at least 1, got 0")),
                        Some(v) => *field = v,
                        None => {}
                    }
                }
                o.shuffle = self.shuffle;
                if let Some(s) = self.seed {
                    o.seed = s;
                }
                if let Some(a) = &self.average {
                    o.average = match a.as_str() {
                        "last" => Averaging::Last,
                        "polyak" => Averaging::Polyak,
                        other => {
                            return Err(Error::param(
                                "average",
                                format!("unknown averaging `{other}` (expected last or polyak)"),
                            ))
                        }
                    };
                }
                Solver::Sgd(o)
            }
            other => other.into(),
        })
    }

    /// The stopping rule, with the caller's interrupt flag.
    pub fn control(&self, interrupt: Arc<AtomicBool>) -> Control {
        control(self.max_iter, self.tol, self.tol_abs, interrupt)
    }

    /// Complete fit options for `loss` over `set`.
    pub fn fit_options<S>(
        &self,
        loss: S,
        set: FeasibleSet,
        ridge: f64,
        linear_term: Option<Vec<f64>>,
        theta0: Option<Vec<f64>>,
        interrupt: Arc<AtomicBool>,
    ) -> Result<FitOptions<S>> {
        let mut o = FitOptions::new(loss, set);
        o.ridge = ridge;
        o.linear_term = linear_term;
        o.theta0 = theta0;
        o.solver = self.solver()?;
        o.control = self.control(interrupt);
        o.validate()?;
        Ok(o)
    }
}

/// The stopping rule of the CLI's `fit` (`--max-iter`, `--tol`, `--tol-abs`) with the caller's
/// interrupt flag.
pub fn control(max_iter: usize, tol: f64, tol_abs: f64, interrupt: Arc<AtomicBool>) -> Control {
    let mut c = Control::default();
    c.max_iter = max_iter;
    c.tol_rel = tol;
    c.tol_abs = tol_abs;
    c.interrupt = Some(interrupt);
    c
}

/// The feasible set named `constraint` (`theta-b`, `ball`, `sum-zero`, `none`) with `radius`.
pub fn feasible(constraint: &str, radius: Option<f64>) -> Result<FeasibleSet> {
    FeasibleSet::parse(constraint, radius)
}
