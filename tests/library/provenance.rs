//! Guarantees follow the labels' provenance, not the loss:
//!
//! * library-privatised labels (CSPRNG) → the local guarantee with the labels' `ε`, mechanism
//!   and generator;
//! * a seeded simulation generator → the same guarantee, marked simulation-only;
//! * raw labels → no local guarantee, with the reason, and the same `θ̂`;
//! * an asserted provenance → a guarantee that says "asserted by the caller";
//! * `ε`, mechanism, `K` or user-partition mismatches, and labels that are not the privatised
//!   ones → [`Error::ProvenanceMismatch`], nothing fitted;
//! * `privatize` draws exactly what `randomize` draws from the same seeded stream.

use privpref::data::{GroupLabels, GroupView, PairwiseView, UserIndex};
use privpref::estimator::user_level::{fit_user_rr, fit_user_rr_privatized, UserRrOptions};
use privpref::estimator::{fit, fit_kwise, fit_kwise_privatized, fit_privatized, FitOptions};
use privpref::feasible::FeasibleSet;
use privpref::loss::{GroupLossSpec, LossSpec};
use privpref::mechanism::{simulation_rng, KaryRr, Mechanism, RandomizedResponse, RrTopK, RrWithPrior, UserLevelRr};
use privpref::privacy::{
    Generator, Neighbouring, NoiseRng, NoiseSource, Origin, PrivacyModel, PrivacyUnit, PrivatizedLabels, Provenance,
    Randomizer,
};
use privpref::sim::{btl_pairs, btl_users, pl_groups, theta_star, UserFeatures};
use privpref::Error;

const N: usize = 400;
const D: usize = 3;

fn pairs() -> privpref::data::PairwiseData {
    let theta = theta_star(D, 1.0, true, &mut simulation_rng(11)).unwrap();
    btl_pairs(N, &theta, &mut simulation_rng(12)).unwrap()
}

fn debiased(eps: f64) -> FitOptions {
    FitOptions::new(LossSpec::DebiasedRr { eps }, FeasibleSet::theta_b(2.0).unwrap())
}

fn mismatch(r: privpref::Result<privpref::model::Fit>) -> (String, String) {
    match r {
        Err(Error::ProvenanceMismatch { expected, found }) => (expected, found),
        Err(e) => panic!("expected a provenance mismatch, got the error {e}"),
        Ok(m) => panic!("expected a provenance mismatch, got a fit with {:?}", m.guarantee),
    }
}

#[test]
fn library_privatised_labels_get_the_guarantee_of_their_provenance() {
    let data = pairs();
    let private = RandomizedResponse::new(1.0)
        .unwrap()
        .privatize(&data.y, &mut NoiseRng::secure().unwrap())
        .unwrap();
    assert_eq!(private.len(), N);
    let p = private.provenance();
    assert_eq!(p.randomizer(), &Randomizer::Rr { eps: 1.0 });
    assert_eq!(p.origin(), Origin::Library(Generator::Csprng));
    assert!(!p.is_simulation_only());
    let view = PairwiseView::new(&data.x, N, D, private.labels(), None).unwrap();
    let model = fit_privatized(view, &private, &debiased(1.0)).unwrap();
    assert!(model.report.converged());
    let g = model.guarantee.as_ref().expect("a local guarantee");
    assert_eq!(g.eps, 1.0);
    assert_eq!(g.delta, 0.0);
    assert_eq!(g.model, PrivacyModel::Local);
    assert_eq!(g.unit, PrivacyUnit::Item);
    assert_eq!(g.neighbouring, Neighbouring::LabelChange);
    assert_eq!(g.noise, NoiseSource::Secure);
    assert!(g.mechanism.starts_with("randomized response"), "{}", g.mechanism);
    assert!(g.holds_for_real_data());
    assert!(
        g.assumptions.notes[0]
            .contains("randomised exactly once by privpref with binary randomized response at eps = 1")
            && g.assumptions.notes[0].contains("ChaCha20 keyed from OS entropy"),
        "{:?}",
        g.assumptions.notes
    );
    assert_eq!(model.detail.provenance.as_ref(), Some(p));
    assert!(model.no_guarantee.is_none());
    assert_eq!(g, &private.guarantee());
}

#[test]
fn a_seeded_generator_gives_a_simulation_only_guarantee() {
    let data = pairs();
    let rr = RandomizedResponse::new(1.0).unwrap();
    let private = rr.privatize(&data.y, &mut NoiseRng::seeded(7)).unwrap();
    // The same draws as the raw randomiser on the same seeded stream.
    assert_eq!(
        private.labels(),
        &rr.randomize(&data.y, &mut simulation_rng(7)).unwrap()[..]
    );
    let p = private.provenance();
    assert_eq!(p.origin(), Origin::Library(Generator::Simulation { seed: 7 }));
    assert!(p.is_simulation_only());
    let view = PairwiseView::new(&data.x, N, D, private.labels(), None).unwrap();
    let model = fit_privatized(view, &private, &debiased(1.0)).unwrap();
    let g = model.guarantee.unwrap();
    assert_eq!((g.eps, g.model), (1.0, PrivacyModel::Local));
    assert_eq!(g.noise, NoiseSource::Seeded(7));
    assert!(!g.holds_for_real_data());
    assert!(g.to_string().contains("simulation only"), "{g}");
    assert!(g.assumptions.notes.iter().any(|n| n.contains("void for real data")));
}

#[test]
fn raw_labels_get_no_local_guarantee_and_the_same_estimate() {
    let data = pairs();
    let private = RandomizedResponse::new(1.0)
        .unwrap()
        .privatize(&data.y, &mut NoiseRng::seeded(3))
        .unwrap();
    let view = PairwiseView::new(&data.x, N, D, private.labels(), None).unwrap();
    let with = fit_privatized(view, &private, &debiased(1.0)).unwrap();
    for loss in [
        LossSpec::DebiasedRr { eps: 1.0 },
        LossSpec::MleRr { eps: 1.0 },
        LossSpec::Mle,
    ] {
        let m = fit(view, &FitOptions::new(loss, FeasibleSet::theta_b(2.0).unwrap())).unwrap();
        assert!(m.guarantee.is_none(), "{loss:?}");
        assert!(m.detail.provenance.is_none());
        let why = m.no_guarantee.expect("a reason").to_string();
        assert!(why.contains("no provenance"), "{why}");
    }
    // The provenance changes the guarantee only, never the estimate.
    let without = fit(view, &debiased(1.0)).unwrap();
    assert_eq!(with.theta, without.theta);
}

#[test]
fn an_asserted_provenance_says_so() {
    let data = pairs();
    let y = RandomizedResponse::new(0.5)
        .unwrap()
        .randomize(&data.y, &mut simulation_rng(5))
        .unwrap();
    let asserted = PrivatizedLabels::asserted_by_caller(y, Randomizer::Rr { eps: 0.5 }).unwrap();
    assert_eq!(asserted.provenance().origin(), Origin::AssertedByCaller);
    let view = PairwiseView::new(&data.x, N, D, asserted.labels(), None).unwrap();
    let g = fit_privatized(view, &asserted, &debiased(0.5))
        .unwrap()
        .guarantee
        .unwrap();
    assert_eq!((g.eps, g.delta, g.model), (0.5, 0.0, PrivacyModel::Local));
    assert_eq!(g.noise, NoiseSource::External);
    assert!(
        g.assumptions.notes[0].contains("asserted by the caller"),
        "{:?}",
        g.assumptions.notes
    );
    assert!(g.to_string().contains("asserted by the caller"), "{g}");
    assert!(g.noise.describe().contains("asserted by the caller"));
    // Invalid assertions are parameter errors.
    assert!(Provenance::asserted_by_caller(Randomizer::Rr { eps: 0.0 }).is_err());
    assert!(Provenance::asserted_by_caller(Randomizer::Rr { eps: f64::NAN }).is_err());
    assert!(Provenance::asserted_by_caller(Randomizer::Krr { eps: 1.0, k: 1 }).is_err());
    assert!(Provenance::asserted_by_caller(Randomizer::Krr { eps: 1.0, k: 257 }).is_err());
    assert!(Provenance::asserted_by_caller(Randomizer::RrTopK {
        eps: 1.0,
        k: 4,
        num_labels: 3
    })
    .is_err());
    assert!(matches!(
        PrivatizedLabels::asserted_by_caller(vec![0, 1, 2], Randomizer::Rr { eps: 1.0 }),
        Err(Error::Data { .. })
    ));
}

#[test]
fn a_recorded_provenance_keeps_its_generator_and_is_unverified() {
    let rec = Provenance::from_record(Randomizer::Krr { eps: 2.0, k: 3 }, Generator::Simulation { seed: 9 }).unwrap();
    assert_eq!(
        rec.origin(),
        Origin::UnverifiedRecord(Generator::Simulation { seed: 9 })
    );
    let g = rec.guarantee();
    assert_eq!((g.eps, g.noise), (2.0, NoiseSource::Seeded(9)));
    assert!(!g.holds_for_real_data());
    assert!(
        g.assumptions.notes[0].contains("unverified provenance record"),
        "{:?}",
        g.assumptions.notes
    );
    // A record no trusted key signed is anyone's word: never a guarantee for real data, even
    // when it names a CSPRNG.
    let csprng = Provenance::from_record(Randomizer::Rr { eps: 1.0 }, Generator::Csprng).unwrap();
    assert!(!csprng.guarantee().holds_for_real_data());
    assert_eq!(csprng.guarantee().noise, NoiseSource::Unverified);
    assert!(csprng.is_unverified_record() && csprng.origin().verified_by().is_none());
}

#[test]
fn eps_mismatch_is_a_typed_error() {
    let data = pairs();
    let private = RandomizedResponse::new(1.0)
        .unwrap()
        .privatize(&data.y, &mut NoiseRng::seeded(1))
        .unwrap();
    let view = PairwiseView::new(&data.x, N, D, private.labels(), None).unwrap();
    // The review's case: a loss at ε = 3 on labels privatised at ε = 1.
    let (expected, found) = mismatch(fit_privatized(view, &private, &debiased(3.0)));
    assert!(expected.contains("binary randomized response at eps = 3"), "{expected}");
    assert!(found.contains("binary randomized response at eps = 1"), "{found}");
    let mle_rr = FitOptions::new(LossSpec::MleRr { eps: 3.0 }, FeasibleSet::theta_b(2.0).unwrap());
    mismatch(fit_privatized(view, &private, &mle_rr));
    // Exact comparison: the nearest double above 1 is another ε.
    mismatch(fit_privatized(view, &private, &debiased(1.0f64.next_up())));
    let e = fit_privatized(view, &private, &debiased(3.0)).unwrap_err();
    assert!(e.to_string().starts_with("label provenance mismatch"), "{e}");
}

#[test]
fn mechanism_and_k_mismatches_are_typed_errors() {
    let data = pairs();
    // K-RR with K = 2 is another randomiser than binary RR as far as the provenance goes.
    let krr2 = KaryRr::new(1.0, 2)
        .unwrap()
        .privatize(&data.y, &mut NoiseRng::seeded(2))
        .unwrap();
    let view = PairwiseView::new(&data.x, N, D, krr2.labels(), None).unwrap();
    let (expected, found) = mismatch(fit_privatized(view, &krr2, &debiased(1.0)));
    assert!(
        expected.contains("binary randomized response") && found.contains("K-ary"),
        "{expected} / {found}"
    );
    // Labels of a randomiser over K = 3 labels (that happen to be 0/1) in a pairwise fit.
    let y01: Vec<u8> = data.y.clone();
    let krr3 = PrivatizedLabels::asserted_by_caller(y01, Randomizer::Krr { eps: 1.0, k: 3 }).unwrap();
    let view3 = PairwiseView::new(&data.x, N, D, krr3.labels(), None).unwrap();
    let mle = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(2.0).unwrap());
    mismatch(fit_privatized(view3, &krr3, &mle));

    // K-wise: pl-krr needs K-RR at its ε over the view's K.
    let k = 3;
    let theta = theta_star(D, 1.0, false, &mut simulation_rng(21)).unwrap();
    let g = pl_groups(300, k, &theta, &mut simulation_rng(22)).unwrap();
    let choices = g.choices();
    let set = FeasibleSet::theta_b(3.0).unwrap();
    let plkrr = |eps| FitOptions::new(GroupLossSpec::PlKrr { eps }, set);
    let kwise_mismatch = |r: privpref::Result<privpref::model::Fit<privpref::model::Local<GroupLossSpec>>>| match r {
        Err(Error::ProvenanceMismatch { expected, found }) => (expected, found),
        other => panic!("expected a provenance mismatch, got {:?}", other.map(|m| m.guarantee)),
    };
    let good = KaryRr::new(1.5, k)
        .unwrap()
        .privatize(&choices, &mut NoiseRng::seeded(23))
        .unwrap();
    let gv = GroupView::new(&g.x, g.n, k, D, GroupLabels::Choice(good.labels()), None).unwrap();
    let m = fit_kwise_privatized(gv, &good, &plkrr(1.5)).unwrap();
    let gu = m.guarantee.unwrap();
    assert_eq!(
        (gu.eps, gu.model, gu.noise),
        (1.5, PrivacyModel::Local, NoiseSource::Seeded(23))
    );
    assert!(gu.mechanism.starts_with("K-ary randomized response"));
    let raw = fit_kwise(gv, &plkrr(1.5)).unwrap();
    assert!(raw.guarantee.is_none() && raw.no_guarantee.unwrap().to_string().contains("no provenance"));
    assert_eq!(raw.theta, m.theta);
    // ε mismatch.
    let (e, f) = kwise_mismatch(fit_kwise_privatized(gv, &good, &plkrr(1.0)));
    assert!(e.contains("eps = 1") && f.contains("eps = 1.5"), "{e} / {f}");
    // Wrong K: choices in 0..3 stated as K-RR over 4 labels.
    let k4 = PrivatizedLabels::asserted_by_caller(good.labels().to_vec(), Randomizer::Krr { eps: 1.5, k: 4 }).unwrap();
    let gv4 = GroupView::new(&g.x, g.n, k, D, GroupLabels::Choice(k4.labels()), None).unwrap();
    let (e, f) = kwise_mismatch(fit_kwise_privatized(gv4, &k4, &plkrr(1.5)));
    assert!(e.contains("K = 3") && f.contains("K = 4"), "{e} / {f}");
    // Binary RR labels on a K = 2 view with pl-krr.
    let g2 = pl_groups(200, 2, &theta, &mut simulation_rng(24)).unwrap();
    let rr = RandomizedResponse::new(1.5)
        .unwrap()
        .privatize(&g2.choices(), &mut NoiseRng::seeded(25))
        .unwrap();
    let gv2 = GroupView::new(&g2.x, g2.n, 2, D, GroupLabels::Choice(rr.labels()), None).unwrap();
    kwise_mismatch(fit_kwise_privatized(gv2, &rr, &plkrr(1.5)));
    // Rankings were never privatised.
    let rv = GroupView::new(&g.x, g.n, k, D, GroupLabels::Ranking(&g.ranking), None).unwrap();
    kwise_mismatch(fit_kwise_privatized(rv, &good, &plkrr(1.5)));
}

#[test]
fn labels_other_than_the_privatised_ones_are_refused() {
    let data = pairs();
    let private = RandomizedResponse::new(1.0)
        .unwrap()
        .privatize(&data.y, &mut NoiseRng::seeded(4))
        .unwrap();
    // The clear labels with the privatised labels' provenance.
    let view = PairwiseView::new(&data.x, N, D, &data.y, None).unwrap();
    let (_, found) = mismatch(fit_privatized(view, &private, &debiased(1.0)));
    assert!(found.contains("first at row"), "{found}");
    // Fewer rows.
    let short = PairwiseView::new(&data.x[..D * (N - 1)], N - 1, D, &private.labels()[..N - 1], None).unwrap();
    mismatch(fit_privatized(short, &private, &debiased(1.0)));
    // A library provenance cannot be moved to other labels.
    let (_, prov) = private.clone().into_parts();
    assert!(matches!(
        PrivatizedLabels::new(data.y.clone(), prov),
        Err(Error::InvalidParam { name: "provenance", .. })
    ));
}

#[test]
fn clear_label_losses_keep_the_guarantee_with_a_note() {
    let data = pairs();
    let private = RandomizedResponse::new(2.0)
        .unwrap()
        .privatize(&data.y, &mut NoiseRng::seeded(6))
        .unwrap();
    let view = PairwiseView::new(&data.x, N, D, private.labels(), None).unwrap();
    let mle = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(2.0).unwrap());
    let g = fit_privatized(view, &private, &mle).unwrap().guarantee.unwrap();
    assert_eq!(g.eps, 2.0);
    assert!(
        g.assumptions.notes.iter().any(|n| n.contains("biased")),
        "{:?}",
        g.assumptions.notes
    );
}

#[test]
fn user_level_labels_need_the_same_budget_and_users() {
    let d = 3;
    let theta = theta_star(d, 0.8, true, &mut simulation_rng(31)).unwrap();
    let counts: Vec<usize> = (0..40).map(|u| 1 + u % 5).collect();
    let ud = btl_users(
        &counts,
        &theta,
        UserFeatures::Sphere { radius: 2.0 },
        &mut simulation_rng(32),
    )
    .unwrap();
    let mech = UserLevelRr::new(2.0).unwrap();
    let private = mech
        .privatize(&ud.users, &ud.data.y, &mut NoiseRng::seeded(33))
        .unwrap();
    assert_eq!(
        private.labels(),
        &mech.randomize(&ud.users, &ud.data.y, &mut simulation_rng(33)).unwrap()[..]
    );
    assert_eq!(
        private.provenance().randomizer(),
        &Randomizer::UserLevelRr {
            eps: 2.0,
            counts: counts.clone()
        }
    );
    let n = ud.data.n;
    let view = PairwiseView::new(&ud.data.x, n, d, private.labels(), None).unwrap();
    let set = FeasibleSet::theta_b(1.0).unwrap();
    let m = fit_user_rr_privatized(view, &ud.users, &private, &UserRrOptions::new(2.0, set)).unwrap();
    let g = m.guarantee.unwrap();
    assert_eq!((g.eps, g.unit, g.model), (2.0, PrivacyUnit::User, PrivacyModel::Local));
    assert_eq!(g.noise, NoiseSource::Seeded(33));
    assert!(g.mechanism.starts_with("user-level randomized response"));
    let raw = fit_user_rr(view, &ud.users, &UserRrOptions::new(2.0, set)).unwrap();
    assert!(raw.guarantee.is_none() && raw.no_guarantee.is_some());
    assert_eq!(raw.theta, m.theta);
    // Another budget.
    mismatch(fit_user_rr_privatized(
        view,
        &ud.users,
        &private,
        &UserRrOptions::new(1.0, set),
    ));
    // Another partition of the same rows (the per-label levels eps/m_u change).
    let other = UserIndex::equal(n / 2, 2).unwrap();
    assert_eq!(other.n_rows(), n);
    let (e, f) = mismatch(fit_user_rr_privatized(
        view,
        &other,
        &private,
        &UserRrOptions::new(2.0, set),
    ));
    assert!(
        e.contains(&format!("{} users", n / 2)) && f.contains("40 users"),
        "{e} / {f}"
    );
    // Binary RR labels are not user-level labels.
    let rr = RandomizedResponse::new(2.0)
        .unwrap()
        .privatize(&ud.data.y, &mut NoiseRng::seeded(34))
        .unwrap();
    let v2 = PairwiseView::new(&ud.data.x, n, d, rr.labels(), None).unwrap();
    mismatch(fit_user_rr_privatized(
        v2,
        &ud.users,
        &rr,
        &UserRrOptions::new(2.0, set),
    ));
    // Counts that do not add up to the labels.
    assert!(matches!(
        PrivatizedLabels::asserted_by_caller(
            vec![0, 1, 1],
            Randomizer::UserLevelRr {
                eps: 1.0,
                counts: vec![1, 1]
            }
        ),
        Err(Error::Shape(_))
    ));
}

#[test]
fn prior_mechanisms_record_their_parameters() {
    let prior = [0.1, 0.4, 0.05, 0.3, 0.15];
    let n = 50;
    let priors: Vec<f64> = prior.iter().copied().cycle().take(5 * n).collect();
    let y: Vec<u8> = (0..n).map(|i| (i % 5) as u8).collect();
    let top = RrTopK::new(1.0, 3).unwrap();
    let p = top.privatize(&y, &priors, &mut NoiseRng::seeded(41)).unwrap();
    assert_eq!(
        p.labels(),
        &top.randomize(&y, &priors, &mut simulation_rng(41)).unwrap()[..]
    );
    assert_eq!(
        p.provenance().randomizer(),
        &Randomizer::RrTopK {
            eps: 1.0,
            k: 3,
            num_labels: 5
        }
    );
    assert!(p.guarantee().assumptions.notes.iter().any(|n| n.contains("prior")));
    let wp = RrWithPrior::new(2.0).unwrap();
    let (q, ks) = wp.privatize(&y, &priors, &mut NoiseRng::seeded(42)).unwrap();
    let (want, want_ks) = wp.randomize(&y, &priors, &mut simulation_rng(42)).unwrap();
    assert_eq!((q.labels(), &ks), (&want[..], &want_ks));
    assert_eq!(
        q.provenance().randomizer(),
        &Randomizer::RrWithPrior {
            eps: 2.0,
            num_labels: 5
        }
    );
    assert_eq!(q.guarantee().eps, 2.0);
}
