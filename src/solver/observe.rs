//! Progress hooks (an optional [`Observer`] in [`Control`](super::Control); the library never
//! prints).
//!
//! A solver calls [`Observer::on_start`] once, [`Observer::on_progress`] every
//! [`Control::observe_every`](super::Control::observe_every) iterations (SGD: steps), and
//! [`Observer::on_end`] with the final report. Observers only watch: they cannot change the
//! iterates, so a run with an observer gives the same bits as one without. To stop a run early,
//! set the [`Control::interrupt`](super::Control::interrupt) flag from the observer.

use super::SolveReport;
use std::sync::Arc;

/// What a solver announces when it starts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StartInfo {
    /// Solver name (`newton`, `lbfgs`, `sgd`, `sgd-one-pass`).
    pub solver: &'static str,
    /// Rows `n` (per replication for replicated SGD).
    pub n: usize,
    /// Parameters `d`.
    pub d: usize,
    /// The iteration budget: `max_iter` for Newton / L-BFGS, the total number of SGD steps.
    pub budget: usize,
}

/// A snapshot during a run. Fields a solver does not have at that moment are `NaN`.
#[derive(Debug, Clone, Copy)]
pub struct Progress<'a> {
    /// Solver name.
    pub solver: &'static str,
    /// Iterations (SGD: steps) done so far.
    pub iteration: usize,
    /// The budget of [`StartInfo::budget`].
    pub budget: usize,
    /// `F(θ)` at the current iterate (`NaN` when not computed, e.g. inside an SGD epoch).
    pub objective: f64,
    /// KKT residual at the current iterate (`NaN` when not computed).
    pub kkt_residual: f64,
    /// Reads of the data so far ([`SolveReport::data_passes`]); `None` for SGD, whose
    /// progress is counted in steps.
    pub data_passes: Option<usize>,
    /// The current iterate (replication 0 for replicated SGD).
    pub theta: &'a [f64],
}

/// Progress hooks; every method has an empty default.
pub trait Observer: Send + Sync {
    /// Called once before the first iteration.
    fn on_start(&self, _info: &StartInfo) {}
    /// Called every `observe_every` iterations.
    fn on_progress(&self, _p: &Progress<'_>) {}
    /// Called once with the final report.
    fn on_end(&self, _report: &SolveReport) {}
}

/// A shareable observer.
pub type SharedObserver = Arc<dyn Observer>;

/// An observer that records every progress call (for tests and for plotting convergence).
#[derive(Debug, Default)]
pub struct Recorder {
    events: std::sync::Mutex<Vec<RecordedEvent>>,
}

/// One recorded call of [`Recorder`].
#[derive(Debug, Clone, PartialEq)]
pub enum RecordedEvent {
    /// `on_start`.
    Start(StartInfo),
    /// `on_progress`: (iteration, objective, KKT residual).
    Progress {
        /// Iteration.
        iteration: usize,
        /// Objective (`NaN` if unknown).
        objective: f64,
        /// KKT residual (`NaN` if unknown).
        kkt_residual: f64,
    },
    /// `on_end`: (termination name, iterations).
    End {
        /// [`Termination::as_str`](super::Termination::as_str).
        termination: &'static str,
        /// Iterations.
        iterations: usize,
    },
}

impl Recorder {
    /// A new, empty recorder.
    pub fn new() -> Self {
        Self::default()
    }
    /// The calls so far.
    pub fn events(&self) -> Vec<RecordedEvent> {
        self.events.lock().map(|e| e.clone()).unwrap_or_default()
    }
    fn push(&self, e: RecordedEvent) {
        if let Ok(mut v) = self.events.lock() {
            v.push(e);
        }
    }
}

impl Observer for Recorder {
    fn on_start(&self, info: &StartInfo) {
        self.push(RecordedEvent::Start(*info));
    }
    fn on_progress(&self, p: &Progress<'_>) {
        self.push(RecordedEvent::Progress {
            iteration: p.iteration,
            objective: p.objective,
            kkt_residual: p.kkt_residual,
        });
    }
    fn on_end(&self, r: &SolveReport) {
        self.push(RecordedEvent::End {
            termination: r.termination.as_str(),
            iterations: r.counts.iterations,
        });
    }
}
