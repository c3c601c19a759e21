//! Features of any magnitude: the fit runs on features rescaled by an exact power of two.
//!
//! The solvers work in double precision with a few absolute constants (the first trial step,
//! the floor of `max(1, ‖θ‖)`, the range of `exp`), and the dense Hessian squares the features.
//! Features whose typical magnitude `2^e` (the rounded mean binary exponent of the rows'
//! largest entries, from the validation pass: [`Magnitude`]) lies outside `2^±32` are therefore
//! solved as the *exactly* equivalent problem on `X' = X·2^{−e}`:
//!
//! `θ' = θ·2^e`, radius `B' = B·2^e`, ridge `β' = β·2^{−2e}`, linear term `b' = b·2^{−e}`,
//! warm start `θ'₀ = θ₀·2^e`,
//!
//! so that `X'θ' = Xθ` and `F'(θ') = F(θ)` to the last bit (multiplying by a power of two is
//! exact away from overflow and underflow). The answer is mapped back (`θ = θ'·2^{−e}`, the
//! ball multiplier `μ = μ'·2^{2e}`); the objective, the relative KKT residual and the
//! suboptimality bound are invariant. The copy costs one `n × d` `f64` buffer, only on such
//! data. Scale covariance `θ(2^k X) = θ(X)·2^{−k}` is then exact.
//!
//! This applies to the pairwise fits of [`fit`](super::fit); the K-wise fits
//! ([`fit_kwise`](super::fit_kwise)) run on the features as given (their solvers still measure
//! sizes in the column-scaled norm and certify with the relative KKT residual).
//!
//! After normalisation the largest entry must stay below [`MAX_ABS`]: a feature more than
//! `2^448` times the typical row maximum would overflow the squares and Gram products of the
//! Hessian passes, and is a typed error naming it ([`DataErrorKind::OutOfScale`]).

use crate::data::{Magnitude, PairwiseView};
use crate::error::{DataErrorKind, Error, Location, Result};
use crate::feasible::FeasibleSet;
use crate::solver::SolveReport;

/// Typical magnitudes `2^e` with `|e|` above this are normalised (module docs).
pub(crate) const NORMALISE_ABOVE: i32 = 32;

/// The largest `|x_ij|` allowed after normalisation, `2^448` (squares `2^896`, sums of up to
/// `2^100` of them stay finite).
pub(crate) const MAX_ABS: f64 = 7.268_387_242_956_069e134;

/// The exponent `e` the fit normalises by (0 when the features are within `2^±32`).
pub(crate) fn exponent(m: &Magnitude) -> i32 {
    let e = m.exponent();
    if e.abs() > NORMALISE_ABOVE {
        e
    } else {
        0
    }
}

/// Whether features of summary `m` are fitted as they are: no normalisation (`e = 0`) and no
/// entry out of scale ([`check_range`] at `e = 0` passes).
pub(crate) fn fits_unnormalised(m: &Magnitude) -> bool {
    exponent(m) == 0 && !(m.max_abs() > MAX_ABS)
}

/// Checks that the largest feature stays below [`MAX_ABS`] after normalisation by `2^e`; the
/// error names the first such entry.
pub(crate) fn check_range(data: &PairwiseView<'_>, e: i32) -> Result<()> {
    let limit = MAX_ABS * pow2(e);
    if !(data.magnitude().max_abs() > limit) {
        return Ok(());
    }
    let (n, d) = (data.n(), data.d());
    let first = data.data_first();
    let held = first..first + data.features().len() / d;
    let mut row = vec![0.0; d];
    let mut found = None;
    for i in held.clone() {
        data.row_into(i, &mut row);
        if let Some(j) = row.iter().position(|v| v.abs() > limit) {
            found = Some((i, j));
            break;
        }
    }
    // Rows held in parts: the first over the members (every member enters here: the
    // magnitude summary is the group's).
    if held.len() < n {
        if let Some(shard) = data.shard() {
            let mine = found.map_or([-1.0, 0.0], |(i, j)| [i as f64, j as f64]);
            let all = shard.collective().all_gather(&mine);
            found = all
                .chunks_exact(2)
                .filter(|m| m[0] >= 0.0)
                .min_by(|a, b| a[0].total_cmp(&b[0]))
                .map(|m| (m[0] as usize, m[1] as usize));
        }
    }
    match found {
        Some((i, j)) => Err(Error::Data {
            input: "x",
            at: Location { row: i, col: Some(j) },
            kind: DataErrorKind::OutOfScale,
        }),
        None => Ok(()),
    }
}

/// `2^k` for `|k| ≤ 2000`, exactly (in two factors where one would overflow).
pub(crate) fn pow2(k: i32) -> f64 {
    let k = k.clamp(-2000, 2000);
    let (a, b) = (k / 2, k - k / 2);
    2f64.powi(a) * 2f64.powi(b)
}

/// The features `X·2^{−e}` (the rows the view holds) as a new row-major buffer.
pub(crate) fn scaled_features(data: &PairwiseView<'_>, e: i32) -> Vec<f64> {
    let s = pow2(-e);
    let mut out = vec![0.0; data.features().len()];
    data.features().copy_into(0, &mut out);
    out.iter_mut().for_each(|v| *v *= s);
    out
}

/// The feasible set in the normalised coordinates (`B' = B·2^e`).
pub(crate) fn scaled_set(set: FeasibleSet, e: i32) -> Result<FeasibleSet> {
    let s = pow2(e);
    match set {
        FeasibleSet::ThetaB { radius } => FeasibleSet::theta_b(radius.get() * s),
        FeasibleSet::Ball { radius } => FeasibleSet::ball(radius.get() * s),
        other => Ok(other),
    }
}

/// Maps a report of the normalised problem back to the original coordinates.
pub(crate) fn unscale_report(rep: &mut SolveReport, e: i32) {
    let back = pow2(-e);
    rep.theta.iter_mut().for_each(|t| *t *= back);
    rep.certificate.multiplier *= pow2(2 * e);
    rep.detail.last_step_norm *= back;
    rep.detail.max_shift *= pow2(2 * e);
    // θ − Π(θ − ∇F) mixes the units of θ and of the gradient: not available from the
    // normalised problem.
    rep.certificate.projected_gradient = f64::NAN;
}
