//! Every SGD loop of the crate on fixed seeds, as bits: label-private SGD (binary RR, K-RR,
//! RR-top-k, RR-with-prior, LP-Normal-SGD; theory, `invsqrt` and constant steps), multi-stage
//! training, user-level DP-SGD (both samplers, every output), AUP-RLHF, and the projected SGD
//! solver (one pass, mini-batch, K-wise, shuffled, Polyak). Each case prints the bits of `θ`
//! (`f64::to_bits`, hex) and a few counters; the test compares them with the values below.
//!
//! `cargo test --release --test library sgd_engine_bits -- --nocapture` prints the table.

use privpref::data::{GroupLabels, GroupView, MulticlassView, PairwiseView};
use privpref::estimator::label_sgd::{
    histogram_prior, kmeans, lp_sgd, multi_stage, FilterRule, GaussianCalibration, GroupModel, LabelMechanism,
    LpSgdOptions, LpStep, MultiStageOptions, MulticlassModel, PairwiseModel, Prior,
};
use privpref::estimator::user_level::{
    aup_rlhf, user_dpsgd, AupBatch, AupOptions, UserDpSgdOptions, UserOutput, UserSampler,
};
use privpref::feasible::FeasibleSet;
use privpref::loss::{Logistic, PlTop1, Probit, RrDebiased};
use privpref::mechanism::simulation_rng;
use privpref::objective::{GroupObjective, Objective};
use privpref::privacy::NoiseRng;
use privpref::sim::{btl_pairs, btl_users, btl_users_equal, class_means, class_mixture, theta_star, UserFeatures};
use privpref::solver::sgd::{self, Averaging, SgdOptions, StepRule};
use privpref::solver::Control;
use rand_distr::{Distribution, StandardNormal};

fn hex(theta: &[f64]) -> String {
    theta
        .iter()
        .map(|v| format!("{:016x}", v.to_bits()))
        .collect::<Vec<_>>()
        .join(" ")
}

fn normals(m: usize, seed: u64) -> Vec<f64> {
    let mut r = simulation_rng(seed);
    (0..m).map(|_| StandardNormal.sample(&mut r)).collect()
}

/// `(name, θ bits, counters)` of every case.
fn cases() -> Vec<(&'static str, String)> {
    let mut out: Vec<(&'static str, String)> = Vec::new();
    let mut push = |name: &'static str, theta: &[f64], extra: String| {
        out.push((name, format!("{} | {extra}", hex(theta))));
    };

    // ---- label-private SGD: binary linear model (K = 2: binary randomized response) ----
    let (n, d) = (400, 3);
    let x = normals(n * d, 1);
    let y: Vec<u8> = (0..n)
        .map(|i| u8::from(x[i * d] - 0.5 * x[i * d + 2] + 0.3 * normals(1, 100 + i as u64)[0] > 0.0))
        .collect();
    let pv = PairwiseView::new(&x, n, d, &y, None).unwrap();
    let pm = PairwiseModel::new(&pv, Logistic).unwrap();
    let ball = FeasibleSet::ball(2.0).unwrap();
    let tb = FeasibleSet::theta_b(1.5).unwrap();
    let run_pm = |o: &LpSgdOptions, prior: Option<&Prior>, theta0: Option<&[f64]>, rng: &mut NoiseRng| {
        let f = lp_sgd(&pm, o, prior, theta0, rng).unwrap();
        let labels: u64 = f.detail.released.iter().map(|r| u64::from(r.label)).sum();
        (
            f.theta,
            format!(
                "steps {} labels {labels} mean_k {:x}",
                f.report.counts.iterations,
                f.detail.mean_k.to_bits()
            ),
        )
    };
    let o = LpSgdOptions::new(1.0, LabelMechanism::Krr, ball);
    let (t, e) = run_pm(&o, None, None, &mut NoiseRng::seeded(11));
    push("lp bin krr theory", &t, e);
    let mut o = LpSgdOptions::new(0.7, LabelMechanism::Krr, tb);
    o.step = LpStep::Const(0.1);
    o.debias = false;
    let (t, e) = run_pm(&o, None, Some(&[0.2, -0.4, 0.1]), &mut NoiseRng::seeded(12));
    push("lp bin krr const nodebias theta-b warm", &t, e);
    let mut o = LpSgdOptions::new(2.0, LabelMechanism::Krr, FeasibleSet::Unconstrained);
    o.step = LpStep::InvSqrt(0.5);
    let (t, e) = run_pm(&o, None, None, &mut NoiseRng::seeded(13));
    push("lp bin krr invsqrt unconstrained", &t, e);
    let mut o = LpSgdOptions::new(1.5, LabelMechanism::Krr, ball);
    o.step = LpStep::Theory(3.0);
    o.lipschitz = Some(2.5);
    let (t, e) = run_pm(&o, None, None, &mut NoiseRng::seeded(14));
    push("lp bin krr theory:3 stated L", &t, e);
    let pp = PairwiseModel::new(&pv, Probit).unwrap();
    let mut o = LpSgdOptions::new(1.0, LabelMechanism::Krr, ball);
    o.step = LpStep::Const(0.05);
    let f = lp_sgd(&pp, &o, None, None, &mut NoiseRng::seeded(15)).unwrap();
    push(
        "lp bin probit const",
        &f.theta,
        format!("steps {}", f.report.counts.iterations),
    );
    let o = LpSgdOptions::new(
        0.9,
        LabelMechanism::Normal {
            delta: 1e-5,
            calibration: GaussianCalibration::Analytic,
            sensitivity: None,
        },
        ball,
    );
    let (t, e) = run_pm(&o, None, None, &mut NoiseRng::seeded(16));
    push("lp bin normal analytic theory", &t, e);

    // ---- label-private SGD: K-class softmax and K-wise models ----
    let (nm, dm, k) = (600, 3, 4);
    let means = class_means(k, dm, 1.5, &mut simulation_rng(21)).unwrap();
    let mix = class_mixture(nm, k, &means, 1.0, &mut simulation_rng(22)).unwrap();
    let mv = MulticlassView::new(&mix.x, nm, dm, k, &mix.y).unwrap();
    let mm = MulticlassModel::new(mv, PlTop1).unwrap();
    let clusters = kmeans(&mix.x, nm, dm, 6, 20, 3).unwrap();
    let hp = histogram_prior(&clusters, &mix.y, k, 0.5, &mut NoiseRng::seeded(23)).unwrap();
    let run_mm = |o: &LpSgdOptions, prior: Option<&Prior>, theta0: Option<&[f64]>, rng: &mut NoiseRng| {
        let f = lp_sgd(&mm, o, prior, theta0, rng).unwrap();
        let labels: u64 = f
            .detail
            .released
            .iter()
            .enumerate()
            .map(|(j, r)| (j as u64 + 1) * u64::from(r.label) + r.set.as_ref().map_or(0, |s| s.len() as u64))
            .sum();
        let normal = f
            .detail
            .normal
            .map(|r| format!(" sigma {:x} rank {}..{}", r.sigma.to_bits(), r.rank_min, r.rank_max))
            .unwrap_or_default();
        (
            f.theta,
            format!(
                "steps {} labels {labels} mean_k {:x}{normal}",
                f.report.counts.iterations,
                f.detail.mean_k.to_bits()
            ),
        )
    };
    let mball = FeasibleSet::ball(3.0).unwrap();
    let o = LpSgdOptions::new(1.0, LabelMechanism::Krr, mball);
    let (t, e) = run_mm(&o, None, None, &mut NoiseRng::seeded(31));
    push("lp mc krr theory", &t, e);
    let o = LpSgdOptions::new(1.2, LabelMechanism::RrTopK { k: 2 }, mball);
    let (t, e) = run_mm(&o, Some(&hp.prior), None, &mut NoiseRng::seeded(32));
    push("lp mc rrtopk2 theory", &t, e);
    let mut o = LpSgdOptions::new(1.2, LabelMechanism::RrTopK { k: 1 }, mball);
    o.step = LpStep::InvSqrt(0.3);
    let (t, e) = run_mm(&o, Some(&hp.prior), None, &mut NoiseRng::seeded(33));
    push("lp mc rrtopk1 invsqrt", &t, e);
    let mut o = LpSgdOptions::new(0.8, LabelMechanism::RrWithPrior, mball);
    o.step = LpStep::Theory(2.0);
    let (t, e) = run_mm(&o, Some(&hp.prior), None, &mut NoiseRng::seeded(34));
    push("lp mc rr-prior theory:2", &t, e);
    let mut o = LpSgdOptions::new(0.8, LabelMechanism::RrWithPrior, FeasibleSet::SumZero);
    o.step = LpStep::Const(0.05);
    let (t, e) = run_mm(&o, Some(&hp.prior), None, &mut NoiseRng::seeded(35));
    push("lp mc rr-prior const sum-zero", &t, e);
    let o = LpSgdOptions::new(
        2.0,
        LabelMechanism::Normal {
            delta: 1e-6,
            calibration: GaussianCalibration::Analytic,
            sensitivity: None,
        },
        mball,
    );
    let (t, e) = run_mm(&o, None, None, &mut NoiseRng::seeded(36));
    push("lp mc normal analytic theory", &t, e);
    let mut o = LpSgdOptions::new(
        0.8,
        LabelMechanism::Normal {
            delta: 1e-5,
            calibration: GaussianCalibration::Classic,
            sensitivity: Some(20.0),
        },
        mball,
    );
    o.step = LpStep::Const(0.02);
    let theta0: Vec<f64> = (0..k * dm).map(|j| 0.05 * j as f64 - 0.2).collect();
    let (t, e) = run_mm(&o, None, Some(&theta0), &mut NoiseRng::seeded(37));
    push("lp mc normal classic const warm", &t, e);
    let feats = mv.group_features().unwrap();
    let gv = GroupView::new(&feats, nm, k, k * dm, GroupLabels::Choice(&mix.y), None).unwrap();
    let gm = GroupModel::new(gv, PlTop1).unwrap();
    let mut o = LpSgdOptions::new(1.0, LabelMechanism::Krr, mball);
    o.lipschitz = Some(5.0);
    let f = lp_sgd(&gm, &o, None, None, &mut NoiseRng::seeded(38)).unwrap();
    push(
        "lp kwise krr theory",
        &f.theta,
        format!("steps {}", f.report.counts.iterations),
    );

    // ---- multi-stage training ----
    let run_ms = |o: &MultiStageOptions, prior: Option<&Prior>, seed: u64| {
        let f = multi_stage(&mm, o, prior, &mut NoiseRng::seeded(seed)).unwrap();
        let stages: Vec<String> = f
            .detail
            .stages
            .iter()
            .map(|s| format!("{}/{}/{}/{}", s.samples, s.reused, s.filtered_out, s.steps))
            .collect();
        let labels: u64 = f
            .detail
            .released
            .iter()
            .map(|r| r.sample as u64 * 7 + u64::from(r.label))
            .sum();
        (f.theta, format!("stages {} labels {labels}", stages.join(",")))
    };
    let o = MultiStageOptions::new(1.0, vec![0.5, 0.5], mball);
    let (t, e) = run_ms(&o, None, 41);
    push("ms two stages", &t, e);
    let mut o = MultiStageOptions::new(1.0, vec![0.3, 0.3, 0.4], mball);
    o.reuse = true;
    o.filter = FilterRule::Fixed(2);
    o.restart_steps = true;
    o.step = LpStep::Const(0.05);
    o.split_seed = 5;
    let (t, e) = run_ms(&o, Some(&hp.prior), 42);
    push("ms reuse fixed2 restart const prior", &t, e);
    let mut o = MultiStageOptions::new(0.9, vec![0.25, 0.25, 0.3], mball);
    o.reuse = true;
    o.filter = FilterRule::All;
    o.step = LpStep::InvSqrt(0.4);
    o.debias = false;
    let (t, e) = run_ms(&o, None, 43);
    push("ms reuse all invsqrt nodebias", &t, e);
    let mut o = MultiStageOptions::new(1.0, vec![0.4, 0.6], mball);
    o.reuse = true;
    let (t, e) = run_ms(&o, None, 44);
    push("ms reuse floor-mean-k theory", &t, e);

    // ---- user-level DP-SGD ----
    let th = theta_star(3, 1.0, true, &mut simulation_rng(51)).unwrap();
    let counts: Vec<usize> = (0..30).map(|u| 2 + u % 5).collect();
    let ud = btl_users(
        &counts,
        &th,
        UserFeatures::Sphere { radius: 1.0 },
        &mut simulation_rng(52),
    )
    .unwrap();
    let uv = ud.data.view().unwrap();
    let dp = |o: &UserDpSgdOptions, seed: u64| {
        let f = user_dpsgd(uv, &ud.users, o, &mut NoiseRng::seeded(seed)).unwrap();
        (
            f.theta,
            format!(
                "steps {} sigma {:x}",
                f.report.counts.iterations,
                f.detail.noise_multiplier.to_bits()
            ),
        )
    };
    let o = UserDpSgdOptions::new(2.0, 1e-5, 8.0, 40, 1.0, 0.5);
    let (t, e) = dp(&o, 61);
    push("dpsgd poisson last", &t, e);
    let mut o = UserDpSgdOptions::new(2.0, 1e-5, 8.0, 40, 0.3, 0.5);
    o.set = FeasibleSet::theta_b(0.8).unwrap();
    o.output = UserOutput::Average;
    o.theta0 = Some(vec![0.3, -0.2, 0.1]);
    let (t, e) = dp(&o, 62);
    push("dpsgd poisson average theta-b warm", &t, e);
    let mut o = UserDpSgdOptions::new(3.0, 1e-5, 10.0, 41, 1.0, 0.7);
    o.sampler = UserSampler::FixedSize;
    o.output = UserOutput::TailAverage;
    o.records_per_user = Some(2);
    o.set = FeasibleSet::ball(1.0).unwrap();
    let (t, e) = dp(&o, 63);
    push("dpsgd fixed tail records2 ball", &t, e);
    let mut o = UserDpSgdOptions::new(1.0, 1e-5, 30.0, 25, 0.5, 1.0);
    o.noise_multiplier = Some(0.7);
    o.output = UserOutput::TailAverage;
    let (t, e) = dp(&o, 64);
    push("dpsgd full batch fixed sigma tail", &t, e);

    // ---- AUP-RLHF ----
    let th = theta_star(3, 1.0, true, &mut simulation_rng(71)).unwrap();
    let ua = btl_users_equal(
        200,
        5,
        &th,
        UserFeatures::Sphere { radius: 1.0 },
        &mut simulation_rng(72),
    )
    .unwrap();
    let av = ua.data.view().unwrap();
    let aup = |o: &AupOptions, seed: u64| {
        let f = aup_rlhf(av, &ua.users, o, &mut NoiseRng::seeded(seed)).unwrap();
        (
            f.theta,
            format!(
                "steps {} halted {:?} sigma {:x} std {:x}",
                f.report.counts.iterations,
                f.detail.halted,
                f.detail.noise_multiplier.to_bits(),
                f.detail.noise_std.to_bits()
            ),
        )
    };
    let mut o = AupOptions::new(4.0, 1e-5, 0.5);
    o.steps = 30;
    o.set = FeasibleSet::theta_b(1.0).unwrap();
    let (t, e) = aup(&o, 81);
    push("aup full batch theta-b", &t, e);
    let mut o2 = o.clone();
    o2.phases = 2;
    let (t, e) = aup(&o2, 82);
    push("aup two phases", &t, e);
    let mut o3 = o.clone();
    o3.batch = AupBatch::Users(150.0);
    o3.realized_batch = true;
    o3.theta0 = Some(vec![0.1, 0.2, -0.3]);
    let (t, e) = aup(&o3, 83);
    push("aup poisson realised warm", &t, e);
    let mut o4 = o.clone();
    o4.batch = AupBatch::Users(120.0);
    o4.sampler = UserSampler::FixedSize;
    o4.tau = Some(1.5);
    o4.set = FeasibleSet::Unconstrained;
    let (t, e) = aup(&o4, 84);
    push("aup fixed-size tau", &t, e);
    let mut o5 = o.clone();
    o5.tau = Some(0.4);
    o5.steps = 50;
    let (t, e) = aup(&o5, 85);
    push("aup small tau", &t, e);

    // ---- projected SGD solver ----
    let ths = theta_star(5, 1.0, true, &mut simulation_rng(91)).unwrap();
    let bp = btl_pairs(700, &ths, &mut simulation_rng(92)).unwrap();
    let sv = PairwiseView::new(&bp.x, 700, 5, &bp.y, None).unwrap();
    let ctl = Control::default();
    let solve = |obj: &Objective<'_, Logistic>, set: &FeasibleSet, o: &SgdOptions| {
        let r = sgd::solve(obj, set, None, o, &ctl).unwrap();
        (r.theta, format!("iterations {}", r.counts.iterations))
    };
    let obj = Objective::new(sv, Logistic);
    let (t, e) = solve(
        &obj,
        &FeasibleSet::theta_b(1.5).unwrap(),
        &SgdOptions::one_pass(StepRule::Theory),
    );
    push("sgd one-pass theory theta-b", &t, e);
    let mut so = SgdOptions::one_pass(StepRule::Const(0.1));
    so.average = Averaging::Polyak;
    so.epochs = 3;
    so.shuffle = true;
    so.seed = 4;
    let (t, e) = solve(&obj, &FeasibleSet::ball(2.0).unwrap(), &so);
    push("sgd shuffled polyak ball", &t, e);
    let mut so = SgdOptions::one_pass(StepRule::InvT(2.0));
    so.batch = 16;
    so.epochs = 4;
    so.shuffle = true;
    so.seed = 9;
    let ridge = Objective::new(sv, Logistic)
        .with_ridge(3.0)
        .unwrap()
        .with_linear_term(vec![0.5, -0.2, 0.1, 0.0, 0.3])
        .unwrap();
    let (t, e) = solve(&ridge, &FeasibleSet::SumZero, &so);
    push("sgd minibatch ridge linear sum-zero", &t, e);
    let rr = Objective::new(sv, RrDebiased::new(1.0).unwrap());
    let r = sgd::one_pass(
        &rr,
        &FeasibleSet::theta_b(1.0).unwrap(),
        Some(&[0.1, 0.0, -0.1, 0.2, -0.2]),
        StepRule::Const(0.2),
        Averaging::Polyak,
    )
    .unwrap();
    push("sgd one_pass rr polyak warm", &r, String::new());
    let x32: Vec<f32> = bp.x.iter().map(|&v| v as f32).collect();
    let w: Vec<f64> = (0..700).map(|i| 0.5 + (i % 3) as f64 * 0.25).collect();
    let v32 = PairwiseView::new_f32(&x32, 700, 5, &bp.y, Some(&w)).unwrap();
    let o32 = Objective::new(v32, Logistic);
    let mut so = SgdOptions::one_pass(StepRule::Const(0.1));
    so.epochs = 2;
    let (t, e) = solve(&o32, &FeasibleSet::theta_b(1.0).unwrap(), &so);
    push("sgd f32 weighted two epochs", &t, e);
    let mut so = SgdOptions::one_pass(StepRule::Const(0.1));
    so.batch = 7;
    so.shuffle = true;
    so.average = Averaging::Polyak;
    let (t, e) = solve(&o32, &FeasibleSet::Unconstrained, &so);
    push("sgd f32 weighted minibatch shuffled polyak", &t, e);
    let gobj = GroupObjective::new(gv, PlTop1).unwrap();
    let mut so = SgdOptions::one_pass(StepRule::Const(0.05));
    so.batch = 4;
    so.epochs = 2;
    let r = sgd::solve(&gobj, &FeasibleSet::ball(3.0).unwrap(), None, &so, &ctl).unwrap();
    push(
        "sgd kwise minibatch",
        &r.theta,
        format!("iterations {}", r.counts.iterations),
    );
    let mut so = SgdOptions::one_pass(StepRule::Const(0.05));
    so.average = Averaging::Polyak;
    so.shuffle = true;
    let r = sgd::solve(&gobj, &FeasibleSet::SumZero, None, &so, &ctl).unwrap();
    push(
        "sgd kwise one-pass shuffled polyak",
        &r.theta,
        format!("iterations {}", r.counts.iterations),
    );
    out
}

#[test]
fn every_sgd_loop_gives_the_recorded_bits() {
    let got = cases();
    for (name, v) in &got {
        println!("(\"{name}\", \"{v}\"),");
    }
    let mut bad = Vec::new();
    for (name, v) in &got {
        match GOLDEN.iter().find(|(n, _)| n == name) {
            Some((_, want)) if want == v => {}
            Some((_, want)) => bad.push(format!("{name}:\n  got  {v}\n  want {want}")),
            None => bad.push(format!("{name}: no recorded value")),
        }
    }
    assert!(bad.is_empty(), "{} case(s) differ:\n{}", bad.len(), bad.join("\n"));
}

/// The values printed by the step loops as they were before they moved onto the one SGD engine
/// of `solver::sgd` (each estimator had its own loop then); the engine must reproduce them bit
/// for bit. Except four user-level cases (`dpsgd poisson last`, `dpsgd fixed tail records2
/// ball`, `aup full batch theta-b`, `aup fixed-size tau`), recorded after the per-user gradients
/// switched from the hand-written `σ(t) − y` to the loss's `ℓ'` ([`Logistic`]: `−σ(−t)` at
/// `y = 1`), 1–2 ulps apart; the unit tests of `estimator::user_level` check the old values with
/// the hand-written derivative on the engine.
const GOLDEN: &[(&str, &str)] = &[
    ("lp bin krr theory", "3ff313d5bd5c44c3 3fc28265fb8ba7fd 3f70eec1c2bc9311 | steps 400 labels 184 mean_k 4000000000000000"),
    ("lp bin krr const nodebias theta-b warm", "3fb8c1206eddbb42 bf9c2245e25e3a11 bfb1b88ef6462cbd | steps 400 labels 193 mean_k 4000000000000000"),
    ("lp bin krr invsqrt unconstrained", "40015f3dc765edf9 bfb588ffa9130fb6 bfefff6ffdd47ca3 | steps 400 labels 190 mean_k 4000000000000000"),
    ("lp bin krr theory:3 stated L", "3ffbb1df18c19a21 3fba5a0be601745d bfe203a260326873 | steps 400 labels 204 mean_k 4000000000000000"),
    ("lp bin probit const", "3ffce4ce40082012 bfe476f137e438b1 bfe2611aa120ff79 | steps 400"),
    ("lp bin normal analytic theory", "3f8d70f4307553f0 3fef7c1424a13c1e bff0dd5079c76715 | steps 400 labels 0 mean_k 7ff8000000000000"),
    ("lp mc krr theory", "3fe8d76f693e25dc bfd610b87748e3a5 3fca846db662068a bfce37a37335caa0 3fc71d44501199d9 3fd17dfe00c0f728 bfbca0cf3f8ed491 3fc829a20885f8a1 3fcd92e3a2639227 bfdb6ad948fdb140 bf992bab502e59fe bfe6c4d35691e1bd | steps 600 labels 270836 mean_k 4010000000000000"),
    ("lp mc rrtopk2 theory", "3fe25cbf430bb3f7 bfe3714947b99e61 3fd013c7bd85fdad bfca6471ce284f24 3fe10149a19d9feb bfa44a11358f167f bfb1140ba1f3aee3 3fd89596cb668f3d 3fe6763c1034fa26 bfd34242b68654a9 bfd3b5977f2e926b bfed3b7edb9f0796 | steps 600 labels 284044 mean_k 4000000000000000"),
    ("lp mc rrtopk1 invsqrt", "3ff71b0725a32f76 bfea35edf47eb806 3fdcf78788e7a21b 3fdfef4f93f6a8e6 3ff14e9c3cef61af bfe0bdc7085c8edd bfeeb0a3c53028c9 3f9d75432efddba8 3ff064b96fa88fbd bfef7d1250118aa3 bfd2a5e93daff440 bfee876f9b6861ae | steps 600 labels 234953 mean_k 3ff0000000000000"),
    ("lp mc rr-prior theory:2", "3ff366dd7314f210 bfe9e7cc536252fc 3fdd0d0592bcf9b6 bfb5226efe32ccf6 3fea5cb547cdbd5a bf984d08d561f0c4 bfdddb8018374b50 3fd1dba124711f81 3fe1d6d86b17924f bfe53bacfa47e4da bfd2c5730d47f44e bfef9af2edcaff9d | steps 600 labels 265644 mean_k 3ffc0da740da740e"),
    ("lp mc rr-prior const sum-zero", "3ff9acfc467abd0c bff48c7684deced2 3fe7cf424c022ba0 bfba0dff8fdef2cc 3ff8fb24beb68fe6 3fe9437c07c8e4fe bfe19f89f1581be6 3fa683bf05de73d6 3fb6555f9402c814 bfee78aea9a17fe6 bfd48b30c81ad2cf bff9eeb52325b4c9 | steps 600 labels 266023 mean_k 3ffc0da740da740e"),
    ("lp mc normal analytic theory", "40017e57ee5b8844 bf9fb01dd540e40f 3fd6c0e4b3759fe8 bff10467ec16f722 bfb21b1bf16a31c4 bff4a859849b102f bfe90075e943afc2 3fba3e74db6cd4d6 3fcd8678d83ac471 bfd5e033eff905fd bf4ba8ba59350f99 3fe68ea2796c9f3d | steps 600 labels 0 mean_k 7ff8000000000000 sigma 402f1e1f280a4678 rank 3..3"),
    ("lp mc normal classic const warm", "3fe43d77e290299d bff550d0b219ce5f 3fd9e4b8e7359de3 3fdea2f527a9ccc8 3fefb54a3d0e5d94 bfe1dcd5c6b0473a bfeff2258ab261b5 3ff56cdd43f7ac4f bfe7a0cb3bf99844 bfbce6675d957277 bfefed6360ca1973 3fec8b448f0f108c | steps 600 labels 0 mean_k 7ff8000000000000 sigma 405e47b03c4dde24 rank 3..3"),
    ("lp kwise krr theory", "3fed22932e1d7173 bfee5459e00a1893 3f7dfc8d4565a44b bf7c75e5f3dec25f 3fe4377b32cdbcf8 bfba501b766e0679 bfcdabc0231fe190 3fd1eb8f30671eda 3fd471ef3dad7af2 bfe57eb7596dbb89 3fa27171508cc3dd bfccabb52a4f1fbc | steps 600"),
    ("ms two stages", "3feb090c262922ec bff138cbc4664e16 3fb23a088b7adab3 bfd31aa5b8df1f3b 3feeb583cc22ddb1 3fdaf7cdf1a3873f 3fc823d24f0e75f6 3fc2ad96a3c24604 3fe3f16d894c671e bfe784addd7d30cc bf9dea3d88da60cf bff1da4ac9c6c307 | stages 300/0/0/300,300/0/0/300 labels 1258814"),
    ("ms reuse fixed2 restart const prior", "3ff82e17411fc0c8 bfde8f8156a3b803 3fe26e12f812af28 3fd6951e92ca828f 3ff259957f3cc131 3fc2f8f5b2f439de bff0aa1f22da9f46 bfd6161cb060b998 3fe50c3edd79bdf5 bfea527f85ef844c bfd4c0b7f5ee9326 bff61c47a124bdc1 | stages 180/0/0/180,180/161/19/341,240/328/32/568 labels 1258746"),
    ("ms reuse all invsqrt nodebias", "3fd940c23aebe80b bfd9b6dcf104d850 3fe225064c076741 bfd3ffb3e85cee0a 3fe755d2249b6d66 3fc70eaa53f077c5 bfbbebe033344444 3fb4030a8cd23511 bfe52f811cd16b66 3f9b9e9ba3e1713d bfd9f589fb668f92 bfb5c97e2190cece | stages 150/0/0/150,150/150/0/300,180/300/0/480 labels 1018393"),
    ("ms reuse floor-mean-k theory", "3ff2118ea4a1dab3 bff5300ab747c697 3fd97f4fd6925730 bfd279418c14cfa5 3ff8de6e19d933e6 3fe13aec80f76e00 3fc3cc765f9285c2 bfc8bcb693260259 3fda052ea4998e05 bfefd99a1b1def15 bfa2d9920595a11a bff57e95df46b059 | stages 240/0/0/240,360/98/142/458 labels 1258771"),
    ("dpsgd poisson last", "bfe95a2c96467d9b 3ff2dca8f2abe220 40000dfc9a5df6d1 | steps 40 sigma 401e1c11f4f00000"),
    ("dpsgd poisson average theta-b warm", "bfc47dd350be8be8 bfaf1ab9ba1deab0 3fcc4481bf460692 | steps 40 sigma 401e1c11f4f00000"),
    ("dpsgd fixed tail records2 ball", "bfdfcd94c73fe65b 3fcbda299102f04f 3fcb98cebb6f00d1 | steps 41 sigma 401a8cf4d6700000"),
    ("dpsgd full batch fixed sigma tail", "bfe1f587dbdf05ce 3fd60c5bf7f92691 3fd95addd6000dee | steps 25 sigma 3fe6666666666666"),
    ("aup full batch theta-b", "bfc83dbaf99e5d97 3fb987c324325df5 3fb6f3b2cf0a5d37 | steps 30 halted None sigma 40385c6182580000 std 4007f9109cf12f86"),
    ("aup two phases", "bfcdd7aa5a06ba94 3fd00cd149b91fc3 bf920fc1cb5c2793 | steps 60 halted None sigma 40385c6182580000 std 4017f9109cf12f86"),
    ("aup poisson realised warm", "bfb967aa80573cb6 3fc1a680bcafdaac bfa3caadf210f139 | steps 30 halted None sigma 40325fbc6f300000 std 40081bc53c94d750"),
    ("aup fixed-size tau", "400d45c101184b9b 3fe9a411db957e22 3fd2ea2b47be39fe | steps 30 halted None sigma 402d90e57da00000 std 40022f3990edb239"),
    ("aup small tau", "3fa34ab769f58206 3fda85e017dfdc81 bfdcef37051e8cc1 | steps 15 halted Some((1, 15)) sigma 403f732213e00000 std 3fe9175ad537b2ee"),
    ("sgd one-pass theory theta-b", "bfe58fc7a736aca2 3fe408dd6a4a2ab6 bfedcfc8a59c94cf 3fd4936e9b5da774 3fe50cfb94da4301 | iterations 700"),
    ("sgd shuffled polyak ball", "3fa7a28e2bc13491 bfa6aecfe1a59a51 bfb6e1074de2a7f7 bfe6fbdf569535bf 3feac3e2253cf6c8 | iterations 2100"),
    ("sgd minibatch ridge linear sum-zero", "3fa17857951e4b5d bf98139af8df7358 bfb650ac616de123 bfe66c822e9c7b19 3fe8dfaf193f4e22 | iterations 176"),
    ("sgd one_pass rr polyak warm", "3f967c3e02886d66 bfaebe3431764e55 bfa850054c244799 bfe038174c1c9a79 3fe2f518f3e20072 | "),
    ("sgd f32 weighted two epochs", "3fba93d18275100a 3fc2b26892cb10f9 bfcb589dd4455484 bfe4c41cc8862bd2 3fe39b2fe8961ab4 | iterations 1400"),
    ("sgd f32 weighted minibatch shuffled polyak", "3fb130294d003aa7 bf994a4d9a64b712 bfa8c979489d197d bfdeaf8570650336 3fdf8ece2937c5b2 | iterations 100"),
    ("sgd kwise minibatch", "3feef2229a5a9840 bfed2960e2fc714e 3fd11c757dbaaf06 bfb926bfe5305051 3fe47059d947bcd0 3fd1121fa3e40925 bfc9854bf7be4b86 3fe189b8dcfa18f3 3fde233e00ff942b bfe56bf79fc4fb53 bfd1a163a68ac8eb bff01474c8a79314 | iterations 300"),
    ("sgd kwise one-pass shuffled polyak", "3feb4d529a628fc3 bfec1ca4611e2eb0 3fce0b76dbbe4e33 bfb70e1a6b2443c4 3fe217e8e1d38f98 3fcf64cdcdd2f1ae bfc079f0ab2de132 3fe0f480b521ff2f 3fd9e62bb46f9049 bfe44d1322328efd bfcbbf14d75d808d bfec4f27049c181b | iterations 600"),
];
