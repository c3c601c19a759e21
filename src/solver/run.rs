//! What every exact solver (Newton, Newton-CG, L-BFGS) does before its first iteration and after
//! its last: the input checks, the projected start and its evaluation, the certifier and the
//! column scales; and the report of the returned point with its certificate.

use super::certificate::{Certifier, Kkt};
use super::scales::ColumnScales;
use super::{all_finite, check_theta0, Control, SolveReport, Termination};
use crate::error::{Error, Result};
use crate::feasible::FeasibleSet;
use crate::objective::{Eval, SmoothObjective};
use std::time::Instant;

/// The state shared by the exact solvers: the problem, the current iterate and its evaluation,
/// the certifier and the report being filled in.
pub(crate) struct Run<'a, O> {
    pub obj: &'a O,
    pub set: &'a FeasibleSet,
    pub ctl: &'a Control,
    pub rep: SolveReport,
    /// The current iterate.
    pub theta: Vec<f64>,
    /// `F`, `∇F` and the scores, at `theta` except inside a step.
    pub ev: Eval,
    pub cert: Certifier,
    pub cols: ColumnScales,
    started: Instant,
}

impl<'a, O: SmoothObjective> Run<'a, O> {
    /// Checks the inputs (`ctl` and `theta0`; the solver's own options are the caller's),
    /// projects `theta0` (default 0) onto `set`, evaluates there with `first` (which returns whatever the
    /// solver wants to keep from that pass, e.g. that a fused pass also filled its Hessian), and
    /// sets up the certifier and column scales.
    ///
    /// # Errors
    /// Invalid `ctl` or `theta0`; [`Error::Numerical`] when `F` or `∇F` is not finite at the
    /// start.
    pub fn start<T>(
        name: &'static str,
        obj: &'a O,
        set: &'a FeasibleSet,
        theta0: Option<&[f64]>,
        ctl: &'a Control,
        budget: usize,
        first: impl FnOnce(&[f64], &mut Eval, &mut SolveReport) -> T,
    ) -> Result<(Self, T)> {
        ctl.validate()?;
        let started = Instant::now();
        let d = obj.dim();
        check_theta0(theta0, d)?;
        let mut rep = SolveReport::blank(name, vec![0.0; d], Termination::MaxIterations);
        let mut theta = theta0.map(<[f64]>::to_vec).unwrap_or_else(|| vec![0.0; d]);
        set.project(&mut theta);
        let mut ev = obj.new_eval();
        let kept = first(&theta, &mut ev, &mut rep);
        if obj.features_rejected() {
            // The caller reports the validation's verdict (an error, or a fit of the
            // normalised features), never this.
            return Err(Error::Numerical(
                "the features failed the validation taken with the first pass".into(),
            ));
        }
        if !all_finite(&ev) {
            let at = if theta.iter().all(|&v| v == 0.0) { " = 0" } else { "₀" };
            return Err(Error::Numerical(format!(
                "the objective or its gradient is not finite at the starting point θ{at}"
            )));
        }
        let cert = Certifier::new(obj, &ev, ctl, &mut rep);
        let cols = ColumnScales::of(obj, &mut rep);
        ctl.notify_start(name, obj.num_samples(), d, budget);
        let run = Run {
            obj,
            set,
            ctl,
            rep,
            theta,
            ev,
            cert,
            cols,
            started,
        };
        Ok((run, kept))
    }

    /// The plain evaluation of the start (one pass, counted).
    pub(crate) fn evaluate_start(obj: &O) -> impl FnOnce(&[f64], &mut Eval, &mut SolveReport) + '_ {
        move |theta, ev, rep| {
            obj.evaluate(theta, ev);
            rep.counts.grad_evals += 1;
        }
    }

    /// The relative KKT test with the current term magnitudes (cheap).
    pub fn estimate(&self) -> Kkt {
        self.cert.estimate(self.set, &self.theta, &self.ev.grad)
    }

    /// The certificate at the current point with the term magnitudes recomputed there, for the
    /// gradient `grad` (the evaluation's, or a more accurate one).
    pub fn certify(&mut self, grad: &[f64]) -> Kkt {
        self.cert.certify(self.obj, self.set, &self.ev, grad, &mut self.rep)
    }

    /// [`Run::certify`] with the evaluation's own gradient.
    pub(crate) fn certify_here(&mut self) -> Kkt {
        self.cert
            .certify(self.obj, self.set, &self.ev, &self.ev.grad, &mut self.rep)
    }

    /// Evaluates at `theta` with the term magnitudes (the certifier's fused pass), making it the
    /// current point.
    pub(crate) fn move_to(&mut self, theta: Vec<f64>) {
        self.cert.evaluate(self.obj, &theta, &mut self.ev, &mut self.rep);
        self.theta = theta;
    }

    /// The report: `termination`, the returned point and its certificate. `certified` is the
    /// certificate and objective computed at convergence (or by the solver's own final check);
    /// without it, the residual at the last iterate with the term magnitudes recomputed there
    /// when its evaluation is finite, else the cheap estimate.
    pub fn finish(mut self, termination: Termination, certified: Option<(Kkt, f64)>) -> SolveReport {
        self.rep.termination = termination;
        let k = match certified {
            Some((k, f)) => {
                self.rep.certificate.objective = f;
                k
            }
            None => {
                self.rep.certificate.objective = self.ev.value;
                if all_finite(&self.ev) && self.ev.theta == self.theta {
                    self.certify_here()
                } else {
                    self.estimate()
                }
            }
        };
        Certifier::record(&k, &mut self.rep);
        let (sz, radius) = (self.set.sum_zero(), self.set.radius());
        self.rep.certificate.certified_global =
            termination.is_converged() && (O::CONVEX || radius.is_some_and(|b| self.obj.convex_on_ball(b, sz)));
        self.rep.theta = self.theta;
        self.rep.counts.elapsed = self.started.elapsed();
        self.ctl.notify_end(&self.rep);
        self.rep
    }
}
