//! A progress bar on stderr for SGD runs, driven by the library's [`Observer`] hooks (the
//! library itself never prints).
//!
//! The bar is drawn only when stderr is a terminal (otherwise it is hidden and writes nothing),
//! and it is cleared when the run ends — also when the solver returns an error and the bar is
//! dropped — so that an error stays the single line on stderr.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};
use privpref::solver::{Observer, Progress, SolveReport, StartInfo};
use std::io::IsTerminal;

/// Steps done / step budget of an SGD run.
pub struct StepBar {
    bar: ProgressBar,
}

impl StepBar {
    /// A bar on stderr, hidden when stderr is not a terminal.
    pub fn new() -> Self {
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
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
            theta: &[0.0, 0.0],
        });
        assert_eq!(b.bar.position(), 40);
        assert!(!b.bar.is_finished());
    }
}
