//! [`SgdObjective`]: what projected SGD needs from an objective beyond [`SmoothObjective`] — the
//! step schedule of a [`StepRule`] on its data, a curvature bound for the stability check, and
//! the steps themselves (crate-private: they run on the engine's internal state). Implemented
//! here, in the solver layer, for the pairwise [`Objective`] and the K-wise [`GroupObjective`],
//! so the objective layer knows nothing about SGD.

use super::engine::Iterates;
use super::minibatch::Scratch;
use super::one_pass::Setup;
use super::{Schedule, StepRule};
use crate::error::Result;
use crate::feasible::FeasibleSet;
use crate::loss::{GroupLoss, Loss};
use crate::objective::{GroupObjective, Objective, SmoothObjective};
use std::ops::Range;

pub(crate) mod sealed {
    use super::{Iterates, Range, Result, Scratch, Setup};

    /// The steps of [`super::SgdObjective`]. The trait is public only nominally, in a private
    /// module, so that it can be a supertrait (the sealed-trait pattern): its methods cannot be
    /// named or called outside the crate, hence `private_interfaces` is allowed.
    #[allow(private_interfaces)]
    pub trait Sealed {
        /// Runs SGD steps `steps` (positions of the visiting order for `batch = 1`, batch
        /// indices otherwise; `order[p]` is the sample at position `p`, data order without one).
        fn sgd_steps(
            &self,
            setup: &Setup,
            order: Option<&[usize]>,
            batch: usize,
            steps: Range<usize>,
            st: &mut Iterates,
            scratch: &mut Scratch,
        ) -> Result<()>;
    }
}

/// An objective projected SGD ([`super::solve`], [`super::one_pass()`]) can minimise.
pub trait SgdObjective: SmoothObjective + sealed::Sealed {
    /// The step schedule of `rule` on this objective's data (the theory rules compute their
    /// constants from the data).
    ///
    /// # Errors
    /// As [`StepRule::resolve`].
    fn sgd_schedule(&self, rule: &StepRule, set: &FeasibleSet) -> Result<Schedule>;
    /// A bound `L̄` on the mean per-sample curvature, `sup|ℓ''| · (1/W)Σ w_i‖x_i‖²` (one pass),
    /// for the stability check of the data-dependent step rules; `None` when the objective
    /// offers none (then no check is made).
    fn sgd_curvature(&self) -> Option<f64> {
        None
    }
}

#[allow(private_interfaces)]
impl<L: Loss> sealed::Sealed for Objective<'_, L> {
    fn sgd_steps(
        &self,
        setup: &Setup,
        order: Option<&[usize]>,
        batch: usize,
        steps: Range<usize>,
        st: &mut Iterates,
        scratch: &mut Scratch,
    ) -> Result<()> {
        super::pairwise_steps(self, setup, order, batch, steps, st, scratch)
    }
}

impl<L: Loss> SgdObjective for Objective<'_, L> {
    fn sgd_schedule(&self, rule: &StepRule, set: &FeasibleSet) -> Result<Schedule> {
        rule.resolve(self.data(), self.loss(), set)
    }
    fn sgd_curvature(&self) -> Option<f64> {
        Some(self.loss().curvature_sup() * Objective::column_second_moments(self).iter().sum::<f64>())
    }
}

#[allow(private_interfaces)]
impl<L: GroupLoss> sealed::Sealed for GroupObjective<'_, L> {
    fn sgd_steps(
        &self,
        setup: &Setup,
        order: Option<&[usize]>,
        batch: usize,
        steps: Range<usize>,
        st: &mut Iterates,
        scratch: &mut Scratch,
    ) -> Result<()> {
        super::group::group_steps(self, setup, order, batch, steps, st, scratch).map(|_| ())
    }
}

impl<L: GroupLoss> SgdObjective for GroupObjective<'_, L> {
    fn sgd_schedule(&self, rule: &StepRule, set: &FeasibleSet) -> Result<Schedule> {
        rule.resolve_group(self, set)
    }
}
