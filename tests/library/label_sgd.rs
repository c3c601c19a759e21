//! Label-private SGD (Ghazi et al. 2021): exact checks of
//! the debiased gradients and of LP-Normal-SGD's subspace, the excess-risk rate of LP-RR-SGD in
//! `n` and `ε` (seeded), guarantees and composition, one-implementation cross-checks between the
//! models, reproducibility and input validation.
//!
//! `cargo test --release --test library label_sgd -- --nocapture` prints the measured numbers.

use privpref::data::{GroupLabels, GroupView, MulticlassView, PairwiseView};
use privpref::estimator::label_sgd::*;
use privpref::feasible::FeasibleSet;
use privpref::loss::{Logistic, PlTop1, Probit};
use privpref::mechanism::{mix_seed, simulation_rng, KaryRr, Mechanism, RrTopK};
use privpref::model::NoGuarantee;
use privpref::privacy::NoiseRng;
use privpref::sim::{class_means, class_mixture};
use rand_distr::{Distribution, StandardNormal};

fn normals(m: usize, seed: u64) -> Vec<f64> {
    let mut r = simulation_rng(seed);
    (0..m).map(|_| StandardNormal.sample(&mut r)).collect()
}

/// All `K` candidate gradients in parameter space (`K × p`) of sample 0 of a one-sample model.
fn candidate_grads<M: LabelModel>(model: &M, theta: &[f64]) -> Vec<f64> {
    let (k, m, p) = (model.num_labels(), model.num_scores(), model.dim());
    let mut u = vec![0.0; m];
    let mut vals = vec![0.0; k];
    let mut g = vec![0.0; k * m];
    let mut s = vec![0.0; model.scratch_len()];
    model.scores(0, theta, &mut u);
    model.eval_all(&u, &mut vals, Some(&mut g), &mut s);
    let mut out = vec![0.0; k * p];
    for j in 0..k {
        model.lift_add(0, &g[j * m..(j + 1) * m], 1.0, &mut out[j * p..(j + 1) * p]);
    }
    out
}

/// The lifted debiased gradient for release `label` over `set`.
fn lifted_debiased<M: LabelModel>(model: &M, theta: &[f64], label: u8, set: Option<&[u8]>, eps: f64) -> Vec<f64> {
    let (k, m, p) = (model.num_labels(), model.num_scores(), model.dim());
    let mut u = vec![0.0; m];
    let mut vals = vec![0.0; k];
    let mut g = vec![0.0; k * m];
    let mut s = vec![0.0; model.scratch_len()];
    model.scores(0, theta, &mut u);
    model.eval_all(&u, &mut vals, Some(&mut g), &mut s);
    let mut gu = vec![0.0; m];
    debiased_score_gradient(&g, m, label, set, eps, true, &mut gu);
    let mut out = vec![0.0; p];
    model.lift_add(0, &gu, 1.0, &mut out);
    out
}

#[test]
fn krr_debiased_gradient_is_unbiased_and_its_second_moment_is_bounded() {
    // Softmax regression, (K, d, ε) ∈ {(2,3,.5), (5,4,1), (10,6,.2)}; E_ỹ ĝ = ∇ℓ(y)
    // by enumeration over the K-RR row of y; E‖ĝ‖² ≤ 36K²L²/ε² with L = √2‖x‖.
    for (case, &(k, d, eps)) in [(2usize, 3usize, 0.5), (5, 4, 1.0), (10, 6, 0.2)].iter().enumerate() {
        let x = normals(d, 10 + case as u64);
        let theta = normals(k * d, 20 + case as u64);
        let yv = vec![0u8];
        let model = MulticlassModel::new(MulticlassView::new(&x, 1, d, k, &yv).unwrap(), PlTop1).unwrap();
        let g = candidate_grads(&model, &theta);
        let p = k * d;
        let t = KaryRr::new(eps, k).unwrap().transition_matrix();
        let l = std::f64::consts::SQRT_2 * x.iter().map(|v| v * v).sum::<f64>().sqrt();
        let (mut worst, mut worst_moment) = (0.0f64, 0.0f64);
        for y in 0..k {
            let mut mean = vec![0.0; p];
            let mut moment = 0.0;
            for j in 0..k {
                let gh = lifted_debiased(&model, &theta, j as u8, None, eps);
                let w = t[y * k + j];
                for (a, b) in mean.iter_mut().zip(&gh) {
                    *a += w * b;
                }
                moment += w * gh.iter().map(|v| v * v).sum::<f64>();
            }
            let scale = g[y * p..(y + 1) * p].iter().fold(1.0f64, |a, v| a.max(v.abs()));
            for (a, b) in mean.iter().zip(&g[y * p..(y + 1) * p]) {
                worst = worst.max((a - b).abs() / scale);
            }
            worst_moment = worst_moment.max(moment);
        }
        let bound = 36.0 * (k * k) as f64 * l * l / (eps * eps);
        println!("K = {k}, d = {d}, ε = {eps}: |E ĝ − ∇ℓ|∞ (relative) = {worst:.2e}, max E‖ĝ‖² = {worst_moment:.4} ≤ {bound:.1}");
        assert!(worst < 1e-13, "bias {worst}");
        assert!(worst_moment <= bound);
    }
}

#[test]
fn rrtopk_debiased_gradient_is_unbiased_inside_the_top_set() {
    // Lemma 18 (Ghazi et al. 2021, App. G): for y ∈ Y_k the debiased gradient over Y_k has
    // expectation G_y under RRTop-k; for y ∉ Y_k it does not (the bias of Cor. 10).
    let (k, d) = (5usize, 3usize);
    let x = normals(d, 3);
    let theta = normals(k * d, 4);
    let yv = vec![0u8];
    let model = MulticlassModel::new(MulticlassView::new(&x, 1, d, k, &yv).unwrap(), PlTop1).unwrap();
    let g = candidate_grads(&model, &theta);
    let p = k * d;
    let prior = [0.5, 0.3, 0.1, 0.05, 0.05];
    for eps in [0.3, 1.0, 2.0] {
        for kk in 2..=k {
            let mech = RrTopK::new(eps, kk).unwrap();
            let t = mech.transition_matrix(&prior).unwrap();
            let set = privpref::mechanism::top_k(&prior, kk);
            for y in 0..k {
                let mut mean = vec![0.0; p];
                for &j in &set {
                    let gh = lifted_debiased(&model, &theta, j, Some(&set), eps);
                    let w = t[y * k + usize::from(j)];
                    for (a, b) in mean.iter_mut().zip(&gh) {
                        *a += w * b;
                    }
                }
                let dev = mean
                    .iter()
                    .zip(&g[y * p..(y + 1) * p])
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                if set.contains(&(y as u8)) {
                    assert!(dev < 1e-13, "ε={eps} k={kk} y={y}: {dev}");
                } else {
                    assert!(dev > 1e-6, "ε={eps} k={kk} y={y}: unexpectedly unbiased");
                }
            }
        }
    }
    // Lemma 19's factor.
    assert!((theory::debiased_lipschitz_factor(1.0, 3) - 4.491_860_2).abs() < 1e-7);
    let (f, q) = debias_factors(1.0, 3);
    assert!(((1.0 + 3.0 * q) / (1.0 - 3.0 * q) - theory::debiased_lipschitz_factor(1.0, 3)).abs() < 1e-13);
    assert!((f - (1f64.exp() + 2.0) / (1f64.exp() - 1.0)).abs() < 1e-14);
}

#[test]
fn normal_subspace_matches_the_closed_form_and_has_rank_k_minus_1() {
    // For multinomial logistic regression span{G_k − G_0} = {u xᵀ : 1ᵀu = 0}
    // (dimension K − 1) and the projection of B̃ is (I − 11ᵀ/K) B̃ x xᵀ/‖x‖².
    let k = 5;
    for d in [4usize, 16, 64] {
        let x = normals(d, 40 + d as u64);
        let theta = normals(k * d, 50 + d as u64);
        let yv = vec![0u8];
        let model = MulticlassModel::new(MulticlassView::new(&x, 1, d, k, &yv).unwrap(), PlTop1).unwrap();
        let g = candidate_grads(&model, &theta);
        let p = k * d;
        let mut diffs = vec![0.0; (k - 1) * p];
        for j in 1..k {
            for c in 0..p {
                diffs[(j - 1) * p + c] = g[j * p + c] - g[c];
            }
        }
        let mut q = vec![0.0; k * p];
        let r = normal::orthonormal_basis(&diffs, p, DEFAULT_RANK_TOL, &mut q);
        assert_eq!(r, k - 1, "d = {d}");
        let b = normals(p, 60 + d as u64);
        // QᵀQ b.
        let mut proj = vec![0.0; p];
        for j in 0..r {
            let c: f64 = q[j * p..(j + 1) * p].iter().zip(&b).map(|(a, v)| a * v).sum();
            for (o, qv) in proj.iter_mut().zip(&q[j * p..(j + 1) * p]) {
                *o += c * qv;
            }
        }
        // Closed form: rows of B̃ x (K values), centred, times xᵀ/‖x‖².
        let xn2: f64 = x.iter().map(|v| v * v).sum();
        let bx: Vec<f64> = (0..k)
            .map(|c| b[c * d..(c + 1) * d].iter().zip(&x).map(|(a, v)| a * v).sum())
            .collect();
        let mean = bx.iter().sum::<f64>() / k as f64;
        let mut worst = 0.0f64;
        for c in 0..k {
            for j in 0..d {
                let want = (bx[c] - mean) * x[j] / xn2;
                worst = worst.max((proj[c * d + j] - want).abs());
            }
        }
        println!("d = {d} (p = {p}): rank {r}, |QR projection − closed form|∞ = {worst:.2e}");
        assert!(worst < 1e-13, "{worst}");
    }
}

#[test]
fn normal_noise_norm_does_not_grow_with_the_dimension() {
    // Prop. 11: with isotropic features the LP-Normal-SGD noise norm stays ≈ σ√(K−1) as the
    // parameter dimension p = K·d grows (standard DP-SGD's would grow like σ√p). (1) Over a pass
    // on 1500 unit-norm features the subspace has rank K − 1 at every step and the realised
    // sensitivity is Δ = √2. (2) The noise itself, measured through the public API: one step of
    // size 1 from θ = 0 without projection gives θ_1 = −(G_y + b), so b = −θ_1 − G_y; over 1500
    // seeds E‖b‖² = (K−1)σ² for every p, and b lies in {u xᵀ : 1ᵀu = 0}.
    let (k, n) = (4usize, 1500usize);
    let mech = LabelMechanism::Normal {
        delta: 1e-5,
        calibration: GaussianCalibration::Analytic,
        sensitivity: None,
    };
    for d in [2usize, 8, 32] {
        let mut rng = simulation_rng(70 + d as u64);
        let mut x: Vec<f64> = (0..n * d).map(|_| StandardNormal.sample(&mut rng)).collect();
        for row in x.chunks_exact_mut(d) {
            let nr = row.iter().map(|v| v * v).sum::<f64>().sqrt();
            row.iter_mut().for_each(|v| *v /= nr); // uniform on the unit sphere
        }
        let y: Vec<u8> = (0..n).map(|i| (i % k) as u8).collect();
        let model = MulticlassModel::new(MulticlassView::new(&x, n, d, k, &y).unwrap(), PlTop1).unwrap();
        let opts = LpSgdOptions::new(1.0, mech, FeasibleSet::ball(2.0).unwrap());
        let fit = lp_sgd(&model, &opts, None, None, &mut NoiseRng::seeded(9 + d as u64)).unwrap();
        let nr = fit.detail.normal.as_ref().unwrap();
        assert_eq!((nr.rank_min, nr.rank_max), (k - 1, k - 1));
        assert!(nr.max_realised_sensitivity <= nr.sensitivity);
        assert!(
            (nr.sensitivity - std::f64::consts::SQRT_2).abs() < 1e-8,
            "Δ = √2 for unit features"
        );
        assert_eq!(
            (
                fit.guarantee.as_ref().expect("an SGD fit has a guarantee").eps,
                fit.guarantee.as_ref().expect("an SGD fit has a guarantee").delta
            ),
            (1.0, 1e-5)
        );
        // (2) One sample, one step.
        let one = MulticlassModel::new(MulticlassView::new(&x[..d], 1, d, k, &y[..1]).unwrap(), PlTop1).unwrap();
        let p = k * d;
        let g = candidate_grads(&one, &vec![0.0; p]);
        let gy = &g[..p]; // y_0 = 0
        let mut step = LpSgdOptions::new(1.0, mech, FeasibleSet::ball(1e12).unwrap());
        step.step = LpStep::Const(1.0);
        step.lipschitz = Some(1.0);
        let reps = 1500;
        let (mut sq, mut off_subspace, mut sigma) = (0.0, 0.0f64, 0.0);
        for s in 0..reps {
            let f = lp_sgd(&one, &step, None, None, &mut NoiseRng::seeded(mix_seed(d as u64, s))).unwrap();
            sigma = f.detail.normal.as_ref().unwrap().sigma;
            let b: Vec<f64> = f.theta.iter().zip(gy).map(|(t, gv)| -t - gv).collect();
            sq += b.iter().map(|v| v * v).sum::<f64>();
            // Distance of b to {u xᵀ : 1ᵀu = 0}: b − (I − 11ᵀ/K) b x xᵀ (‖x‖ = 1).
            let bx: Vec<f64> = (0..k)
                .map(|c| b[c * d..(c + 1) * d].iter().zip(&x[..d]).map(|(a, v)| a * v).sum())
                .collect();
            let mbx = bx.iter().sum::<f64>() / k as f64;
            for c in 0..k {
                for j in 0..d {
                    off_subspace = off_subspace.max((b[c * d + j] - (bx[c] - mbx) * x[j]).abs() / sigma);
                }
            }
        }
        let ratio = sq / reps as f64 / (sigma * sigma * (k - 1) as f64);
        println!(
            "d = {d} (p = {p}): rank {}..{}, Δ = {:.6}, max realised {:.6}, σ = {sigma:.4}; E‖b‖²/(σ²(K−1)) = {ratio:.4}, off-subspace {off_subspace:.1e}",
            nr.rank_min, nr.rank_max, nr.sensitivity, nr.max_realised_sensitivity
        );
        // 1500 draws of χ²_3/3: relative sd √(2/4500) ≈ 2.1%.
        assert!((ratio - 1.0).abs() < 0.1, "{ratio}");
        assert!(off_subspace < 1e-9, "{off_subspace}");
    }
}

/// The seeded rate experiment of the acceptance test (fast sizes; the full run is
/// `examples/label_sgd.rs`): softmax regression, K = 4, d = 3 (Gaussian mixture, exact
/// posterior `softmax(W* x)`), LP-RR-SGD with the theory step `c·D/(G√t)`, `G² = 2f²(2L)² + 2L²`.
struct RateSetup {
    k: usize,
    d: usize,
    means: Vec<f64>,
    test_x: Vec<f64>,
    test_y: Vec<u8>,
    w_star: Vec<f64>,
}

fn rate_setup() -> RateSetup {
    let (k, d) = (4, 3);
    let means = class_means(k, d, 1.0, &mut simulation_rng(1)).unwrap();
    let test = class_mixture(20_000, k, &means, 1.0, &mut simulation_rng(2)).unwrap();
    RateSetup {
        k,
        d,
        means,
        test_x: test.x,
        test_y: test.y,
        w_star: test.w_star,
    }
}

const RATE_B: f64 = 3.0;
const RATE_L: f64 = 8.0;
const RATE_C: f64 = 8.0;

fn rate_excess(s: &RateSetup, eps: f64, n: usize, reps: usize) -> Vec<f64> {
    let tv = MulticlassView::new(&s.test_x, s.test_y.len(), s.d, s.k, &s.test_y).unwrap();
    let tm = MulticlassModel::new(tv, PlTop1).unwrap();
    (0..reps)
        .map(|r| {
            let mut rng = simulation_rng(mix_seed(mix_seed(7, r as u64), n as u64));
            let data = class_mixture(n, s.k, &s.means, 1.0, &mut rng).unwrap();
            let v = MulticlassView::new(&data.x, n, s.d, s.k, &data.y).unwrap();
            let model = MulticlassModel::new(v, PlTop1).unwrap();
            let mut opts = LpSgdOptions::new(eps, LabelMechanism::Krr, FeasibleSet::ball(RATE_B).unwrap());
            opts.step = LpStep::Theory(RATE_C);
            opts.lipschitz = Some(RATE_L);
            let mut nr = NoiseRng::seeded(mix_seed(99, (r * 1000 + n) as u64));
            let fit = lp_sgd(&model, &opts, None, None, &mut nr).unwrap();
            excess_risk(&tm, &fit.theta, &s.w_star).unwrap()
        })
        .collect()
}

/// The stationary excess risk of SGD with step η at the optimum: `(η/4)·tr Σ_g`,
/// `tr Σ_g = E_x Σ_j P(ỹ = j | x) ‖ĝ(j)‖²` (linearised SGD: `HS + SH = ηΣ_g`, so
/// `E[½δᵀHδ] = (η/4) tr Σ_g`, independent of the Hessian) — an exact evaluation of the variance
/// term of Thm 9's proof for this problem.
fn stationary_prediction(s: &RateSetup, eps: f64, n: usize) -> f64 {
    let tv = MulticlassView::new(&s.test_x, s.test_y.len(), s.d, s.k, &s.test_y).unwrap();
    let tm = MulticlassModel::new(tv, PlTop1).unwrap();
    let k = s.k;
    let mech = KaryRr::new(eps, k).unwrap();
    let (keep, other) = (mech.keep_probability(), mech.other_probability());
    let (mut u, mut vals, mut g, mut sc, mut gu) =
        (vec![0.0; k], vec![0.0; k], vec![0.0; k * k], vec![0.0; k], vec![0.0; k]);
    let mut tr = 0.0;
    for i in 0..tm.n() {
        tm.scores(i, &s.w_star, &mut u);
        tm.eval_all(&u, &mut vals, Some(&mut g), &mut sc);
        let xn2: f64 = s.test_x[i * s.d..(i + 1) * s.d].iter().map(|v| v * v).sum();
        for (j, &vj) in vals.iter().enumerate() {
            let pj = (-vj).exp();
            let pt = other + (keep - other) * pj;
            debiased_score_gradient(&g, k, j as u8, None, eps, true, &mut gu);
            tr += pt * gu.iter().map(|v| v * v).sum::<f64>() * xn2;
        }
    }
    tr /= tm.n() as f64;
    let f = debias_factors(eps, k).0;
    let gbound = RATE_L * (8.0 * f * f + 2.0).sqrt();
    let eta = RATE_C * 2.0 * RATE_B / (gbound * (n as f64).sqrt());
    eta / 4.0 * tr
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

#[test]
fn lp_rr_sgd_excess_risk_falls_like_inverse_sqrt_n_and_rises_like_inverse_eps() {
    // Thm 9: excess risk ∝ K log n/(ε√n). Measured: (1) the log-log slope in n is −1/2 (the
    // bound's local slope −1/2 + 1/ln n lies in [−0.5, −0.38] here) within 0.1; (2) halving ε
    // (1 → 0.5, both ≤ 1) multiplies the excess risk by the predicted factor 2 within 20%; (3)
    // the level agrees with the exact stationary prediction (η_n/4)·tr Σ_g within 20%.
    let s = rate_setup();
    let reps = 60;
    let ns = [4000usize, 16000, 64000];
    let mut means = Vec::new();
    for eps in [1.0, 0.5] {
        let mut row = Vec::new();
        for &n in &ns {
            let ex = rate_excess(&s, eps, n, reps);
            let m = mean(&ex);
            let se = (ex.iter().map(|v| (v - m).powi(2)).sum::<f64>() / ((reps - 1) * reps) as f64).sqrt();
            let pred = stationary_prediction(&s, eps, n);
            println!(
                "ε = {eps}, n = {n}: excess {m:.5} ± {se:.5}, stationary prediction {pred:.5}, ratio {:.3}",
                m / pred
            );
            assert!((m / pred - 1.0).abs() < 0.2, "level: measured {m}, predicted {pred}");
            row.push(m);
        }
        let lx: Vec<f64> = ns.iter().map(|&n| (n as f64).ln()).collect();
        let ly: Vec<f64> = row.iter().map(|v| v.ln()).collect();
        let (mx, my) = (mean(&lx), mean(&ly));
        let slope = lx.iter().zip(&ly).map(|(a, b)| (a - mx) * (b - my)).sum::<f64>()
            / lx.iter().map(|a| (a - mx).powi(2)).sum::<f64>();
        println!("ε = {eps}: log-log slope in n = {slope:.3} (predicted −0.5)");
        assert!((slope + 0.5).abs() < 0.1, "slope {slope}");
        means.push(row);
    }
    // Pooled ratio over n (geometric mean).
    let ratio = (means[1].iter().zip(&means[0]).map(|(a, b)| (a / b).ln()).sum::<f64>() / ns.len() as f64).exp();
    let exact: f64 = (ns
        .iter()
        .map(|&n| (stationary_prediction(&s, 0.5, n) / stationary_prediction(&s, 1.0, n)).ln())
        .sum::<f64>()
        / ns.len() as f64)
        .exp();
    println!("excess(ε = 0.5)/excess(ε = 1) = {ratio:.3}; Thm 9's 1/ε factor 2, exact stationary factor {exact:.3}");
    assert!((ratio / 2.0 - 1.0).abs() < 0.2, "ratio {ratio}");
    assert!((ratio / exact - 1.0).abs() < 0.2, "ratio {ratio} vs {exact}");
}

fn mixture_model_data(n: usize, seed: u64) -> (Vec<f64>, Vec<u8>, Vec<f64>) {
    let means = class_means(5, 4, 2.0, &mut simulation_rng(31)).unwrap();
    let data = class_mixture(n, 5, &means, 1.0, &mut simulation_rng(seed)).unwrap();
    (data.x, data.y, data.w_star)
}

#[test]
fn guarantees_compose_as_stated() {
    let n = 3000;
    let (x, y, _) = mixture_model_data(n, 5);
    let model = MulticlassModel::new(MulticlassView::new(&x, n, 4, 5, &y).unwrap(), PlTop1).unwrap();
    let set = FeasibleSet::ball(5.0).unwrap();
    let mut rng = NoiseRng::seeded(1);
    // K-RR: pure ε, each label once.
    let fit = lp_sgd(
        &model,
        &LpSgdOptions::new(0.7, LabelMechanism::Krr, set),
        None,
        None,
        &mut rng,
    )
    .unwrap();
    assert_eq!(
        (
            fit.guarantee.as_ref().expect("an SGD fit has a guarantee").eps,
            fit.guarantee.as_ref().expect("an SGD fit has a guarantee").delta
        ),
        (0.7, 0.0)
    );
    assert!(
        !fit.guarantee.as_ref().unwrap().holds_for_real_data(),
        "seeded: simulation only"
    );
    assert_eq!(fit.detail.released.len(), n);
    assert!(fit
        .detail
        .released
        .iter()
        .enumerate()
        .all(|(t, r)| r.sample == t && r.set.is_none()));
    assert_eq!(fit.detail.mean_k, 5.0);
    // Histogram prior (ε_p) + RR-with-prior (ε): ε_p + ε by basic composition.
    let clusters = kmeans(&x, n, 4, 10, 30, 2).unwrap();
    let hp = histogram_prior(&clusters, &y, 5, 0.1, &mut rng).unwrap();
    let fit = lp_sgd(
        &model,
        &LpSgdOptions::new(0.9, LabelMechanism::RrWithPrior, set),
        Some(&hp.prior),
        None,
        &mut rng,
    )
    .unwrap();
    assert!((fit.guarantee.as_ref().expect("an SGD fit has a guarantee").eps - 1.0).abs() < 1e-15);
    assert!(
        fit.detail.mean_k < 5.0,
        "the clusters are informative: mean k* = {}",
        fit.detail.mean_k
    );
    assert!(fit
        .detail
        .released
        .iter()
        .all(|r| r.set.as_ref().is_some_and(|s| s.contains(&r.label))));
    // RRTop-k: |Y_k| = k.
    let fit = lp_sgd(
        &model,
        &LpSgdOptions::new(0.9, LabelMechanism::RrTopK { k: 2 }, set),
        Some(&hp.prior),
        None,
        &mut rng,
    )
    .unwrap();
    assert_eq!(fit.detail.mean_k, 2.0);
    // Multi-stage: each stage ε on its own samples, ε overall (parallel); + ε_p with the prior.
    let opts = MultiStageOptions::new(1.0, vec![0.5, 0.5], set);
    let ms = multi_stage(&model, &opts, None, &mut rng).unwrap();
    assert_eq!(ms.detail.stages.len(), 2);
    assert!(ms.detail.stages.iter().all(|s| s.guarantee.eps == 1.0));
    assert_eq!(
        (
            ms.guarantee.as_ref().expect("an SGD fit has a guarantee").eps,
            ms.guarantee.as_ref().expect("an SGD fit has a guarantee").delta
        ),
        (1.0, 0.0)
    );
    assert_eq!(ms.detail.stages[0].mean_k, 5.0, "stage 1 is K-RR");
    assert!(ms.detail.stages[1].mean_k < 5.0);
    assert_eq!(ms.detail.stages[0].samples + ms.detail.stages[1].samples, n);
    let mut seen = vec![false; n];
    for r in &ms.detail.released {
        assert!(!seen[r.sample], "sample {} released twice", r.sample);
        seen[r.sample] = true;
    }
    assert!(seen.iter().all(|&s| s));
    let ms = multi_stage(&model, &opts, Some(&hp.prior), &mut rng).unwrap();
    assert!((ms.guarantee.as_ref().expect("an SGD fit has a guarantee").eps - 1.1).abs() < 1e-15);
    // Reuse with the floor-of-mean-k filter: post-processing, same guarantee.
    let mut ro = opts.clone();
    ro.reuse = true;
    let ms = multi_stage(&model, &ro, None, &mut rng).unwrap();
    assert_eq!(ms.guarantee.as_ref().expect("an SGD fit has a guarantee").eps, 1.0);
    let s2 = &ms.detail.stages[1];
    assert_eq!(s2.reused + s2.filtered_out, ms.detail.stages[0].samples);
    assert_eq!(s2.filter_k, Some(s2.mean_k.floor() as usize));
    assert_eq!(s2.steps, s2.samples + s2.reused);
}

#[test]
fn same_seed_same_bits() {
    let n = 2000;
    let (x, y, _) = mixture_model_data(n, 6);
    let model = MulticlassModel::new(MulticlassView::new(&x, n, 4, 5, &y).unwrap(), PlTop1).unwrap();
    let set = FeasibleSet::ball(5.0).unwrap();
    let opts = LpSgdOptions::new(1.0, LabelMechanism::Krr, set);
    let a = lp_sgd(&model, &opts, None, None, &mut NoiseRng::seeded(3)).unwrap();
    let b = lp_sgd(&model, &opts, None, None, &mut NoiseRng::seeded(3)).unwrap();
    let c = lp_sgd(&model, &opts, None, None, &mut NoiseRng::seeded(4)).unwrap();
    assert_eq!(a.theta, b.theta);
    assert_ne!(a.theta, c.theta);
    let mo = MultiStageOptions::new(1.0, vec![0.6, 0.4], set);
    let a = multi_stage(&model, &mo, None, &mut NoiseRng::seeded(3)).unwrap();
    let b = multi_stage(&model, &mo, None, &mut NoiseRng::seeded(3)).unwrap();
    assert_eq!(a.theta, b.theta);
}

#[test]
fn binary_multiclass_and_kwise_models_are_one_implementation() {
    // (1) The binary linear model with the logistic loss equals the K-wise model with two
    //     alternatives φ_0 = 0, φ_1 = x (pl-top1 is BTL), draw for draw.
    // (2) The K-class softmax model equals the K-wise model on the Kronecker features.
    let (n, d) = (1500, 3);
    let x = normals(n * d, 81);
    let y: Vec<u8> = (0..n).map(|i| u8::from(x[i * d] + 0.3 * x[i * d + 1] > 0.0)).collect();
    let pv = PairwiseView::new(&x, n, d, &y, None).unwrap();
    let pm = PairwiseModel::new(&pv, Logistic).unwrap();
    let mut groups = vec![0.0; n * 2 * d];
    for i in 0..n {
        groups[(2 * i + 1) * d..(2 * i + 2) * d].copy_from_slice(&x[i * d..(i + 1) * d]);
    }
    let gv = GroupView::new(&groups, n, 2, d, GroupLabels::Choice(&y), None).unwrap();
    let gm = GroupModel::new(gv, PlTop1).unwrap();
    for mech in [
        LabelMechanism::Krr,
        LabelMechanism::Normal {
            delta: 1e-6,
            calibration: GaussianCalibration::Analytic,
            sensitivity: None,
        },
    ] {
        let mut opts = LpSgdOptions::new(0.8, mech, FeasibleSet::ball(3.0).unwrap());
        opts.lipschitz = Some(3.0); // the two models' default bounds differ (1 vs √2 times ‖x‖)
        let a = lp_sgd(&pm, &opts, None, None, &mut NoiseRng::seeded(5)).unwrap();
        let b = lp_sgd(&gm, &opts, None, None, &mut NoiseRng::seeded(5)).unwrap();
        let dev = a
            .theta
            .iter()
            .zip(&b.theta)
            .map(|(p, q)| (p - q).abs())
            .fold(0.0, f64::max);
        println!("{}: binary vs two-alternative K-wise |Δθ|∞ = {dev:.2e}", mech.name());
        assert!(dev < 1e-10, "{dev}");
        assert_eq!(a.detail.released, b.detail.released);
    }
    let (k, dm) = (4usize, 3usize);
    let means = class_means(k, dm, 1.5, &mut simulation_rng(8)).unwrap();
    let data = class_mixture(1200, k, &means, 1.0, &mut simulation_rng(9)).unwrap();
    let mv = MulticlassView::new(&data.x, 1200, dm, k, &data.y).unwrap();
    let feats = mv.group_features().unwrap();
    let gv = GroupView::new(&feats, 1200, k, k * dm, GroupLabels::Choice(&data.y), None).unwrap();
    let mm = MulticlassModel::new(mv, PlTop1).unwrap();
    let gm = GroupModel::new(gv, PlTop1).unwrap();
    let mut opts = LpSgdOptions::new(1.0, LabelMechanism::Krr, FeasibleSet::ball(3.0).unwrap());
    opts.lipschitz = Some(5.0); // the K-wise bound √2‖Φ‖_F = √(2K)‖x‖ is looser than √2‖x‖
    let a = lp_sgd(&mm, &opts, None, None, &mut NoiseRng::seeded(6)).unwrap();
    let b = lp_sgd(&gm, &opts, None, None, &mut NoiseRng::seeded(6)).unwrap();
    let dev = a
        .theta
        .iter()
        .zip(&b.theta)
        .map(|(p, q)| (p - q).abs())
        .fold(0.0, f64::max);
    println!("multiclass vs Kronecker K-wise |Δθ|∞ = {dev:.2e}");
    assert!(dev < 1e-10, "{dev}");
}

#[test]
fn label_private_sgd_learns() {
    // A sanity check on utility: at ε = 4 one pass over 20000 samples gets within a few points
    // of the Bayes accuracy, and the excess risk falls from the untrained model's.
    let n = 20_000;
    let (x, y, w_star) = mixture_model_data(n, 11);
    let (tx, ty, _) = mixture_model_data(10_000, 12);
    let model = MulticlassModel::new(MulticlassView::new(&x, n, 4, 5, &y).unwrap(), PlTop1).unwrap();
    let test = MulticlassModel::new(MulticlassView::new(&tx, 10_000, 4, 5, &ty).unwrap(), PlTop1).unwrap();
    let bayes = accuracy(&test, &w_star).unwrap();
    let fit = lp_sgd(
        &model,
        &LpSgdOptions::new(4.0, LabelMechanism::Krr, FeasibleSet::ball(6.0).unwrap()),
        None,
        None,
        &mut NoiseRng::seeded(2),
    )
    .unwrap();
    let acc = accuracy(&test, &fit.theta).unwrap();
    let ex0 = excess_risk(&test, &[0.0; 20], &w_star).unwrap();
    let ex = excess_risk(&test, &fit.theta, &w_star).unwrap();
    println!("Bayes accuracy {bayes:.4}, LP-RR-SGD (ε = 4) {acc:.4}; excess risk {ex0:.4} → {ex:.4}");
    assert!(acc > bayes - 0.05);
    assert!(ex < 0.2 * ex0);
    assert!(mean_loss(&test, &fit.theta).unwrap() < mean_loss(&test, &[0.0; 20]).unwrap());
}

#[test]
fn invalid_input_is_a_typed_error() {
    let n = 200;
    let (x, y, _) = mixture_model_data(n, 13);
    let model = MulticlassModel::new(MulticlassView::new(&x, n, 4, 5, &y).unwrap(), PlTop1).unwrap();
    let ball = FeasibleSet::ball(2.0).unwrap();
    let mut rng = NoiseRng::seeded(0);
    let uniform = Prior::public(vec![0.2; n * 5], 5).unwrap();
    let err = |o: LpSgdOptions, p: Option<&Prior>| {
        lp_sgd(&model, &o, p, None, &mut NoiseRng::seeded(0))
            .unwrap_err()
            .to_string()
    };
    assert!(err(LpSgdOptions::new(1.0, LabelMechanism::RrWithPrior, ball), None).contains("prior"));
    assert!(err(LpSgdOptions::new(1.0, LabelMechanism::Krr, ball), Some(&uniform)).contains("takes no prior"));
    assert!(err(
        LpSgdOptions::new(1.0, LabelMechanism::RrTopK { k: 6 }, ball),
        Some(&uniform)
    )
    .contains("exceeds"));
    assert!(err(
        LpSgdOptions::new(1.0, LabelMechanism::RrTopK { k: 0 }, ball),
        Some(&uniform)
    )
    .contains("top-k"));
    assert!(err(LpSgdOptions::new(0.0, LabelMechanism::Krr, ball), None).contains("eps"));
    assert!(err(
        LpSgdOptions::new(1.0, LabelMechanism::Krr, FeasibleSet::Unconstrained),
        None
    )
    .contains("bounded"));
    let short = Prior::public(vec![0.2; 10], 5).unwrap();
    assert!(err(LpSgdOptions::new(1.0, LabelMechanism::RrWithPrior, ball), Some(&short)).contains("prior"));
    assert!(Prior::public(vec![0.5, 0.6], 2).is_err());
    let normal = |delta, s| LabelMechanism::Normal {
        delta,
        calibration: GaussianCalibration::Classic,
        sensitivity: s,
    };
    assert!(err(LpSgdOptions::new(1.5, normal(1e-5, None), ball), None).contains("eps < 1"));
    assert!(err(LpSgdOptions::new(0.5, normal(0.0, None), ball), None).contains("delta"));
    // A stated sensitivity below the realised one: refused, nothing released.
    let e = err(LpSgdOptions::new(0.5, normal(1e-5, Some(1e-3)), ball), None);
    assert!(e.contains("exceeds the calibrated"), "{e}");
    // Probit has neither a Lipschitz bound nor a θ-free sensitivity.
    let yb: Vec<u8> = y.iter().map(|&v| u8::from(v > 2)).collect();
    let pv = PairwiseView::new(&x, n, 4, &yb, None).unwrap();
    let pm = PairwiseModel::new(&pv, Probit).unwrap();
    let e = lp_sgd(
        &pm,
        &LpSgdOptions::new(1.0, LabelMechanism::Krr, ball),
        None,
        None,
        &mut rng,
    )
    .unwrap_err();
    assert!(e.to_string().contains("lipschitz"), "{e}");
    let mut o = LpSgdOptions::new(1.0, normal(1e-5, None), ball);
    o.step = LpStep::InvSqrt(0.1);
    let e = lp_sgd(&pm, &o, None, None, &mut rng).unwrap_err();
    assert!(e.to_string().contains("sensitivity"), "{e}");
    // Weighted or f32 data.
    let w = vec![1.0; n];
    let pw = PairwiseView::new(&x, n, 4, &yb, Some(&w)).unwrap();
    assert!(PairwiseModel::new(&pw, Logistic).is_err());
    let xf: Vec<f32> = x.iter().map(|&v| v as f32).collect();
    let pf = PairwiseView::new_f32(&xf, n, 4, &yb, None).unwrap();
    assert!(PairwiseModel::new(&pf, Logistic).is_err());
    // Step rules.
    for bad in ["", "theory:0", "invsqrt", "const:-1", "sgd", "invsqrt:nan"] {
        assert!(LpStep::parse(bad).is_err(), "{bad:?}");
    }
    for good in ["theory", "theory:2", "invsqrt:0.5", "const:0.01"] {
        assert_eq!(LpStep::parse(good).unwrap().to_string(), good);
    }
    // Multi-stage options.
    let bad = MultiStageOptions::new(1.0, vec![0.7, 0.7], ball);
    assert!(multi_stage(&model, &bad, None, &mut rng).is_err());
    let tiny = MultiStageOptions::new(1.0, vec![0.999, 0.001], ball);
    assert!(multi_stage(&model, &tiny, None, &mut rng)
        .unwrap_err()
        .to_string()
        .contains("no sample"));
    let _ = (
        mix_seed(1, 2),
        KaryRr::new(1.0, 2).unwrap().randomize(&[0], &mut simulation_rng(0)),
    );
}

/// The caller's interrupt flag: set before the call, label-private SGD and multi-stage training
/// stop at the first check (no step, no release) with `Interrupted` and no guarantee; never set,
/// a flag changes no bit (a pass longer than one check interval of 256 steps, so the checked
/// runs are exercised), nor the guarantee.
#[test]
fn interrupt_flag_stops_the_pass_and_an_unset_flag_changes_nothing() {
    use privpref::solver::Termination;
    use std::sync::atomic::AtomicBool;
    use std::sync::Arc;
    let n = 10_000;
    let (x, y, _) = mixture_model_data(n, 7);
    let model = MulticlassModel::new(MulticlassView::new(&x, n, 4, 5, &y).unwrap(), PlTop1).unwrap();
    let set = FeasibleSet::ball(5.0).unwrap();
    let normal = LabelMechanism::Normal {
        delta: 1e-6,
        calibration: GaussianCalibration::Analytic,
        sensitivity: None,
    };
    for (case, mechanism) in [LabelMechanism::Krr, normal].into_iter().enumerate() {
        let plain = LpSgdOptions::new(1.0, mechanism, set);
        let want = lp_sgd(&model, &plain, None, None, &mut NoiseRng::seeded(5 + case as u64)).unwrap();
        assert_eq!(want.report.termination, Termination::Completed);
        let mut unset = plain.clone();
        unset.interrupt = Some(Arc::new(AtomicBool::new(false)));
        assert_ne!(unset, plain);
        let got = lp_sgd(&model, &unset, None, None, &mut NoiseRng::seeded(5 + case as u64)).unwrap();
        assert_eq!(got.theta, want.theta);
        assert_eq!(got.detail.released, want.detail.released);
        assert_eq!(got.guarantee, want.guarantee);
        assert_eq!(got.report.termination, Termination::Completed);
        assert_eq!(got.report.counts.iterations, n);

        let mut stopped = plain.clone();
        stopped.interrupt = Some(Arc::new(AtomicBool::new(true)));
        let f = lp_sgd(&model, &stopped, None, None, &mut NoiseRng::seeded(5 + case as u64)).unwrap();
        assert_eq!(f.report.termination, Termination::Interrupted);
        assert_eq!(f.report.counts.iterations, 0);
        assert!(f.detail.released.is_empty());
        assert_eq!(f.guarantee, None);
        let reason = f.no_guarantee.as_ref().unwrap().to_string();
        assert!(reason.starts_with("interrupted by the caller"), "{reason}");
        assert!(reason.contains(&format!("after 0 of {n} steps")), "{reason}");
        assert_eq!(f.refusal(), None);
        assert!(f.theta.iter().all(|v| *v == 0.0));
    }

    let plain = MultiStageOptions::new(1.0, vec![0.6, 0.4], set);
    let want = multi_stage(&model, &plain, None, &mut NoiseRng::seeded(8)).unwrap();
    let mut unset = plain.clone();
    unset.interrupt = Some(Arc::new(AtomicBool::new(false)));
    let got = multi_stage(&model, &unset, None, &mut NoiseRng::seeded(8)).unwrap();
    assert_eq!(got.theta, want.theta);
    assert_eq!(got.detail.released, want.detail.released);
    assert_eq!(got.guarantee, want.guarantee);
    assert_eq!(got.report.termination, Termination::Completed);
    let mut stopped = plain.clone();
    stopped.interrupt = Some(Arc::new(AtomicBool::new(true)));
    let f = multi_stage(&model, &stopped, None, &mut NoiseRng::seeded(8)).unwrap();
    assert_eq!(f.report.termination, Termination::Interrupted);
    assert_eq!(f.report.counts.iterations, 0);
    assert!(f.detail.stages.is_empty() && f.detail.released.is_empty());
    assert_eq!(f.guarantee, None);
    assert_eq!(
        f.no_guarantee,
        Some(NoGuarantee::Interrupted { steps: 0, budget: None })
    );
    assert!(f
        .no_guarantee
        .is_some_and(|r| r.to_string().starts_with("interrupted by the caller after 0 steps")));
}
