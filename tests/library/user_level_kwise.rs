//! User-level label DP beyond pairs and users: the K-wise (Plackett–Luce) user-level estimators
//! (K = 2 reproduces the pairwise ones, the PL gradient bound by enumeration over rankings, the
//! gradients the engine uses against finite differences of an independently written likelihood,
//! a user's clipped contribution), user-level K-RR, and the group-privacy DP-SGD baseline
//! (its conversion in closed form and as the explicit chain sum, its guarantee, its refusals).

use privpref::data::{GroupLabels, GroupView, PairwiseView, UserIndex};
use privpref::estimator::label_sgd::theory::group_privacy;
use privpref::estimator::user_level::{
    aup_rlhf, aup_rlhf_kwise, fit_user_rr, fit_user_rr_kwise, group_dpsgd, group_privacy_split, pl_gradient_bound,
    theory, user_dpsgd, user_dpsgd_kwise, AupOptions, GroupDpSgdOptions, UserDpSgdOptions, UserOutput, UserRrOptions,
};
use privpref::feasible::FeasibleSet;
use privpref::loss::GroupLossSpec;
use privpref::mechanism::{simulation_rng, uniform_f64, UserLevelRr};
use privpref::privacy::rdp::Accountant;
use privpref::privacy::{NoiseRng, PrivacyUnit};
use privpref::sim::{btl_users_equal, theta_star, UserFeatures};
use privpref::Error;

/// Pairwise user data on the sphere `‖x‖ = 1` (L = ½) and the same data as two-alternative
/// groups `φ₀ = −x/2`, `φ₁ = x/2` (so `φ₁ − φ₀ = x` exactly), choice = the pairwise label.
fn pairs_and_groups(n_users: usize, m: usize, seed: u64) -> (privpref::sim::UserLevelData, Vec<f64>, Vec<u8>) {
    let th = theta_star(3, 1.0, true, &mut simulation_rng(seed)).unwrap();
    let ud = btl_users_equal(
        n_users,
        m,
        &th,
        UserFeatures::Sphere { radius: 1.0 },
        &mut simulation_rng(seed + 1),
    )
    .unwrap();
    let gx: Vec<f64> = ud
        .data
        .x
        .chunks(3)
        .flat_map(|x| {
            let a: Vec<f64> = x.iter().map(|v| -0.5 * v).collect();
            let b: Vec<f64> = x.iter().map(|v| 0.5 * v).collect();
            a.into_iter().chain(b)
        })
        .collect();
    let ranking: Vec<u8> = ud.data.y.iter().flat_map(|&y| [y, 1 - y]).collect();
    (ud, gx, ranking)
}

fn max_abs_diff(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max)
}

/// K = 2: user-wise DP-SGD and AUP-RLHF on two-alternative groups (top-1 choice or the ranking
/// of two) give the pairwise estimators' numbers with the same seed (the same draws; the
/// gradients agree to rounding), and so does the user-level RR estimator on the same labels.
#[test]
fn k2_reproduces_the_pairwise_estimators() {
    let (ud, gx, ranking) = pairs_and_groups(60, 5, 301);
    let n = ud.data.n;
    let pv = ud.data.view().unwrap();
    let choice_view = GroupView::new(&gx, n, 2, 3, GroupLabels::Choice(&ud.data.y), None).unwrap();
    let rank_view = GroupView::new(&gx, n, 2, 3, GroupLabels::Ranking(&ranking), None).unwrap();
    assert_eq!(choice_view.to_pairwise().unwrap().x, ud.data.x);

    let mut o = UserDpSgdOptions::new(2.0, 1e-5, 20.0, 60, 0.3, 2.0);
    o.set = FeasibleSet::theta_b(1.0).unwrap();
    o.output = UserOutput::TailAverage;
    let pair = user_dpsgd(pv, &ud.users, &o, &mut NoiseRng::seeded(7)).unwrap();
    for (view, loss) in [
        (choice_view, GroupLossSpec::PlTop1),
        (rank_view, GroupLossSpec::PlRanking { top: None }),
    ] {
        let kw = user_dpsgd_kwise(view, &ud.users, loss, &o, &mut NoiseRng::seeded(7)).unwrap();
        assert!(
            max_abs_diff(&kw.theta, &pair.theta) < 1e-12,
            "{:?} vs {:?}",
            kw.theta,
            pair.theta
        );
        assert_eq!(kw.detail.noise_std, pair.detail.noise_std);
        assert_eq!(kw.guarantee.as_ref().unwrap().eps, pair.guarantee.as_ref().unwrap().eps);
        // A different seed moves the result (the comparison is not vacuous).
        let other = user_dpsgd_kwise(view, &ud.users, loss, &o, &mut NoiseRng::seeded(8)).unwrap();
        assert!(max_abs_diff(&other.theta, &pair.theta) > 1e-3);
    }

    let mut a = AupOptions::new(3.0, 1e-5, 0.5);
    a.steps = 30;
    a.step_size = 2.0;
    a.set = FeasibleSet::theta_b(1.0).unwrap();
    for tau in [None, Some(0.6)] {
        a.tau = tau;
        let pair = aup_rlhf(pv, &ud.users, &a, &mut NoiseRng::seeded(9)).unwrap();
        let kw = aup_rlhf_kwise(
            choice_view,
            &ud.users,
            GroupLossSpec::PlTop1,
            &a,
            &mut NoiseRng::seeded(9),
        )
        .unwrap();
        assert!(
            max_abs_diff(&kw.theta, &pair.theta) < 1e-12,
            "{:?} vs {:?}",
            kw.theta,
            pair.theta
        );
        assert_eq!(kw.detail.noise_std, pair.detail.noise_std);
        assert_eq!(kw.detail.halted, pair.detail.halted);
    }

    // User-level RR: K-RR at ε/m on the choices is binary RR; the debiased PL estimator at K = 2
    // is the binary debiased estimator.
    let yt = UserLevelRr::new(2.0)
        .unwrap()
        .randomize(&ud.users, &ud.data.y, &mut simulation_rng(11))
        .unwrap();
    let ro = UserRrOptions::new(2.0, FeasibleSet::theta_b(1.0).unwrap());
    let pv2 = PairwiseView::new(&ud.data.x, n, 3, &yt, None).unwrap();
    let pair = fit_user_rr(pv2, &ud.users, &ro).unwrap();
    let gv = GroupView::new(&gx, n, 2, 3, GroupLabels::Choice(&yt), None).unwrap();
    let kw = fit_user_rr_kwise(gv, &ud.users, &ro).unwrap();
    assert!(
        max_abs_diff(&kw.theta, &pair.theta) < 1e-7,
        "{:?} vs {:?}",
        kw.theta,
        pair.theta
    );
}

/// The PL negative log-likelihood of the top `j_top` positions of `order`, written directly from
/// the product of softmaxes (independent of the library's loss code).
fn pl_nll(phi: &[Vec<f64>], order: &[usize], j_top: usize, theta: &[f64]) -> f64 {
    let u: Vec<f64> = phi
        .iter()
        .map(|p| p.iter().zip(theta).map(|(a, b)| a * b).sum())
        .collect();
    let mut nll = 0.0;
    for j in 0..j_top {
        let denom: f64 = order[j..].iter().map(|&k| u[k].exp()).sum();
        nll -= u[order[j]] - denom.ln();
    }
    nll
}

/// Central finite differences of [`pl_nll`] in θ.
fn fd_grad(phi: &[Vec<f64>], order: &[usize], j_top: usize, theta: &[f64]) -> Vec<f64> {
    let h = 1e-6;
    (0..theta.len())
        .map(|c| {
            let (mut p, mut m) = (theta.to_vec(), theta.to_vec());
            p[c] += h;
            m[c] -= h;
            (pl_nll(phi, order, j_top, &p) - pl_nll(phi, order, j_top, &m)) / (2.0 * h)
        })
        .collect()
}

fn permutations(k: usize) -> Vec<Vec<usize>> {
    if k == 1 {
        return vec![vec![0]];
    }
    let mut out = Vec::new();
    for p in permutations(k - 1) {
        for at in 0..=p.len() {
            let mut q = p.clone();
            q.insert(at, k - 1);
            out.push(q);
        }
    }
    out
}

fn norm(v: &[f64]) -> f64 {
    v.iter().map(|x| x * x).sum::<f64>().sqrt()
}

/// `‖∇_θ ℓ‖ ≤ 2LJ` for the PL loss over the top `J` positions when the alternatives of a sample
/// differ by at most `2L`: enumerating every ranking of K ∈ {2, 3, 4} alternatives on random
/// features in the `L`-ball and random θ (finite differences of the directly written
/// likelihood) never exceeds it, and the adversarial configuration (ranked-first alternatives
/// at `−L e`, the rest at `+L e`, θ = t·e) comes within 2 % of it — so a bound of `2L` for
/// J > 1 (or `2LK` with the wrong K) would fail one side.
#[test]
fn pl_gradient_bound_by_enumeration_over_rankings() {
    let l = 0.7;
    let d = 3;
    let mut rng = simulation_rng(404);
    for k in 2..=4usize {
        let perms = permutations(k);
        assert_eq!(perms.len(), (1..=k).product::<usize>());
        for j_top in 1..k {
            let bound = pl_gradient_bound(l, j_top);
            assert!((bound - 2.0 * l * j_top as f64).abs() < 1e-15);
            let mut worst = 0.0f64;
            for _ in 0..30 {
                let phi: Vec<Vec<f64>> = (0..k)
                    .map(|_| {
                        let g: Vec<f64> = (0..d).map(|_| 2.0 * uniform_f64(&mut rng) - 1.0).collect();
                        let r = l * uniform_f64(&mut rng).sqrt() / norm(&g);
                        g.iter().map(|v| v * r).collect()
                    })
                    .collect();
                let scale = 10.0 * uniform_f64(&mut rng);
                let theta: Vec<f64> = (0..d).map(|_| scale * (2.0 * uniform_f64(&mut rng) - 1.0)).collect();
                for o in &perms {
                    worst = worst.max(norm(&fd_grad(&phi, o, j_top, &theta)));
                }
            }
            assert!(worst <= bound * (1.0 + 1e-6), "K = {k}, J = {j_top}: {worst} > {bound}");
            // Adversarial: alternatives 0..J at −L e₀, the rest at +L e₀, θ = 12 e₀; the ranking
            // (0, 1, …) puts the low scores first, each stage contributing ≈ 2L e₀.
            let phi: Vec<Vec<f64>> = (0..k)
                .map(|a| {
                    let s = if a < j_top { -l } else { l };
                    vec![s, 0.0, 0.0]
                })
                .collect();
            let theta = [12.0, 0.0, 0.0];
            let best = perms
                .iter()
                .map(|o| norm(&fd_grad(&phi, o, j_top, &theta)))
                .fold(0.0, f64::max);
            assert!(
                best <= bound * (1.0 + 1e-6) && best >= 0.98 * bound,
                "K = {k}, J = {j_top}: {best} vs {bound}"
            );
        }
    }
}

/// K-wise data in the `L`-ball: `n` samples of `k` alternatives, full rankings drawn uniformly.
fn kwise_data(n: usize, k: usize, l: f64, seed: u64) -> (Vec<f64>, Vec<u8>) {
    let mut rng = simulation_rng(seed);
    let d = 3;
    let mut x = Vec::with_capacity(n * k * d);
    for _ in 0..n * k {
        let g: Vec<f64> = (0..d).map(|_| 2.0 * uniform_f64(&mut rng) - 1.0).collect();
        let r = l * 0.999 / norm(&g);
        x.extend(g.iter().map(|v| v * r));
    }
    let mut ranking = Vec::with_capacity(n * k);
    for _ in 0..n {
        let mut p: Vec<u8> = (0..k as u8).collect();
        for j in (1..k).rev() {
            let s = ((uniform_f64(&mut rng) * (j + 1) as f64) as usize).min(j);
            p.swap(j, s);
        }
        ranking.extend(p);
    }
    (x, ranking)
}

/// The per-user gradient the K-wise engine steps on is the finite-difference gradient of the
/// directly written likelihood averaged over the user's samples (one user, full batch, one step
/// from θ₀ with a negligible noise multiplier: θ₁ = θ₀ − η g).
#[test]
fn kwise_engine_steps_on_the_pl_gradient() {
    let (k, m, l) = (4usize, 5usize, 0.5);
    let (x, ranking) = kwise_data(m, k, l, 505);
    let view = GroupView::new(&x, m, k, 3, GroupLabels::Ranking(&ranking), None).unwrap();
    let users = UserIndex::equal(1, m).unwrap();
    let theta0 = vec![0.4, -0.8, 1.1];
    for j_top in 1..k {
        // C = 3.5 > 2LJ (never clips); noise std σC = 3.5e-9.
        let mut o = UserDpSgdOptions::new(1.0, 1e-5, 1.0, 1, 3.5, 1.0);
        o.noise_multiplier = Some(1e-9);
        o.theta0 = Some(theta0.clone());
        let fit = user_dpsgd_kwise(
            view,
            &users,
            GroupLossSpec::PlRanking { top: Some(j_top) },
            &o,
            &mut NoiseRng::seeded(1),
        )
        .unwrap();
        let mut want = vec![0.0; 3];
        for i in 0..m {
            let phi: Vec<Vec<f64>> = (0..k)
                .map(|r| x[(i * k + r) * 3..(i * k + r + 1) * 3].to_vec())
                .collect();
            let order: Vec<usize> = ranking[i * k..(i + 1) * k].iter().map(|&v| usize::from(v)).collect();
            for (w, g) in want.iter_mut().zip(fd_grad(&phi, &order, j_top, &theta0)) {
                *w += g / m as f64;
            }
        }
        let got: Vec<f64> = theta0.iter().zip(&fit.theta).map(|(a, b)| a - b).collect();
        assert!(max_abs_diff(&got, &want) < 1e-6, "J = {j_top}: {got:?} vs {want:?}");
        assert!(norm(&got) <= pl_gradient_bound(l, j_top));
    }
}

/// A user's contribution is clipped to the stated bound: two datasets that differ in all
/// rankings of one user, one full-batch step with the same seed (same noise): the iterates
/// differ by at most `2Cη/ñ`, and without active clipping by at most `2·(2LJ)·η/ñ`.
#[test]
fn kwise_user_contribution_is_clipped() {
    let (n_users, m, k, l) = (8usize, 4usize, 4usize, 0.5);
    let (x, ranking) = kwise_data(n_users * m, k, l, 606);
    let users = UserIndex::equal(n_users, m).unwrap();
    // User 3's rankings reversed.
    let mut other = ranking.clone();
    for i in users.rows(3) {
        other[i * k..(i + 1) * k].reverse();
    }
    let (va, vb) = (
        GroupView::new(&x, n_users * m, k, 3, GroupLabels::Ranking(&ranking), None).unwrap(),
        GroupView::new(&x, n_users * m, k, 3, GroupLabels::Ranking(&other), None).unwrap(),
    );
    let theta0 = vec![2.0, -1.0, 0.5];
    let eta = 3.0;
    let nb = n_users as f64;
    let loss = GroupLossSpec::PlRanking { top: None };
    let step = |view, clip: f64| {
        let mut o = UserDpSgdOptions::new(1.0, 1e-5, nb, 1, clip, eta);
        o.theta0 = Some(theta0.clone());
        user_dpsgd_kwise(view, &users, loss, &o, &mut NoiseRng::seeded(3))
            .unwrap()
            .theta
    };
    let clip = 0.05;
    let gap = norm(
        &step(va, clip)
            .iter()
            .zip(step(vb, clip))
            .map(|(a, b)| a - b)
            .collect::<Vec<_>>(),
    );
    assert!(gap <= 2.0 * clip * eta / nb * (1.0 + 1e-12), "{gap}");
    assert!(gap > 0.5 * clip * eta / nb, "clipping should be active: {gap}");
    let big = 100.0;
    let gap = norm(
        &step(va, big)
            .iter()
            .zip(step(vb, big))
            .map(|(a, b)| a - b)
            .collect::<Vec<_>>(),
    );
    let bound = 2.0 * pl_gradient_bound(l, k - 1) * eta / nb;
    assert!(gap <= bound, "{gap} > {bound}");
    assert!(
        gap > 2.0 * clip * eta / nb,
        "the unclipped gap exceeds the clipped bound: {gap}"
    );
}

/// AUP-RLHF on K-wise data: the default radius is the diameter `4LJ` of the user-gradient ball
/// (read back from the noise std), the feature bound is checked on within-sample differences,
/// and pl-krr is refused.
#[test]
fn kwise_aup_radius_and_validation() {
    let (n_users, m, k, l) = (30usize, 3usize, 3usize, 0.5);
    let (x, ranking) = kwise_data(n_users * m, k, l, 707);
    let users = UserIndex::equal(n_users, m).unwrap();
    let view = GroupView::new(&x, n_users * m, k, 3, GroupLabels::Ranking(&ranking), None).unwrap();
    let mut o = AupOptions::new(2.0, 1e-5, l);
    o.steps = 20;
    for (loss, j) in [
        (GroupLossSpec::PlTop1, 1usize),
        (GroupLossSpec::PlRanking { top: None }, k - 1),
    ] {
        let fit = aup_rlhf_kwise(view, &users, loss, &o, &mut NoiseRng::seeded(5)).unwrap();
        let tau = 2.0 * pl_gradient_bound(l, j);
        let theory_tau = theory::tau(n_users, 3, m, 2.0, 20, 1e-5, l);
        assert!(theory_tau > tau);
        let want = theory::oracle_noise_std(fit.detail.noise_multiplier, tau, 2.0, 20, 1e-5, n_users as f64);
        assert!((fit.detail.noise_std - want).abs() <= 1e-12 * want, "J = {j}");
        assert_eq!(fit.guarantee.as_ref().unwrap().unit, PrivacyUnit::User);
    }
    // Differences up to 2·0.999·L: a bound of 0.45 is violated.
    let mut tight = o.clone();
    tight.feature_bound = 0.45;
    let err = aup_rlhf_kwise(view, &users, GroupLossSpec::PlTop1, &tight, &mut NoiseRng::seeded(5)).unwrap_err();
    assert!(matches!(err, Error::FeatureBound { .. }), "{err:?}");
    let err = aup_rlhf_kwise(
        view,
        &users,
        GroupLossSpec::PlKrr { eps: 1.0 },
        &o,
        &mut NoiseRng::seeded(5),
    )
    .unwrap_err();
    assert!(matches!(err, Error::InvalidParam { .. }), "{err:?}");
    let d = UserDpSgdOptions::new(1.0, 1e-5, 5.0, 3, 1.0, 1.0);
    let err = user_dpsgd_kwise(
        view,
        &users,
        GroupLossSpec::PlKrr { eps: 1.0 },
        &d,
        &mut NoiseRng::seeded(5),
    )
    .unwrap_err();
    assert!(matches!(err, Error::InvalidParam { .. }), "{err:?}");
}

/// User-level K-RR keeps each choice with probability `e^{ε/m}/(e^{ε/m} + K − 1)` and reports
/// each other alternative with `1/(e^{ε/m} + K − 1)` (frequencies within 4 standard errors).
#[test]
fn user_level_krr_rates() {
    let (n_users, m, k, eps) = (3000usize, 4usize, 3usize, 2.0);
    let users = UserIndex::equal(n_users, m).unwrap();
    let choices: Vec<u8> = (0..n_users * m).map(|i| (i % k) as u8).collect();
    let out = UserLevelRr::new(eps)
        .unwrap()
        .randomize_choices(&users, &choices, k, &mut simulation_rng(808))
        .unwrap();
    let e = (eps / m as f64).exp();
    let keep = e / (e + k as f64 - 1.0);
    let n = choices.len() as f64;
    let kept = choices.iter().zip(&out).filter(|(a, b)| a == b).count() as f64 / n;
    let up = choices
        .iter()
        .zip(&out)
        .filter(|(a, b)| (**a as usize + 1) % k == **b as usize)
        .count() as f64
        / n;
    let se = (keep * (1.0 - keep) / n).sqrt();
    assert!((kept - keep).abs() < 4.0 * se, "{kept} vs {keep}");
    let other = 1.0 / (e + k as f64 - 1.0);
    assert!(
        (up - other).abs() < 4.0 * (other * (1.0 - other) / n).sqrt(),
        "{up} vs {other}"
    );
    let bad =
        UserLevelRr::new(eps)
            .unwrap()
            .randomize_choices(&users, &vec![3u8; n_users * m], k, &mut simulation_rng(1));
    assert!(matches!(bad, Err(Error::Data { .. })));
}

/// The group-privacy split inverts the conversion: `m ε₀ = ε` and the explicit chain sum
/// `δ₀ Σ_{j<m} e^{jε₀}` (k single-label changes, one after the other) is `δ`; the library's
/// forward conversion agrees; the textbook `m e^{(m−1)ε₀} δ₀` is larger. Reference:
/// (ε, δ, m) = (3, 1e-5, 10) gives δ₀ = 1.8331096e-7 (closed form δ(e^0.3 − 1)/(e^3 − 1)).
#[test]
fn group_privacy_split_inverts_the_conversion() {
    let (e0, d0) = group_privacy_split(3.0, 1e-5, 10).unwrap();
    assert!((e0 - 0.3).abs() < 1e-15);
    assert!((d0 / 1.833_109_6e-7 - 1.0).abs() < 1e-7, "{d0}");
    for &(eps, delta) in &[(0.5, 1e-6), (3.0, 1e-5), (8.0, 1e-5)] {
        for &m in &[1usize, 2, 5, 10, 50, 200] {
            let (e0, d0) = group_privacy_split(eps, delta, m).unwrap();
            assert!((m as f64 * e0 - eps).abs() < 1e-12 * eps);
            let chain: f64 = (0..m).map(|j| (j as f64 * e0).exp() * d0).sum();
            assert!((chain / delta - 1.0).abs() < 1e-10, "eps {eps} m {m}: {chain}");
            let (fe, fd) = group_privacy(m as u32, e0, d0).unwrap();
            assert!((fe - eps).abs() < 1e-12 && (fd / delta - 1.0).abs() < 1e-10);
            let textbook = m as f64 * ((m as f64 - 1.0) * e0).exp() * d0;
            assert!(textbook >= delta * (1.0 - 1e-12));
            if m > 1 {
                assert!(textbook > delta * 1.01);
            }
        }
    }
    assert!(matches!(
        group_privacy_split(1.0, 1e-5, 0),
        Err(Error::InvalidParam { .. })
    ));
    assert!(matches!(
        group_privacy_split(1.0, 1.0, 3),
        Err(Error::InvalidParam { .. })
    ));
    assert!(matches!(group_privacy_split(800.0, 1e-5, 1), Err(Error::Privacy(_))));
}

/// The estimator: its guarantee is the group conversion (m = the largest count) of the
/// accountant's example-level ε at the calibrated σ, within the user-level target; it is
/// user-wise DP-SGD on one-record users at that σ (the same bits); it refuses a target the
/// accountant cannot certify (ε/m below the conversion floor) with `Error::Privacy`.
#[test]
fn group_dpsgd_guarantee_and_refusals() {
    let th = theta_star(3, 1.0, true, &mut simulation_rng(21)).unwrap();
    let counts: Vec<usize> = (0..40).map(|u| 2 + u % 5).collect();
    let ud = privpref::sim::btl_users(
        &counts,
        &th,
        UserFeatures::Sphere { radius: 1.0 },
        &mut simulation_rng(22),
    )
    .unwrap();
    let view = ud.data.view().unwrap();
    let n = ud.data.n;
    let m = 6usize; // max count
    let mut o = GroupDpSgdOptions::new(3.0, 1e-5, 0.1 * n as f64, 50, 1.0, 1.0);
    o.set = FeasibleSet::theta_b(1.0).unwrap();
    let fit = group_dpsgd(view, &ud.users, &o, &mut NoiseRng::seeded(31)).unwrap();
    let g = fit.guarantee.as_ref().unwrap();
    assert_eq!(g.unit, PrivacyUnit::User);
    let (e0, d0) = group_privacy_split(3.0, 1e-5, m).unwrap();
    let acc = Accountant::default()
        .epsilon(0.1, fit.detail.noise_multiplier, 50, d0)
        .unwrap()
        .epsilon;
    assert!(acc <= e0);
    assert!((acc / e0 - 1.0).abs() < 1e-6, "calibrated to the split: {acc} vs {e0}");
    let chain: f64 = (0..m).map(|j| (j as f64 * acc).exp() * d0).sum();
    assert!((g.eps - m as f64 * acc).abs() < 1e-12);
    assert!((g.delta / chain - 1.0).abs() < 1e-10);
    assert!(g.eps <= 3.0 && g.delta <= 1e-5 * (1.0 + 1e-12));
    // The same engine: user-wise DP-SGD with every record a user, at the same σ.
    let records = UserIndex::equal(n, 1).unwrap();
    let mut u = UserDpSgdOptions::new(e0, d0, 0.1 * n as f64, 50, 1.0, 1.0);
    u.noise_multiplier = Some(fit.detail.noise_multiplier);
    u.set = o.set;
    let same = user_dpsgd(view, &records, &u, &mut NoiseRng::seeded(31)).unwrap();
    assert_eq!(same.theta, fit.theta);
    // Larger user budget on the same m: less noise.
    let mut o8 = o.clone();
    o8.eps = 8.0;
    let fit8 = group_dpsgd(view, &ud.users, &o8, &mut NoiseRng::seeded(31)).unwrap();
    assert!(fit8.detail.noise_multiplier < fit.detail.noise_multiplier);
    // One user with 3000 records at ε = 1: ε₀ = 3.3e-4 is below the conversion floor.
    let big = btl_users_equal(
        2,
        3000,
        &th,
        UserFeatures::Sphere { radius: 1.0 },
        &mut simulation_rng(23),
    )
    .unwrap();
    let mut ob = GroupDpSgdOptions::new(1.0, 1e-5, 100.0, 10, 1.0, 1.0);
    ob.set = FeasibleSet::theta_b(1.0).unwrap();
    let err = group_dpsgd(big.data.view().unwrap(), &big.users, &ob, &mut NoiseRng::seeded(1)).unwrap_err();
    assert!(matches!(err, Error::Privacy(_)), "{err:?}");
    // Invalid batch.
    let mut bad = o.clone();
    bad.batch_records = 0.0;
    assert!(matches!(
        group_dpsgd(view, &ud.users, &bad, &mut NoiseRng::seeded(1)),
        Err(Error::InvalidParam { .. })
    ));
}
