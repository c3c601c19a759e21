//! Plackett–Luce K-wise preference generator (Chowdhury, Zhou & Natarajan (2024), eq. 11; "Provable
//! protection of human judgements" (anon., 2025), Sec. 4.2).

use crate::data::group::MAX_K;
use crate::data::GroupData;
use crate::error::{Error, Result};
use crate::mechanism::uniform_f64;
use rand::Rng;
use rand_distr::{Distribution, StandardNormal};

/// `n` samples of `k` alternatives with Plackett–Luce rankings under `θ = theta`:
///
/// ```text
/// φ_ik ~ N(0, I_d) i.i.d.,   u_ik = φ_ikᵀθ,
/// P(o_i) = Π_{j<K} exp(u_{i,o_j}) / Σ_{l≥j} exp(u_{i,o_l})        (sequential choice),
/// ```
///
/// drawn exactly by the Gumbel-max construction: with `G_ik = −log(−log U_ik)` i.i.d. standard
/// Gumbel, the alternatives sorted by decreasing `u_ik + G_ik` form a Plackett–Luce ranking
/// (Yellott 1977); its first entry is the top-1 choice, `P(o_0 = k) = softmax(u_i)_k`
/// ([`GroupData::choices`]). Features are raw per-alternative features (not differences), as the
/// Plackett–Luce model uses them.
///
/// **Draw order** (fixed; same seed → identical data): samples `i = 0, …, n−1` in turn; for each,
/// `K·d` standard normals (`rand_distr::StandardNormal`) for `φ_i0, …, φ_i,K−1` in row order, then
/// `K` uniforms [`uniform_f64`] `U_i0, …, U_i,K−1` (one `next_u64()` each). `u_ik = Σ_j φ_ikj θ_j`
/// summed in index order; ties of `u + G` are broken by the smaller alternative index. The
/// first `m` samples of an `n`-sample draw equal the `m`-sample draw (nested samples).
///
/// # Errors
/// [`Error::InvalidParam`] if `n = 0`, `k ∉ 2..=256`, `theta` is empty or non-finite, or
/// `n·K·d` overflows.
pub fn pl_groups<R: Rng + ?Sized>(n: usize, k: usize, theta: &[f64], rng: &mut R) -> Result<GroupData> {
    let d = theta.len();
    if n == 0 {
        return Err(Error::param("n", "must be >= 1, got 0"));
    }
    if !(2..=MAX_K).contains(&k) {
        return Err(Error::param("k", format!("needs 2 ≤ K ≤ {MAX_K}, got {k}")));
    }
    if d == 0 {
        return Err(Error::param("theta", "is empty (d = 0)"));
    }
    if let Some(j) = theta.iter().position(|v| !v.is_finite()) {
        return Err(Error::param("theta", format!("entry {j} is not finite ({})", theta[j])));
    }
    let len = n
        .checked_mul(k)
        .and_then(|v| v.checked_mul(d))
        .ok_or_else(|| Error::param("n", format!("n·K·d = {n}·{k}·{d} overflows")))?;
    let mut x = Vec::with_capacity(len);
    let mut ranking = Vec::with_capacity(n * k);
    let mut z = vec![0.0; k];
    let mut idx: Vec<u8> = Vec::with_capacity(k);
    for _ in 0..n {
        for zr in z.iter_mut() {
            let mut u = 0.0;
            for &th in theta {
                let v: f64 = StandardNormal.sample(rng);
                u += v * th;
                x.push(v);
            }
            *zr = u;
        }
        for zr in z.iter_mut() {
            // Standard Gumbel from U ∈ [0, 1): U = 0 gives −∞ (last place), probability 2⁻⁵³.
            *zr -= (-uniform_f64(rng).ln()).ln();
        }
        idx.clear();
        idx.extend((0..k).map(|r| r as u8));
        idx.sort_by(|&a, &b| z[usize::from(b)].total_cmp(&z[usize::from(a)]).then(a.cmp(&b)));
        ranking.extend_from_slice(&idx);
    }
    Ok(GroupData {
        x,
        ranking,
        weights: None,
        n,
        k,
        d,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mechanism::simulation_rng;

    #[test]
    fn draw_order_and_validity() {
        let theta = [0.5, -1.0];
        let a = pl_groups(20, 4, &theta, &mut simulation_rng(3)).unwrap();
        let b = pl_groups(20, 4, &theta, &mut simulation_rng(3)).unwrap();
        assert_eq!(a, b);
        let c = pl_groups(7, 4, &theta, &mut simulation_rng(3)).unwrap();
        assert_eq!(&a.x[..7 * 8], &c.x[..]);
        assert_eq!(&a.ranking[..28], &c.ranking[..]);
        a.ranking_view().unwrap();
        assert_eq!(a.choices().len(), 20);
    }

    #[test]
    fn choice_frequencies_match_softmax() {
        // Fixed features via θ = 0 on the first coordinate would be uniform; use a tabular-like
        // check: with θ large on coordinate 0 the choice is the alternative with the largest
        // φ_k0 most of the time. Here: frequency of the top-1 choice against the average
        // softmax probability, 40000 samples, K = 3.
        let theta = [1.0];
        let data = pl_groups(40_000, 3, &theta, &mut simulation_rng(8)).unwrap();
        let (mut hit, mut expect) = (0.0, 0.0);
        for i in 0..data.n {
            let u: Vec<f64> = (0..3).map(|r| data.x[i * 3 + r]).collect();
            let m = u.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
            let s: f64 = u.iter().map(|v| (v - m).exp()).sum();
            let c = usize::from(data.ranking[i * 3]);
            expect += (u[0] - m).exp() / s;
            hit += f64::from(u8::from(c == 0));
        }
        // Binomial-like sd ≤ sqrt(n/4) = 100: 5 sd = 500.
        assert!((hit - expect).abs() < 500.0, "{hit} vs {expect}");
    }

    #[test]
    fn invalid_parameters() {
        let mut rng = simulation_rng(0);
        assert!(pl_groups(0, 3, &[1.0], &mut rng).is_err());
        assert!(pl_groups(3, 1, &[1.0], &mut rng).is_err());
        assert!(pl_groups(3, 3, &[], &mut rng).is_err());
        assert!(pl_groups(3, 3, &[f64::NAN], &mut rng).is_err());
    }
}
