//! K-wise (Plackett–Luce) estimators, one entry point: [`fit_kwise`] minimises the
//! [`GroupObjective`] of a [`GroupLossSpec`] over a feasible set with the same solvers and options
//! as the pairwise [`fit`](super::fit):
//!
//! * Plackett–Luce top-1 MLE (Chowdhury, Zhou & Natarajan (2024), eq. 11): `PlTop1` on chosen
//!   indices (or rankings, whose first entry is the choice);
//! * Plackett–Luce ranking MLE ("Provable protection of human judgements" (anon., 2025), Sec. 4.2),
//!   full (`J = K − 1`) or top-`J`: `PlRanking`;
//! * the debiased K-RR top-1 estimator (derived from Chowdhury, Zhou & Natarajan (2024), Sec. 4.4,
//!   App. C.4): `PlKrr { eps }` on choices privatised by [`KaryRr`](crate::mechanism::KaryRr) at
//!   the same `eps` and `K`. Post-processing of `ε`-label-LDP labels, hence `ε`-label-LDP; the loss
//!   is unbounded below, so keep a norm bound (`Θ_B`).
//!
//! As for the pairwise fits, the local guarantee follows the labels: [`fit_kwise`] on raw
//! choices attaches none (and says why), [`fit_kwise_privatized`] attaches the guarantee of the
//! choices' [`Provenance`](crate::privacy::Provenance) after checking that `pl-krr` at `ε` gets
//! choices randomised by K-RR at exactly that `ε` and `K`.

use super::{local_fit, local_guarantee, loss_words, no_provenance, run_solver, FitOptions};
use crate::data::GroupView;
use crate::error::{Error, Result};
use crate::loss::GroupLossSpec;
use crate::model::{Fit, Local};
use crate::objective::GroupObjective;
use crate::privacy::{PrivatizedLabels, Randomizer};
use crate::with_group_loss;

/// Fits `θ̂ = argmin_{θ ∈ set} F(θ)` for K-wise data (see [`GroupObjective`]). `Err` for invalid
/// input (including a loss that does not fit the data: a ranking loss on chosen indices, `J ≥ K`,
/// a K-RR loss for another `K`); a solver that did not converge returns `Ok` with a report
/// saying so.
///
/// The labels carry no provenance, so the model carries no local guarantee, even with the
/// `pl-krr` loss ([`Fit::no_guarantee`] says so); fit privatised choices with
/// [`fit_kwise_privatized`].
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
pub fn fit_kwise(data: GroupView<'_>, opts: &FitOptions<GroupLossSpec>) -> Result<Fit<Local<GroupLossSpec>>> {
    let mut model = fit_kwise_raw(data, opts)?;
    model.no_guarantee = Some(no_provenance(opts.loss.name(), opts.loss.eps()));
    Ok(model)
}

/// Fits `θ̂` as [`fit_kwise`] on privatised choices (`data` built with
/// `GroupLabels::Choice(labels.labels())`) and attaches the local guarantee of their provenance.
/// `pl-krr` at `ε` needs choices randomised by K-ary randomized response at exactly that `ε`
/// over the view's `K` ([`Randomizer::Krr`]); `pl-top1` accepts choices of any randomiser over
/// `K` labels, with a note that the estimate is biased.
///
/// # Errors
/// [`Error::ProvenanceMismatch`] when `data` holds rankings or other choices than `labels`, or
/// the loss or `K` does not fit the labels' randomiser; otherwise as [`fit_kwise`].
pub fn fit_kwise_privatized(
    data: GroupView<'_>,
    labels: &PrivatizedLabels,
    opts: &FitOptions<GroupLossSpec>,
) -> Result<Fit<Local<GroupLossSpec>>> {
    if data.is_ranking() {
        return Err(Error::ProvenanceMismatch {
            expected: "privatised choices (one label per sample)".into(),
            found: "rankings (no mechanism privatises rankings)".into(),
        });
    }
    labels.check_same(data.order())?;
    let p = labels.provenance();
    let k = data.k();
    if p.randomizer().num_labels() != k {
        return Err(Error::ProvenanceMismatch {
            expected: format!("choices randomised over the K = {k} alternatives of the data"),
            found: format!("randomised by {}", p.randomizer()),
        });
    }
    let expected = match opts.loss {
        GroupLossSpec::PlKrr { eps } => Some(Randomizer::Krr { eps, k }),
        GroupLossSpec::PlTop1 | GroupLossSpec::PlRanking { .. } => None,
    };
    let guarantee = local_guarantee(p, expected.as_ref(), &loss_words(opts.loss.name(), opts.loss.eps()))?;
    let mut model = fit_kwise_raw(data, opts)?;
    model.guarantee = Some(guarantee);
    model.detail.provenance = Some(p.clone());
    Ok(model)
}

fn fit_kwise_raw(data: GroupView<'_>, opts: &FitOptions<GroupLossSpec>) -> Result<Fit<Local<GroupLossSpec>>> {
    opts.validate()?;
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
    Ok(local_fit(report, opts))
}
