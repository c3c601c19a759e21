//! Progress on stderr, driven by the library's [`Observer`] hooks (the library itself never
//! prints): a bar of steps for SGD runs ([`StepBar`]), a live line for the exact solvers
//! ([`FitLine`]: solver, iteration, passes over the data, relative KKT residual, elapsed time).
//!
//! Both are drawn only when stderr is a terminal (otherwise they are hidden and write nothing;
//! `--quiet` turns them off), and cleared when the run ends — also when the solver returns an
//! error and the line is dropped — so that an error stays the single line on stderr.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};
use privpref::solver::{Observer, Progress, SolveReport, StartInfo};
use std::io::IsTerminal;

/// A draw target on stderr when it is a terminal, hidden otherwise.
fn stderr_target() -> ProgressDrawTarget {
    if std::io::stderr().is_terminal() {
        ProgressDrawTarget::stderr()
    } else {
        ProgressDrawTarget::hidden()
    }
}

/// One live line for an exact fit: `lbfgs · iteration 57 · 63 passes · KKT 3.2e-7 (4s)`. A
/// run that hands over to a second solver (`auto`) shows the second one's counts from its start.
pub struct FitLine {
    line: ProgressBar,
}

impl FitLine {
    /// A line on stderr, hidden when stderr is not a terminal.
    pub fn new() -> Self {
        Self::with_target(stderr_target())
    }

    fn with_target(target: ProgressDrawTarget) -> Self {
        let style = ProgressStyle::with_template("{spinner} {msg} ({elapsed})")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        let line = ProgressBar::with_draw_target(None, target)
            .with_style(style)
            .with_finish(ProgressFinish::AndClear);
        FitLine { line }
    }

    /// The line's text at progress `p`.
    fn message(p: &Progress<'_>) -> String {
        let mut m = format!("{} · iteration {}", p.solver, p.iteration);
        if let Some(passes) = p.data_passes {
            m.push_str(&format!(" · {passes} passes"));
        }
        if p.kkt_residual.is_finite() {
            m.push_str(&format!(" · KKT {:.1e}", p.kkt_residual));
        }
        m
    }
}

impl Observer for FitLine {
    fn on_start(&self, info: &StartInfo) {
        self.line
            .set_message(format!("{} · n = {}, d = {}", info.solver, info.n, info.d));
        self.line.tick();
    }
    fn on_progress(&self, p: &Progress<'_>) {
        self.line.set_message(Self::message(p));
        self.line.tick();
    }
    fn on_end(&self, _report: &SolveReport) {
        self.line.finish_and_clear();
    }
}

/// Steps done / step budget of an SGD run.
pub struct StepBar {
    bar: ProgressBar,
}

impl StepBar {
    /// A bar on stderr, hidden when stderr is not a terminal.
    pub fn new() -> Self {
        let target = stderr_target();
        let style = ProgressStyle::with_template("{msg} [{bar:40}] {human_pos}/{human_len} steps ({eta})")
            .map(|s| s.progress_chars("=> "))
            .unwrap_or_else(|_| ProgressStyle::default_bar());
        let bar = ProgressBar::with_draw_target(Some(0), target)
            .with_style(style)
            .with_finish(ProgressFinish::AndClear);
        StepBar { bar }
    }
}

impl Observer for StepBar {
    fn on_start(&self, info: &StartInfo) {
        self.bar.set_message(info.solver);
        self.bar.set_length(info.budget as u64);
        self.bar.set_position(0);
    }
    fn on_progress(&self, p: &Progress<'_>) {
        self.bar.set_position(p.iteration as u64);
    }
    fn on_end(&self, _report: &SolveReport) {
        self.bar.finish_and_clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_bar_follows_the_run() {
        let b = StepBar::new();
        b.on_start(&StartInfo {
            solver: "sgd",
            n: 10,
            d: 2,
            budget: 250,
        });
        assert_eq!(b.bar.length(), Some(250));
        assert_eq!(b.bar.position(), 0);
        b.on_progress(&Progress {
            solver: "sgd",
            iteration: 40,
            budget: 250,
            objective: f64::NAN,
            kkt_residual: f64::NAN,
            data_passes: None,
            theta: &[0.0, 0.0],
        });
        assert_eq!(b.bar.position(), 40);
        assert!(!b.bar.is_finished());
    }

    /// The line says the solver, the iteration, the passes and the KKT residual when known,
    /// and is cleared at the end.
    #[test]
    fn the_fit_line_reports_iteration_passes_and_residual() {
        let p = |passes, kkt| Progress {
            solver: "lbfgs",
            iteration: 57,
            budget: 1000,
            objective: 0.5,
            kkt_residual: kkt,
            data_passes: passes,
            theta: &[0.0],
        };
        assert_eq!(
            FitLine::message(&p(Some(63), 3.24e-7)),
            "lbfgs · iteration 57 · 63 passes · KKT 3.2e-7"
        );
        assert_eq!(FitLine::message(&p(None, f64::NAN)), "lbfgs · iteration 57");
        let l = FitLine::with_target(ProgressDrawTarget::hidden());
        l.on_progress(&p(Some(63), 3.24e-7));
        assert_eq!(l.line.message(), "lbfgs · iteration 57 · 63 passes · KKT 3.2e-7");
        assert!(!l.line.is_finished());
    }
}
