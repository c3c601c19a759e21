//! Rounding of a purified policy to a deterministic one ([`super::pessimistic_policy`], module
//! docs of its file): the randomised states (at most `d` after purification) take the
//! combination of their support actions that maximises `Ĵ` — all combinations when there are at
//! most [`ROUND_ENUMERATE`], else state by state in index order, each given the others' mixed
//! contribution.

use super::confidence::ConfidenceSet;
use super::states::StateActions;

/// Largest number of roundings of the randomised states tried exhaustively.
const ROUND_ENUMERATE: usize = 4096;

/// A deterministic policy from a stochastic one.
pub(super) struct Rounding {
    /// The action of each state.
    pub(super) actions: Vec<u32>,
    /// States rounded.
    pub(super) rounded: usize,
    /// Bound on the loss of rounding: `R_C Σ_{rounded} ρ_s max_{a,b}‖φ(s,a) − φ(s,b)‖`.
    pub(super) bound: f64,
    /// `Ĵ` (certified lower bound) of `actions`; NaN when not computed.
    pub(super) value: f64,
}

impl Rounding {
    /// `actions` as they are, nothing rounded and no value computed.
    pub(super) fn none(actions: Vec<u32>) -> Self {
        Rounding {
            actions,
            rounded: 0,
            bound: 0.0,
            value: f64::NAN,
        }
    }
}

/// A randomised state: its support and its mixed contribution `Σ_a π_s(a) φ(s, a)`.
struct Fractional {
    state: usize,
    support: Vec<usize>,
    mean: Vec<f64>,
}

/// Rounds the stochastic policy `probs` (row-major `n × A`) whose `g` is `g_pur`: every
/// combination of the randomised states' support actions when there are at most
/// [`ROUND_ENUMERATE`] (exact over those states), else state by state.
pub(super) fn round(states: &StateActions<'_>, set: &ConfidenceSet, probs: &[f64], g_pur: &[f64]) -> Rounding {
    let mut g_det = g_pur.to_vec();
    let (mut det, frac, bound) = fractional_states(states, probs, set.max_norm_bound(), &mut g_det);
    let combos = frac
        .iter()
        .try_fold(1usize, |acc, f| acc.checked_mul(f.support.len()))
        .filter(|&c| c <= ROUND_ENUMERATE);
    match combos {
        Some(total) => round_exhaustive(states, set, &frac, total, &mut g_det, &mut det),
        None => round_state_by_state(states, set, &frac, &mut g_det, &mut det),
    }
    Rounding {
        actions: det,
        rounded: frac.len(),
        bound,
        value: set.minimize(&g_det).lower,
    }
}

/// The first support action of every state, the randomised states, and the rounding bound
/// (`r_c` is `R_C`). Each randomised state's mixed contribution is removed from `g_det` (it is
/// added back for the chosen action).
fn fractional_states(
    states: &StateActions<'_>,
    probs: &[f64],
    r_c: f64,
    g_det: &mut [f64],
) -> (Vec<u32>, Vec<Fractional>, f64) {
    let (n, na, d) = (states.n(), states.actions(), states.d());
    let mut det = Vec::with_capacity(n);
    let mut frac = Vec::new();
    let mut bound = 0.0;
    for s in 0..n {
        let row = &probs[s * na..(s + 1) * na];
        let support: Vec<usize> = (0..na).filter(|&a| row[a] > 0.0).collect();
        det.push(support[0] as u32);
        if support.len() == 1 {
            continue;
        }
        let rho = states.rho(s);
        let mean: Vec<f64> = (0..d)
            .map(|j| support.iter().map(|&a| row[a] * states.feature(s, a)[j]).sum())
            .collect();
        // Remove the state's mixed contribution; it is added back for the chosen action.
        g_det.iter_mut().zip(&mean).for_each(|(gj, m)| *gj -= rho * m);
        bound += r_c * rho * support_diameter(states, s, &support);
        frac.push(Fractional {
            state: s,
            support,
            mean,
        });
    }
    (det, frac, bound)
}

/// `max_{a,b ∈ support}‖φ(s,a) − φ(s,b)‖`.
fn support_diameter(states: &StateActions<'_>, s: usize, support: &[usize]) -> f64 {
    let mut diam: f64 = 0.0;
    for &a in support {
        for &b in support {
            let dist: f64 = states
                .feature(s, a)
                .iter()
                .zip(states.feature(s, b))
                .map(|(x, y)| (x - y) * (x - y))
                .sum::<f64>()
                .sqrt();
            diam = diam.max(dist);
        }
    }
    diam
}

/// `g += ρ_s φ(s, a)`.
fn add_action(states: &StateActions<'_>, g: &mut [f64], s: usize, a: usize) {
    let rho = states.rho(s);
    g.iter_mut()
        .zip(states.feature(s, a))
        .for_each(|(gj, f)| *gj += rho * f);
}

/// Tries all `total` combinations of the randomised states' support actions; the best (first
/// on ties) goes into `g_det` and `det`.
fn round_exhaustive(
    states: &StateActions<'_>,
    set: &ConfidenceSet,
    frac: &[Fractional],
    total: usize,
    g_det: &mut [f64],
    det: &mut [u32],
) {
    let mut best = (f64::NEG_INFINITY, vec![0usize; frac.len()]);
    let mut pick = vec![0usize; frac.len()];
    for code in 0..total {
        let mut c = code;
        let mut gc = g_det.to_vec();
        for (i, f) in frac.iter().enumerate() {
            pick[i] = c % f.support.len();
            c /= f.support.len();
            add_action(states, &mut gc, f.state, f.support[pick[i]]);
        }
        let val = set.minimize(&gc).lower;
        if val > best.0 {
            best = (val, pick.clone());
        }
    }
    for (i, f) in frac.iter().enumerate() {
        let a = f.support[best.1[i]];
        add_action(states, g_det, f.state, a);
        det[f.state] = a as u32;
    }
}

/// State by state in index order, the others at their mixed contribution: each randomised
/// state takes its best support action (first on ties) given the choices before it.
fn round_state_by_state(
    states: &StateActions<'_>,
    set: &ConfidenceSet,
    frac: &[Fractional],
    g_det: &mut [f64],
    det: &mut [u32],
) {
    for f in frac {
        g_det
            .iter_mut()
            .zip(&f.mean)
            .for_each(|(gj, m)| *gj += states.rho(f.state) * m);
    }
    for f in frac {
        g_det
            .iter_mut()
            .zip(&f.mean)
            .for_each(|(gj, m)| *gj -= states.rho(f.state) * m);
        let mut best = (f64::NEG_INFINITY, f.support[0]);
        for &a in &f.support {
            let mut gc = g_det.to_vec();
            add_action(states, &mut gc, f.state, a);
            let val = set.minimize(&gc).lower;
            if val > best.0 {
                best = (val, a);
            }
        }
        add_action(states, g_det, f.state, best.1);
        det[f.state] = best.1 as u32;
    }
}
