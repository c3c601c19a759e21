//! The solver-specific options of `privpref fit` (`--memory`, `--polish-iters` for L-BFGS; `--batch`, `--epochs`,
//! `--step`, `--shuffle`, `--average` for SGD): parsing, checks against the chosen solver, and
//! their JSON record.

use privpref::estimator::{Solver, SolverKind};
use privpref::solver::lbfgs::LbfgsOptions;
use privpref::solver::sgd::{Averaging, SgdOptions, StepRule};
use privpref::Error;
use serde_json::{json, Value};

/// The solver options as given on the command line (`None` / `false`: not given).
pub struct Given<'a> {
    /// `--memory` (L-BFGS).
    pub memory: Option<usize>,
    /// `--polish-iters` (L-BFGS).
    pub polish_iters: Option<usize>,
    /// `--sample-start` (L-BFGS): `on` or `off`.
    pub sample_start: Option<&'a str>,
    /// `--batch` (SGD).
    pub batch: Option<usize>,
    /// `--epochs` (SGD).
    pub epochs: Option<usize>,
    /// `--step` (SGD).
    pub step: Option<&'a str>,
    /// `--shuffle` (SGD).
    pub shuffle: bool,
    /// `--average` (SGD).
    pub average: Option<&'a str>,
    /// `--seed` (the shuffle seed of SGD; recorded only for the exact solvers).
    pub seed: Option<u64>,
}

/// The settings handed to the library: only the chosen solver's are used.
pub struct Settings {
    /// For `--solver lbfgs` (defaults otherwise).
    pub lbfgs: LbfgsOptions,
    /// For `--solver sgd` (defaults otherwise, but for the seed).
    pub sgd: SgdOptions,
}

impl Settings {
    /// The library's solver `kind` with these settings.
    pub fn solver(&self, kind: SolverKind) -> Solver {
        match kind {
            SolverKind::Lbfgs => Solver::Lbfgs(self.lbfgs),
            SolverKind::Sgd => Solver::Sgd(self.sgd),
            SolverKind::Auto => Solver::Auto(self.lbfgs),
            other => other.into(),
        }
    }
}

/// Checks that every given option applies to `solver`, parses and validates the values, and
/// fills in the defaults (memory 10; batch 1, epochs 1, step `theory`, no shuffle, last iterate).
pub fn settings(solver: SolverKind, g: &Given<'_>) -> Result<Settings, Error> {
    let sgd_only: [(&'static str, bool); 5] = [
        ("batch", g.batch.is_some()),
        ("epochs", g.epochs.is_some()),
        ("step", g.step.is_some()),
        ("shuffle", g.shuffle),
        ("average", g.average.is_some()),
    ];
    let lbfgs_only: [(&'static str, bool); 3] = [
        ("memory", g.memory.is_some()),
        ("polish-iters", g.polish_iters.is_some()),
        ("sample-start", g.sample_start.is_some()),
    ];
    for (owner, opts) in [(SolverKind::Sgd, &sgd_only[..]), (SolverKind::Lbfgs, &lbfgs_only[..])] {
        // `auto` may run L-BFGS, so it takes L-BFGS's options.
        if solver == owner || (solver == SolverKind::Auto && owner == SolverKind::Lbfgs) {
            continue;
        }
        if let Some((name, _)) = opts.iter().find(|(_, given)| *given) {
            return Err(Error::param(
                name,
                format!(
                    "--{name} applies only to --solver {}, not {}",
                    owner.name(),
                    solver.name()
                ),
            ));
        }
    }

    let mut lbfgs = LbfgsOptions::default();
    if let Some(m) = g.memory {
        lbfgs.memory = m;
    }
    if let Some(k) = g.polish_iters {
        lbfgs.polish_iters = k;
    }
    match g.sample_start {
        None => {}
        Some("on") => lbfgs.sample_start = true,
        Some("off") => lbfgs.sample_start = false,
        Some(other) => {
            return Err(Error::param(
                "sample-start",
                format!("expected on or off, got `{other}`"),
            ))
        }
    }
    lbfgs.validate()?;

    let defaults = SgdOptions::default();
    let at_least_one = |name: &'static str, v: Option<usize>, default: usize| match v {
        Some(0) => Err(Error::param(name, "must be at least 1, got 0")),
        Some(v) => Ok(v),
        None => Ok(default),
    };
    // Field by field from the defaults: settings the SGD solver may add keep their defaults.
    let mut sgd = defaults;
    sgd.step = g.step.map(parse_step).transpose()?.unwrap_or(defaults.step);
    sgd.batch = at_least_one("batch", g.batch, defaults.batch)?;
    sgd.epochs = at_least_one("epochs", g.epochs, defaults.epochs)?;
    sgd.shuffle = g.shuffle;
    sgd.seed = g.seed.unwrap_or(defaults.seed);
    sgd.average = g.average.map(parse_average).transpose()?.unwrap_or(defaults.average);
    sgd.validate()?;
    Ok(Settings { lbfgs, sgd })
}

/// Parses `--step` with [`StepRule::parse`]: `const:ETA`, `invt:C`, `theory`, `lambda:L`,
/// `statement`; the numbers must be finite and > 0.
fn parse_step(s: &str) -> Result<StepRule, Error> {
    StepRule::parse(s)
}

/// `--step` as it would be written on the command line (round-trips through [`parse_step`]).
fn step_name(r: &StepRule) -> String {
    r.to_string()
}

/// Parses `--average`: `last` or `polyak`.
fn parse_average(s: &str) -> Result<Averaging, Error> {
    match s {
        "last" => Ok(Averaging::Last),
        "polyak" => Ok(Averaging::Polyak),
        other => Err(Error::param(
            "average",
            format!("unknown averaging `{other}` (expected last or polyak)"),
        )),
    }
}

fn average_name(a: Averaging) -> &'static str {
    a.name()
}

/// The options the chosen solver actually used, as JSON fields (`null` for the other solvers'),
/// and the seed to record (the shuffle seed used by SGD; `--seed` as given otherwise).
pub fn record(solver: SolverKind, s: &Settings, seed: Option<u64>) -> [(&'static str, Value); 9] {
    let sgd = solver == SolverKind::Sgd;
    let if_sgd = |v: Value| if sgd { v } else { Value::Null };
    let if_lbfgs = |v: Value| {
        if matches!(solver, SolverKind::Lbfgs | SolverKind::Auto) {
            v
        } else {
            Value::Null
        }
    };
    [
        ("memory", if_lbfgs(json!(s.lbfgs.memory))),
        ("polish_iters", if_lbfgs(json!(s.lbfgs.polish_iters))),
        ("sample_start", if_lbfgs(json!(s.lbfgs.sample_start))),
        ("step", if_sgd(json!(step_name(&s.sgd.step)))),
        ("batch", if_sgd(json!(s.sgd.batch))),
        ("epochs", if_sgd(json!(s.sgd.epochs))),
        ("shuffle", if_sgd(json!(s.sgd.shuffle))),
        ("average", if_sgd(json!(average_name(s.sgd.average)))),
        ("seed", if sgd { json!(s.sgd.seed) } else { json!(seed) }),
    ]
}

/// The number of SGD steps `epochs · ⌈n / batch⌉` (for the progress granularity only; the
/// solver announces its own budget).
pub fn sgd_steps(s: &SgdOptions, n: usize) -> usize {
    s.epochs.saturating_mul(n.div_ceil(s.batch.max(1)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_rules_parse_and_round_trip() {
        for (s, want) in [
            ("const:0.1", StepRule::Const(0.1)),
            ("invt:2", StepRule::InvT(2.0)),
            ("theory", StepRule::Theory),
            ("lambda:1e-3", StepRule::TheoryLambda(1e-3)),
            ("statement", StepRule::Statement),
        ] {
            let r = parse_step(s).unwrap();
            assert_eq!(r, want, "{s}");
            assert_eq!(parse_step(&step_name(&r)).unwrap(), r, "{s}");
        }
        for bad in [
            "const",
            "const:",
            "const:abc",
            "const:-1",
            "const:0",
            "invt:0",
            "lambda:nan",
            "lambda:inf",
            "foo:1",
            "theory:1",
            "statement:2",
            "",
        ] {
            assert!(parse_step(bad).is_err(), "{bad:?} parsed");
        }
    }

    #[test]
    fn averaging_parses() {
        assert_eq!(parse_average("last").unwrap(), Averaging::Last);
        assert_eq!(parse_average("polyak").unwrap(), Averaging::Polyak);
        assert!(parse_average("foo").is_err());
    }
}
