//! K-wise (Plackett–Luce) estimators, one entry point: [`fit_kwise`] minimises the
//! [`GroupObjective`] of a [`GroupLossSpec`] over a feasible set with the same solvers and options
//! as the pairwise [`fit`](super::fit):
//!
//! * Plackett–Luce top-1 MLE (Chowdhury, Zhou & Natarajan (2024), eq. 11): `PlTop1` on chosen
//!   indices (or rankings, whose first entry is the choice);
//! * Plackett–Luce ranking MLE ("Provable protection of human judgements" (anon., 2024), Sec. 4.2),
//!   full (`J = K − 1`) or top-`J`: `PlRanking`;
//! * the debiased K-RR top-1 estimator (derived from Chowdhury, Zhou & Natarajan (2024), Sec. 4.4,
//!   App. C.4): `PlKrr { eps }` on choices privatised by [`KaryRr`](crate::mechanism::KaryRr) at
//!   the same `eps` and `K`. Post-processing of `ε`-label-LDP labels, hence `ε`-label-LDP; the loss
//!   is unbounded below, so keep a norm bound (`Θ_B`).

use super::{run_solver, FitOptions};
use crate::data::GroupView;
use crate::error::Result;
use crate::loss::GroupLossSpec;
use crate::model::{FitConfig, FittedModel};
use crate::objective::GroupObjective;
use crate::privacy::Guarantee;
use crate::with_group_loss;

/// Fits `θ̂ = argmin_{θ ∈ set} F(θ)` for K-wise data (see [`GroupObjective`]). `Err` for invalid
/// input (including a loss that does not fit the data: a ranking loss on chosen indices, `J ≥ K`,
/// a K-RR loss for another `K`); a solver that did not converge returns `Ok` with a report
/// saying so.
///
/// ```
/// use privpref::{data::{GroupLabels, GroupView}, estimator::{fit_kwise, FitOptions},
///     feasible::FeasibleSet, loss::GroupLossSpec};
/// // Closed-form case T11 (tests/reference/README.md): one-hot items (d = K = 3), choices with counts (3, 1, 1):
/// // softmax(θ) = (0.6, 0.2, 0.2) on the sum-zero subspace.
/// let x: Vec<f64> = (0..5).flat_map(|_| [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]).collect();
/// let y = [0u8, 0, 0, 1, 2];
/// let view = GroupView::new(&x, 5, 3, 3, GroupLabels::Choice(&y), None)?;
/// let opts = FitOptions::new(GroupLossSpec::PlTop1, FeasibleSet::theta_b(5.0)?);
/// let model = fit_kwise(view, &opts)?;
/// let l3 = 3f64.ln();
/// for (a, b) in model.theta.iter().zip([2.0 * l3 / 3.0, -l3 / 3.0, -l3 / 3.0]) {
///     assert!((a - b).abs() < 1e-12);
/// }
/// # Ok::<(), privpref::Error>(())
/// ```
pub fn fit_kwise(data: GroupView<'_>, opts: &FitOptions<GroupLossSpec>) -> Result<FittedModel<GroupLossSpec>> {
    let k = data.k();
    let report = with_group_loss!(opts.loss, k, |loss| {
        let mut obj = GroupObjective::new(data, loss)?
            .with_ridge(opts.ridge)?
            .with_par(opts.control.par);
        if let Some(b) = &opts.linear_term {
            obj = obj.with_linear_term(b.clone())?;
        }
        run_solver(&obj, opts)?
    })?;
    let guarantee = opts.loss.eps().map(|e| Guarantee::local_krr(e, k));
    Ok(FittedModel {
        theta: report.theta.clone(),
        guarantee,
        config: FitConfig {
            loss: opts.loss,
            set: opts.set,
            ridge: opts.ridge,
            linear_term: opts.linear_term.is_some(),
            solver: opts.solver.name(),
        },
        report,
    })
}
