//! The Plackett–Luce group losses (`pl-top1`, `pl-ranking` top-J, `pl-krr`) and their lift by the
//! K-wise objective:
//!
//! * finite differences of every loss's score gradient and `K × K` Hessian block (central
//!   differences, random scores and labels, K ∈ {2, 3, 5, 8}), and of the objective's value,
//!   gradient, Hessian and Hessian-vector product in θ (dense and item-indexed layouts, with
//!   weights, ridge and linear term);
//! * identities: Fisher consistency of the full-ranking likelihood (all K! rankings), shift
//!   invariance and rank K − 1 of the Hessian, the K-RR gradient identity (case T10 of
//!   `tests/reference/README.md`, with its printed numbers), and the exact unbiasedness
//!   `E[ℓ̂(u; ỹ) | y] = c_{K,ε} ℓ_top1(u; y)` under the [`KaryRr`] transition matrix (the labels
//!   that feed `pl-krr` are exactly that mechanism's);
//! * stable values for scores of size 1e3 and printed reference values.

use privpref::data::{GroupLabels, GroupView};
use privpref::loss::{GroupLoss, PlKrrDebiased, PlRanking, PlTop1};
use privpref::mechanism::{simulation_rng, KaryRr, Mechanism};
use privpref::objective::{GroupObjective, SecondOrderObjective, SmoothObjective};
use rand::RngExt;

fn eval<L: GroupLoss>(l: &L, u: &[f64], o: &[u8]) -> (f64, Vec<f64>, Vec<f64>) {
    let k = u.len();
    let mut g = vec![0.0; k];
    let mut h = vec![0.0; k * k];
    let mut s = vec![0.0; l.scratch_len(k)];
    let v = l.eval(u, o, Some(&mut g), Some(&mut h), &mut s);
    (v, g, h)
}

fn value<L: GroupLoss>(l: &L, u: &[f64], o: &[u8]) -> f64 {
    let mut s = vec![0.0; l.scratch_len(u.len())];
    l.eval(u, o, None, None, &mut s)
}

fn random_order<R: RngExt>(k: usize, rng: &mut R) -> Vec<u8> {
    let mut o: Vec<u8> = (0..k as u8).collect();
    for i in (1..k).rev() {
        let j = rng.random_range(0..=i);
        o.swap(i, j);
    }
    o
}

/// Central differences of the value (gradient) and of the gradient (Hessian), step 1e-5.
fn check_fd<L: GroupLoss>(name: &str, l: &L, u: &[f64], o: &[u8]) {
    let k = u.len();
    let (_, g, h) = eval(l, u, o);
    let step = 1e-5;
    for a in 0..k {
        let mut up = u.to_vec();
        let mut dn = u.to_vec();
        up[a] += step;
        dn[a] -= step;
        let fd = (value(l, &up, o) - value(l, &dn, o)) / (2.0 * step);
        assert!((fd - g[a]).abs() < 1e-8, "{name} K={k} grad[{a}]: {} vs fd {fd}", g[a]);
        let (_, gp, _) = eval(l, &up, o);
        let (_, gm, _) = eval(l, &dn, o);
        for b in 0..k {
            let fdh = (gp[b] - gm[b]) / (2.0 * step);
            assert!(
                (fdh - h[b * k + a]).abs() < 1e-8,
                "{name} K={k} hess[{b},{a}]: {} vs fd {fdh}",
                h[b * k + a]
            );
        }
    }
    // Symmetry, zero row sums (shift invariance of the scores), positive semi-definiteness on
    // random vectors.
    for a in 0..k {
        let rs: f64 = h[a * k..(a + 1) * k].iter().sum();
        assert!(rs.abs() < 1e-14, "{name} row sum {rs}");
        for b in 0..k {
            assert_eq!(h[a * k + b].to_bits(), h[b * k + a].to_bits(), "{name} symmetry");
        }
    }
    assert!(g.iter().sum::<f64>().abs() < 1e-14, "{name} gradient sum");
}

#[test]
fn finite_differences_of_every_group_loss() {
    let mut rng = simulation_rng(41);
    for &k in &[2usize, 3, 5, 8] {
        for _ in 0..20 {
            let u: Vec<f64> = (0..k).map(|_| rng.random_range(-3.0..3.0)).collect();
            let o = random_order(k, &mut rng);
            check_fd("pl-top1", &PlTop1, &u, &o);
            for j in 1..k {
                check_fd("pl-ranking", &PlRanking::new(j).unwrap(), &u, &o);
            }
            for eps in [0.3, 1.0, 4.0] {
                check_fd("pl-krr", &PlKrrDebiased::new(eps, k).unwrap(), &u, &o);
            }
        }
    }
}

#[test]
fn krr_loss_is_unbiased_under_the_kary_rr_channel() {
    let mut rng = simulation_rng(7);
    for &k in &[2usize, 3, 5] {
        for eps in [0.2, 1.0, 3.0] {
            let l = PlKrrDebiased::new(eps, k).unwrap();
            let t = KaryRr::new(eps, k).unwrap().transition_matrix();
            let c = l.c();
            assert!((c - (eps.exp() - 1.0) / (eps.exp() + k as f64 - 1.0)).abs() < 1e-15);
            assert!((l.q() - t[1]).abs() < 1e-16, "q is K-RR's off-diagonal probability");
            for _ in 0..5 {
                let u: Vec<f64> = (0..k).map(|_| rng.random_range(-2.0..2.0)).collect();
                let (_, g, _) = eval(&l, &u, &[0]);
                // Σ_k (c p_k − w_k) = c − Σ_k w_k = 0: the gradient is shift invariant too.
                assert!(g.iter().sum::<f64>().abs() < 1e-14, "{g:?}");
                for y in 0..k {
                    // E[ℓ̂(u; ỹ) | y] = Σ_ỹ T[y, ỹ] ℓ̂(u; ỹ) = c·ℓ_top1(u; y), and the same for the gradient.
                    let mut ev = 0.0;
                    let mut eg = vec![0.0; k];
                    for yt in 0..k {
                        let (v, g, _) = eval(&l, &u, &[yt as u8]);
                        ev += t[y * k + yt] * v;
                        eg.iter_mut().zip(&g).for_each(|(a, b)| *a += t[y * k + yt] * b);
                    }
                    let (v1, g1, h1) = eval(&PlTop1, &u, &[y as u8]);
                    assert!((ev - c * v1).abs() < 1e-13, "K={k} eps={eps}: {ev} vs {}", c * v1);
                    for (a, b) in eg.iter().zip(&g1) {
                        assert!((a - c * b).abs() < 1e-14);
                    }
                    // The Hessian is c times the top-1 Hessian, for every label.
                    let (_, _, h) = eval(&l, &u, &[y as u8]);
                    for (a, b) in h.iter().zip(&h1) {
                        assert!((a - c * b).abs() < 1e-15);
                    }
                }
            }
        }
    }
}

#[test]
fn spec_t10_kary_rr_gradient_identity() {
    // Case T10: K = 3, ε = ln 2 (c = 1/4), Φ = [(1,0),(0,1),(−1,−1)], θ = (0.5, −0.5).
    let phi = [1.0, 0.0, 0.0, 1.0, -1.0, -1.0];
    let theta = [0.5, -0.5];
    let l = PlKrrDebiased::new(2f64.ln(), 3).unwrap();
    assert!((l.c() - 0.25).abs() < 1e-15);
    let u: Vec<f64> = (0..3)
        .map(|r| phi[2 * r] * theta[0] + phi[2 * r + 1] * theta[1])
        .collect();
    let ghat = |yt: u8| -> [f64; 2] {
        let (_, g, _) = eval(&l, &u, &[yt]);
        [
            (0..3).map(|r| g[r] * phi[2 * r]).sum(),
            (0..3).map(|r| g[r] * phi[2 * r + 1]).sum(),
        ]
    };
    let want = [
        [-0.950178873666, -0.030218040623],
        [0.049821126334, -1.030218040623],
        [1.049821126334, 0.969781959377],
    ];
    for (yt, w) in want.iter().enumerate() {
        let g = ghat(yt as u8);
        assert!(
            (g[0] - w[0]).abs() < 1e-11 && (g[1] - w[1]).abs() < 1e-11,
            "ĝ({yt}) = {g:?}"
        );
    }
    // For y = 0: ½ĝ₀ + ¼ĝ₁ + ¼ĝ₂ = ¼(φ̄ − φ₀) = (−0.200178873666, −0.030218040623).
    let (g0, g1, g2) = (ghat(0), ghat(1), ghat(2));
    let e: Vec<f64> = (0..2).map(|j| 0.5 * g0[j] + 0.25 * g1[j] + 0.25 * g2[j]).collect();
    assert!((e[0] + 0.200178873666).abs() < 1e-11 && (e[1] + 0.030218040623).abs() < 1e-11);
}

#[test]
fn full_ranking_likelihood_is_fisher_consistent() {
    // K = 4, all 24 rankings: Σ P(o) = 1, E[g] = 0, E[g gᵀ] = E[H] (score space).
    let u = [0.7, -0.4, 1.3, -1.1];
    let k = 4;
    let l = PlRanking::new(3).unwrap();
    let mut perms = Vec::new();
    for a in 0..4u8 {
        for b in 0..4u8 {
            for c in 0..4u8 {
                for d in 0..4u8 {
                    let p = [a, b, c, d];
                    let mut s = p;
                    s.sort_unstable();
                    if s == [0, 1, 2, 3] {
                        perms.push(p);
                    }
                }
            }
        }
    }
    assert_eq!(perms.len(), 24);
    let (mut total, mut eg, mut egg, mut eh) = (0.0, vec![0.0; k], vec![0.0; k * k], vec![0.0; k * k]);
    for o in &perms {
        let (v, g, h) = eval(&l, &u, o);
        let p = (-v).exp();
        total += p;
        for a in 0..k {
            eg[a] += p * g[a];
            for b in 0..k {
                egg[a * k + b] += p * g[a] * g[b];
                eh[a * k + b] += p * h[a * k + b];
            }
        }
    }
    assert!((total - 1.0).abs() < 1e-14, "{total}");
    assert!(eg.iter().all(|v| v.abs() < 1e-14), "{eg:?}");
    for (a, b) in egg.iter().zip(&eh) {
        assert!((a - b).abs() < 1e-14, "{a} {b}");
    }
}

#[test]
fn hessian_blocks_have_rank_k_minus_1() {
    // Per-sample Hessian rank K − 1 (checked through the K = 4 block's
    // eigenvalues: one zero, the rest positive).
    let u = [0.2, -0.9, 0.4, 1.5];
    for h in [
        eval(&PlTop1, &u, &[1]).2,
        eval(&PlRanking::new(3).unwrap(), &u, &[2, 0, 3, 1]).2,
        eval(&PlRanking::new(2).unwrap(), &u, &[2, 0, 3, 1]).2,
    ] {
        let m = faer::MatRef::from_row_major_slice(&h, 4, 4);
        let ev = m.self_adjoint_eigenvalues(faer::Side::Lower).unwrap();
        assert!(ev[0].abs() < 1e-15, "{ev:?}");
        assert!(ev[1] > 1e-3, "{ev:?}");
    }
}

#[test]
fn values_stay_finite_and_exact_for_large_scores() {
    // Scores (0, −800, −801), ranking (0, 1, 2): softplus(−800) + softplus(−1).
    let l = PlRanking::new(2).unwrap();
    let (v, g, h) = eval(&l, &[0.0, -800.0, -801.0], &[0, 1, 2]);
    assert!((v - 0.313_261_687_518_222_86).abs() < 1e-16, "{v}");
    assert!(g.iter().chain(&h).all(|x| x.is_finite()));
    // Full ranking at 0: log K! (K = 5: 4.787491742782046).
    let (v, _, _) = eval(&PlRanking::new(4).unwrap(), &[0.0; 5], &[4, 2, 0, 1, 3]);
    assert!((v - 4.787_491_742_782_046).abs() < 1e-14);
    for u in [[1e3, -1e3, 0.0], [-1e3, 1e3, 999.0], [1e3, 1e3, 1e3]] {
        for y in 0..3u8 {
            for (name, (v, g, h)) in [
                ("top1", eval(&PlTop1, &u, &[y])),
                (
                    "ranking",
                    eval(&PlRanking::new(2).unwrap(), &u, &[y, (y + 1) % 3, (y + 2) % 3]),
                ),
                ("krr", eval(&PlKrrDebiased::new(0.5, 3).unwrap(), &u, &[y])),
            ] {
                assert!(
                    v.is_finite() && g.iter().chain(&h).all(|x| x.is_finite()),
                    "{name} {u:?} {y}"
                );
            }
        }
    }
    // Exact large-score values: LSE − u_y.
    assert_eq!(eval(&PlTop1, &[1e3, -1e3, 0.0], &[1]).0, 2000.0);
    assert_eq!(eval(&PlTop1, &[1e3, -1e3, 0.0], &[0]).0, 0.0);
    // The gradient of the chosen alternative keeps relative accuracy when p_y ≈ 1:
    // −(1 − p_y) = −(e^{−40} + e^{−41})/(1 + e^{−40} + e^{−41}).
    let (_, g, _) = eval(&PlTop1, &[40.0, 0.0, -1.0], &[0]);
    let want = -((-40f64).exp() + (-41f64).exp()) / (1.0 + (-40f64).exp() + (-41f64).exp());
    assert!((g[0] / want - 1.0).abs() < 1e-14, "{} vs {want}", g[0]);
}

/// K-wise data: dense features, weights, and an item-indexed twin of the same rows.
struct Data {
    x: Vec<f64>,
    items: Vec<f64>,
    index: Vec<u32>,
    ranking: Vec<u8>,
    weights: Vec<f64>,
    n: usize,
    k: usize,
    d: usize,
    m: usize,
}

fn data(n: usize, k: usize, d: usize, m: usize, seed: u64) -> Data {
    let mut rng = simulation_rng(seed);
    let items: Vec<f64> = (0..m * d).map(|_| rng.random_range(-1.5..1.5)).collect();
    let index: Vec<u32> = (0..n * k).map(|_| rng.random_range(0..m as u32)).collect();
    let mut x = Vec::with_capacity(n * k * d);
    for &j in &index {
        x.extend_from_slice(&items[j as usize * d..(j as usize + 1) * d]);
    }
    let ranking: Vec<u8> = (0..n).flat_map(|_| random_order(k, &mut rng)).collect();
    let weights: Vec<f64> = (0..n).map(|_| rng.random_range(0.2..2.0)).collect();
    Data {
        x,
        items,
        index,
        ranking,
        weights,
        n,
        k,
        d,
        m,
    }
}

fn check_objective_fd<O: SecondOrderObjective>(name: &str, obj: &O, theta: &[f64]) {
    let d = theta.len();
    let mut ev = obj.new_eval();
    obj.evaluate(theta, &mut ev);
    let mut h = vec![0.0; d * d];
    obj.hessian_into(&ev, &mut h);
    let step = 1e-6;
    let v: Vec<f64> = (0..d).map(|j| 0.3 - 0.1 * j as f64).collect();
    let mut hv = vec![0.0; d];
    obj.hess_vec(&ev, &v, &mut hv);
    for a in 0..d {
        let mut tp = theta.to_vec();
        let mut tm = theta.to_vec();
        tp[a] += step;
        tm[a] -= step;
        let (mut ep, mut em) = (obj.new_eval(), obj.new_eval());
        obj.evaluate(&tp, &mut ep);
        obj.evaluate(&tm, &mut em);
        let fd = (ep.value - em.value) / (2.0 * step);
        assert!((fd - ev.grad[a]).abs() < 1e-7, "{name} ∇F[{a}] {} vs {fd}", ev.grad[a]);
        for b in 0..d {
            let fdh = (ep.grad[b] - em.grad[b]) / (2.0 * step);
            assert!(
                (fdh - h[a * d + b]).abs() < 1e-7,
                "{name} ∇²F[{b},{a}] {} vs {fdh}",
                h[a * d + b]
            );
        }
        let hv_a: f64 = (0..d).map(|b| h[b * d + a] * v[b]).sum();
        assert!((hv_a - hv[a]).abs() < 1e-12, "{name} Hv[{a}]");
    }
    // Line searches from cached scores equal full evaluations.
    let s: Vec<f64> = (0..d).map(|j| 0.05 * (j as f64 - 1.0)).collect();
    let mut xs = vec![0.0; obj.num_scores()];
    obj.direction_scores(&s, &mut xs);
    // At α = 0 the O(nK) sum is the fused pass's value bit for bit (same blocks and order).
    assert_eq!(
        obj.line_value(&ev, &s, &xs, 0.0).to_bits(),
        ev.value.to_bits(),
        "{name} α = 0"
    );
    for alpha in [0.5, 1.0, 2.0] {
        let moved: Vec<f64> = theta.iter().zip(&s).map(|(t, v)| t + alpha * v).collect();
        let mut e2 = obj.new_eval();
        obj.evaluate(&moved, &mut e2);
        assert!(
            (obj.line_value(&ev, &s, &xs, alpha) - e2.value).abs() < 1e-13,
            "{name} line value"
        );
        let scaled: Vec<f64> = moved.iter().map(|v| 0.7 * v).collect();
        obj.evaluate(&scaled, &mut e2);
        assert!(
            (obj.arc_value(&ev, &s, &xs, alpha, 0.7) - e2.value).abs() < 1e-13,
            "{name} arc value"
        );
    }
    // The compensated evaluation agrees with the plain one to rounding.
    let mut gc = vec![0.0; d];
    let fc = obj.value_grad_compensated(theta, &mut gc);
    assert!((fc - ev.value).abs() < 1e-13, "{name} compensated value");
    for (a, b) in gc.iter().zip(&ev.grad) {
        assert!((a - b).abs() < 1e-13, "{name} compensated gradient");
    }
}

#[test]
fn objective_derivatives_by_finite_differences_on_both_layouts() {
    let dt = data(60, 4, 5, 9, 3);
    let theta = [0.4, -0.3, 0.2, 0.1, -0.5];
    let b = vec![0.3, -0.1, 0.0, 0.2, 0.05];
    for weighted in [false, true] {
        let w = weighted.then_some(&dt.weights[..]);
        let dense = GroupView::new(&dt.x, dt.n, dt.k, dt.d, GroupLabels::Ranking(&dt.ranking), w).unwrap();
        let items = GroupView::from_items(
            &dt.items,
            dt.m,
            dt.d,
            &dt.index,
            dt.n,
            dt.k,
            GroupLabels::Ranking(&dt.ranking),
            w,
        )
        .unwrap();
        for view in [dense, items] {
            macro_rules! go {
                ($name:expr, $loss:expr) => {{
                    let o = GroupObjective::new(view, $loss)
                        .unwrap()
                        .with_ridge(0.7)
                        .unwrap()
                        .with_linear_term(b.clone())
                        .unwrap();
                    check_objective_fd($name, &o, &theta);
                }};
            }
            go!("pl-top1", PlTop1);
            go!("pl-ranking-3", PlRanking::new(3).unwrap());
            go!("pl-ranking-2", PlRanking::new(2).unwrap());
            go!("pl-krr", PlKrrDebiased::new(0.8, 4).unwrap());
        }
    }
}

#[test]
fn item_indexed_layout_gives_the_dense_bits() {
    // Rows read through the index are the same values, so every pass does the same arithmetic.
    let dt = data(3000, 5, 7, 40, 9);
    let dense = GroupView::new(&dt.x, dt.n, dt.k, dt.d, GroupLabels::Ranking(&dt.ranking), None).unwrap();
    let items = GroupView::from_items(
        &dt.items,
        dt.m,
        dt.d,
        &dt.index,
        dt.n,
        dt.k,
        GroupLabels::Ranking(&dt.ranking),
        None,
    )
    .unwrap();
    let theta = [0.1, -0.2, 0.3, 0.0, 0.25, -0.15, 0.05];
    let a = GroupObjective::new(dense, PlRanking::new(4).unwrap()).unwrap();
    let b = GroupObjective::new(items, PlRanking::new(4).unwrap()).unwrap();
    let (mut ea, mut eb) = (a.new_eval(), b.new_eval());
    a.evaluate(&theta, &mut ea);
    b.evaluate(&theta, &mut eb);
    assert_eq!(ea.value.to_bits(), eb.value.to_bits());
    assert_eq!(ea.grad, eb.grad);
    assert_eq!(ea.scores, eb.scores);
    let mut ha = vec![0.0; 49];
    let mut hb = vec![0.0; 49];
    a.hessian_into(&ea, &mut ha);
    b.hessian_into(&eb, &mut hb);
    assert_eq!(ha, hb);
}

#[test]
fn objective_is_bit_identical_for_any_thread_count() {
    // 20000 samples of K = 4, d = 6: several feature blocks, above the parallel threshold.
    let dt = data(20_000, 4, 6, 50, 5);
    let view = GroupView::new(
        &dt.x,
        dt.n,
        dt.k,
        dt.d,
        GroupLabels::Ranking(&dt.ranking),
        Some(&dt.weights),
    )
    .unwrap();
    let obj = GroupObjective::new(view, PlRanking::new(3).unwrap()).unwrap();
    let theta = [0.2, -0.1, 0.0, 0.3, -0.25, 0.1];
    let run = |threads: usize| {
        let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().unwrap();
        pool.install(|| {
            let mut ev = obj.new_eval();
            obj.evaluate(&theta, &mut ev);
            let mut h = vec![0.0; 36];
            obj.hessian_into(&ev, &mut h);
            let mut hv = vec![0.0; 6];
            obj.hess_vec(&ev, &theta, &mut hv);
            let mut gc = vec![0.0; 6];
            let fc = obj.value_grad_compensated(&theta, &mut gc);
            (ev.value, ev.grad, h, hv, fc, gc, obj.column_second_moments())
        })
    };
    let base = run(1);
    for t in [2, 3, 4] {
        let r = run(t);
        assert_eq!(base.0.to_bits(), r.0.to_bits(), "value, {t} threads");
        assert_eq!(base.1, r.1, "gradient, {t} threads");
        assert_eq!(base.2, r.2, "Hessian, {t} threads");
        assert_eq!(base.3, r.3, "Hv, {t} threads");
        assert_eq!(base.4.to_bits(), r.4.to_bits(), "compensated value, {t} threads");
        assert_eq!(base.5, r.5, "compensated gradient, {t} threads");
        assert_eq!(base.6, r.6, "moments, {t} threads");
    }
}
