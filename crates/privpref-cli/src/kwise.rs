//! `privpref fit --loss pl-top1|pl-ranking|pl-krr --k K [--eps E] [--top J]`: K-wise
//! (Plackett–Luce) fits.
//!
//! * `--x`: float64 (or float32, widened) `.npy` of shape `n × K × d`: the `K` feature rows of
//!   each sample (raw per-alternative features, not differences);
//! * `--y`: integer `.npy` (`u8`, `u16`, `u32`, `i32`, `i64`, …): shape `n` (the chosen
//!   alternative) or `n × K` (a ranking, best first; each row a permutation of `0..K`);
//! * `--k K` must equal the file's `K` (a check that the right files were given);
//! * `pl-krr` needs `--eps` (the K-RR level the choices were privatised at); `pl-ranking` takes
//!   `--top J` (default `K − 1`, the full ranking) and needs rankings.
//!
//! The solver, constraint, ridge, linear term, weights, warm start and SGD options are those of
//! the pairwise fit; the JSON has the same fields plus `k`, `top` and `labels`. As for the
//! pairwise fit, the choices' provenance comes from their side-car (`privatize --mechanism krr`)
//! or `--assert-provenance krr:EPS:K`; without one there is no local guarantee.

use super::{central, fit_shared, pool, provenance, write_json, Failure, FitArgs};
use privpref::data::{npy, GroupLabels, GroupView};
use privpref::estimator::{fit_kwise, fit_kwise_privatized, SolverKind};
use privpref::feasible::FeasibleSet;
use privpref::loss::GroupLossSpec;
use privpref::privacy::PrivatizedLabels;
use privpref::Error;
use serde_json::json;

/// Whether `name` is a K-wise loss.
pub fn is_kwise(name: &str) -> bool {
    name.starts_with("pl-")
}

/// Runs a K-wise fit (module docs).
pub fn run(a: FitArgs) -> Result<(), Failure> {
    if a.central.central {
        return run_central(a);
    }
    if let Some(name) = a.central.stray() {
        return Err(Error::param(name, format!("--{name} applies only with --central")).into());
    }
    let loss = GroupLossSpec::parse(&a.loss, a.eps, a.top)?;
    let k_arg =
        a.k.ok_or_else(|| Error::param("k", format!("loss `{}` needs --k (alternatives per sample)", a.loss)))?;
    let set = FeasibleSet::parse_default(a.constraint.as_deref(), a.radius)?;
    let solver = SolverKind::parse(&a.solver)?;
    let settings = a.solver_settings(solver)?;
    let (x, n, k, d) = npy::read_array3(&a.x)?;
    if k != k_arg {
        return Err(Error::Shape(format!(
            "--k {k_arg} but {} holds {k} alternatives per sample (shape {n} × {k} × {d})",
            a.x.display()
        ))
        .into());
    }
    let (y, width) = npy::read_group_labels(&a.y, k)?;
    let prov = a.label_provenance()?;
    let privatized = prov.map(|p| PrivatizedLabels::new(y.clone(), p)).transpose()?;
    let labels = if width == 1 {
        GroupLabels::Choice(&y)
    } else {
        GroupLabels::Ranking(&y)
    };
    let weights = a.weights.as_ref().map(npy::read_vector).transpose()?;
    let view = GroupView::new(&x, n, k, d, labels, weights.as_deref())?;
    let opts = a.fit_options(loss, set, solver, &settings, n)?;
    let pool = pool(a.threads)?;
    let threads = pool.current_num_threads();
    let model = pool.install(|| match &privatized {
        Some(l) => fit_kwise_privatized(view, l, &opts),
        None => fit_kwise(view, &opts),
    })?;
    let r = &model.report;
    let top = match loss {
        GroupLossSpec::PlRanking { top } => top.unwrap_or(k - 1),
        _ => 1,
    };
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
    for (key, v) in [
        ("k", json!(k)),
        ("top", json!(top)),
        ("labels", json!(if width == 1 { "choice" } else { "ranking" })),
    ] {
        result.insert(key.into(), v);
    }
    let reason = model.no_guarantee.as_ref().map(ToString::to_string);
    provenance::insert_fields(&mut result, model.detail.provenance.as_ref(), reason.as_deref());
    let note = fit_shared::no_guarantee_note(loss.eps(), model.guarantee.as_ref(), reason.as_deref(), Some(k));
    if let Some(note) = note {
        eprintln!("{note}");
    }
    fit_shared::finish(&a.out, result, r)
}

/// `fit --central --mechanism private-mle --loss pl-top1|pl-ranking --k K`: the K-wise private
/// MLE of "Provable protection of human judgements" (anon., 2025), Thm 4.3, on clear rankings or
/// choices (standard DP of the record; no weights, no provenance).
fn run_central(a: FitArgs) -> Result<(), Failure> {
    if a.loss == "pl-krr" {
        return Err(Error::param(
            "loss",
            "--central fits the Plackett-Luce likelihood (pl-top1 or pl-ranking); pl-krr is a local estimator",
        )
        .into());
    }
    // --eps is the budget of the release here, not a level of the loss.
    let loss = GroupLossSpec::parse(&a.loss, None, a.top)?;
    let k_arg =
        a.k.ok_or_else(|| Error::param("k", format!("loss `{}` needs --k (alternatives per sample)", a.loss)))?;
    let set = FeasibleSet::parse_default(a.constraint.as_deref(), a.radius)?;
    let (x, n, k, d) = npy::read_array3(&a.x)?;
    if k != k_arg {
        return Err(Error::Shape(format!(
            "--k {k_arg} but {} holds {k} alternatives per sample (shape {n} × {k} × {d})",
            a.x.display()
        ))
        .into());
    }
    let (y, width) = npy::read_group_labels(&a.y, k)?;
    let labels = if width == 1 {
        GroupLabels::Choice(&y)
    } else {
        GroupLabels::Ranking(&y)
    };
    if a.weights.is_some() {
        return Err(Error::param(
            "weights",
            "sample weights are not supported by the central estimators (they change the sensitivity)",
        )
        .into());
    }
    let view = GroupView::new(&x, n, k, d, labels, None)?;
    let pool = pool(a.threads)?;
    let threads = pool.current_num_threads();
    let input = central::KwiseCentralInput {
        view,
        loss,
        set,
        eps: a.eps,
        seed: a.seed,
        control: a.control(),
    };
    let mut result = pool.install(|| central::run_kwise(&a.central, input))?;
    if let Some(obj) = result.as_object_mut() {
        obj.insert("threads".into(), json!(threads));
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
