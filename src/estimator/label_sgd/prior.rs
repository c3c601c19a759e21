//! Per-sample label priors for RRTop-k and RR-with-prior (Ghazi et al. (2021): the prior of
//! RR-with-prior, main paper Alg. 2; the histogram prior, supplement Alg. 4; model priors in
//! multi-stage training):
//!
//! * [`histogram_prior`]: the private histogram prior of Alg. 4 ("SSL priors") over public
//!   cluster ids — per cluster, the label counts plus **K** i.i.d. discrete Laplace draws of
//!   parameter `ε_p/2` (L1 sensitivity 2), clipped at 0 and normalised; uniform when every noisy
//!   count is `≤ 0`. The authors' code calls `scipy.stats.dlaplace.rvs(ε_p/2, K)`, whose second
//!   positional argument is `loc`: one scalar shifted by `K`. Here each of the `K`
//!   bins gets its own draw from the exact sampler [`DiscreteLaplace`]. `ε_p`-label DP.
//! * [`model_prior`]: a trained model's predictive distribution with temperature `t`,
//!   `p̂_k(x) = softmax(−ℓ(u; k)/t)` (`= softmax(f_k(x)/t)` for the logistic and softmax losses,
//!   whose `−ℓ(u; k)` are the log-probabilities; supplement Sec. E). Free when the model
//!   was trained on other samples' privatised labels (post-processing).
//! * [`kmeans`]: Lloyd's algorithm with k-means++ seeding on public features (costs no privacy).

use super::LabelModel;
use crate::error::{check_eps, Error, Result};
use crate::mechanism::{mix_seed, simulation_rng, uniform_f64, DiscreteLaplace};
use crate::privacy::{Assumptions, Guarantee, Neighbouring, NoiseRng, PrivacyModel, PrivacyUnit};

/// A per-sample prior (`n × K`, row-major, each row a distribution) and what it cost.
#[derive(Debug, Clone)]
pub struct Prior {
    /// The rows.
    pub rows: Vec<f64>,
    /// Labels `K`.
    pub k: usize,
    /// Its privacy cost (`None`: computed from public data and other samples' privatised labels
    /// only, free by post-processing).
    pub guarantee: Option<Guarantee>,
}

impl Prior {
    /// A free prior from rows (`n × K`).
    ///
    /// # Errors
    /// [`Error::Shape`] unless the length is a multiple of `k ≥ 2`; [`Error::InvalidParam`]
    /// naming the first row that is not a distribution (finite, `≥ 0`, summing to 1 within
    /// `1e-9`).
    pub fn public(rows: Vec<f64>, k: usize) -> Result<Self> {
        check_rows(&rows, k)?;
        Ok(Prior {
            rows,
            k,
            guarantee: None,
        })
    }
    /// Samples `n`.
    pub fn n(&self) -> usize {
        self.rows.len() / self.k
    }
    /// Row `i`.
    pub fn row(&self, i: usize) -> &[f64] {
        &self.rows[i * self.k..(i + 1) * self.k]
    }
}

fn check_rows(rows: &[f64], k: usize) -> Result<()> {
    if k < 2 || rows.is_empty() || !rows.len().is_multiple_of(k) {
        return Err(Error::Shape(format!(
            "a prior needs n × K values with K ≥ 2, got {} values for K = {k}",
            rows.len()
        )));
    }
    for (i, r) in rows.chunks_exact(k).enumerate() {
        let s: f64 = r.iter().sum();
        if r.iter().any(|p| !(p.is_finite() && *p >= 0.0)) || (s - 1.0).abs() > 1e-9 {
            return Err(Error::param(
                "prior",
                format!("row {i}: a prior must be finite, non-negative and sum to 1 (sum {s})"),
            ));
        }
    }
    Ok(())
}

/// The private histogram prior of a clustering (Ghazi et al. (2021), Alg. 4; module docs) and
/// its parts.
#[derive(Debug, Clone)]
pub struct HistogramPrior {
    /// Per-sample rows (the prior of the sample's cluster), with its `ε_p` guarantee.
    pub prior: Prior,
    /// Per-cluster priors `C × K`.
    pub cluster_priors: Vec<f64>,
    /// Noisy counts `H̃_c[j] = H_c[j] + Z_cj`, `C × K`.
    pub noisy_counts: Vec<i64>,
    /// Clusters `C` (`max id + 1`).
    pub clusters: usize,
    /// The discrete Laplace scale used (`num/den ≥ 2/ε_p`).
    pub noise: DiscreteLaplace,
}

/// The private histogram prior (Ghazi et al. (2021), Alg. 4, one noise draw per bin): for each
/// cluster `c` of the public ids `clusters`, `H̃_c = H_c + Z_c` with `H_c[j] = #{i ∈ c : y_i = j}`
/// and `Z_cj` i.i.d. discrete Laplace `∝ exp(−(ε_p/2)|z|)` (scale rounded up,
/// [`DiscreteLaplace::for_privacy`] with sensitivity 2), `p_c = max(H̃_c, 0)/Σ_j max(H̃_c[j], 0)`
/// (uniform if the sum is 0), and sample `i` gets `p_{c(i)}`. Changing one label moves one unit
/// between two bins of one cluster (L1 sensitivity 2), so the release is `ε_p`-label DP (central,
/// replace-one-label). Noise is drawn cluster by cluster, bin by bin, from `rng` (a CSPRNG unless
/// seeded for a simulation). Empty clusters (ids below the maximum that no sample has) get noise
/// too.
///
/// # Errors
/// [`Error::Shape`] for mismatched lengths or no samples; [`Error::Data`] for a label `≥ K`;
/// [`Error::InvalidParam`] for an invalid `ε_p`, `K ∉ 2..=256`, or more than `2^24` clusters.
pub fn histogram_prior(
    clusters: &[u32],
    labels: &[u8],
    k: usize,
    eps_p: f64,
    rng: &mut NoiseRng,
) -> Result<HistogramPrior> {
    check_eps(eps_p)?;
    if !(2..=256).contains(&k) {
        return Err(Error::param("k", format!("needs 2 ≤ K ≤ 256 labels, got {k}")));
    }
    if clusters.len() != labels.len() || clusters.is_empty() {
        return Err(Error::Shape(format!(
            "{} cluster ids for {} labels (need the same positive number)",
            clusters.len(),
            labels.len()
        )));
    }
    if let Some(row) = labels.iter().position(|&y| usize::from(y) >= k) {
        return Err(Error::Data {
            input: "y",
            at: crate::error::Location { row, col: None },
            kind: crate::error::DataErrorKind::LabelOutOfRange {
                label: i128::from(labels[row]),
                bound: k as u64,
            },
        });
    }
    let c = *clusters.iter().max().expect("non-empty") as usize + 1;
    if c > 1 << 24 {
        return Err(Error::param("clusters", format!("{c} clusters is too many (max 2^24)")));
    }
    let mut counts = vec![0i64; c * k];
    for (&ci, &y) in clusters.iter().zip(labels) {
        counts[ci as usize * k + usize::from(y)] += 1;
    }
    let noise = DiscreteLaplace::for_privacy(eps_p, 2)?;
    for h in counts.iter_mut() {
        *h = h.saturating_add(noise.sample(rng));
    }
    let mut cluster_priors = vec![0.0; c * k];
    for (h, p) in counts.chunks_exact(k).zip(cluster_priors.chunks_exact_mut(k)) {
        let total: i64 = h.iter().map(|&v| v.max(0)).sum();
        if total == 0 {
            p.fill(1.0 / k as f64);
        } else {
            for (pj, &hj) in p.iter_mut().zip(h) {
                *pj = hj.max(0) as f64 / total as f64;
            }
        }
    }
    let mut rows = Vec::with_capacity(clusters.len() * k);
    for &ci in clusters {
        rows.extend_from_slice(&cluster_priors[ci as usize * k..(ci as usize + 1) * k]);
    }
    let (num, den) = noise.scale_ratio();
    let guarantee = Guarantee {
        eps: eps_p,
        delta: 0.0,
        model: PrivacyModel::Central,
        unit: PrivacyUnit::Item,
        neighbouring: Neighbouring::LabelChange,
        mechanism: "private histogram prior over public clusters (Ghazi et al. 2021, Alg. 4): discrete Laplace on every bin, L1 sensitivity 2",
        noise: rng.source(),
        assumptions: Assumptions {
            notes: vec![
                format!("the cluster ids are public (features only); {c} clusters × {k} bins, one exact discrete Laplace draw per bin"),
                format!("discrete Laplace scale {num}/{den} ≥ 2/eps_p (realised eps {:.6e} ≤ {eps_p})", noise.realised_eps(2)),
            ],
            ..Assumptions::default()
        },
    };
    Ok(HistogramPrior {
        prior: Prior {
            rows,
            k,
            guarantee: Some(guarantee),
        },
        cluster_priors,
        noisy_counts: counts,
        clusters: c,
        noise,
    })
}

/// The prior of a trained model at temperature `t`: for each sample in `indices`,
/// `p̂_k = softmax(−ℓ(Φ_iθ; k)/t)` (module docs), as a row-major `|indices| × K` array. Free
/// when `theta` depends only on other samples' privatised labels.
///
/// # Errors
/// [`Error::InvalidParam`] for `t` not finite and `> 0`; [`Error::Shape`] for a `theta` of the
/// wrong length or an index `≥ n`.
pub fn model_prior<M: LabelModel>(model: &M, theta: &[f64], temperature: f64, indices: &[usize]) -> Result<Vec<f64>> {
    if !(temperature.is_finite() && temperature > 0.0) {
        return Err(Error::param(
            "temperature",
            format!("must be finite and > 0, got {temperature}"),
        ));
    }
    if theta.len() != model.dim() {
        return Err(Error::Shape(format!(
            "theta has {} entries, expected {}",
            theta.len(),
            model.dim()
        )));
    }
    let (k, m) = (model.num_labels(), model.num_scores());
    let mut u = vec![0.0; m];
    let mut vals = vec![0.0; k];
    let mut scratch = vec![0.0; model.scratch_len()];
    let mut out = Vec::with_capacity(indices.len() * k);
    for &i in indices {
        if i >= model.n() {
            return Err(Error::Shape(format!("sample index {i} ≥ n = {}", model.n())));
        }
        model.scores(i, theta, &mut u);
        model.eval_all(&u, &mut vals, None, &mut scratch);
        let lo = vals.iter().cloned().fold(f64::INFINITY, f64::min);
        let start = out.len();
        let mut s = 0.0;
        for &v in &vals {
            let e = (-(v - lo) / temperature).exp();
            s += e;
            out.push(e);
        }
        out[start..].iter_mut().for_each(|p| *p /= s);
    }
    Ok(out)
}

/// k-means clustering of the rows of `x` (`n × d`) into `c` clusters: k-means++ seeding from a
/// seeded simulation generator, then Lloyd's iterations until no assignment changes (at most
/// `iters`). Deterministic for a given seed. Features are public, so this costs no privacy
/// (the clustering step of Alg. 4). Returns the cluster id of every row (empty clusters keep their
/// last centre).
///
/// # Errors
/// [`Error::Shape`] for inconsistent sizes; [`Error::InvalidParam`] unless `1 ≤ c ≤ n`.
pub fn kmeans(x: &[f64], n: usize, d: usize, c: usize, iters: usize, seed: u64) -> Result<Vec<u32>> {
    if n == 0 || d == 0 || n.checked_mul(d) != Some(x.len()) {
        return Err(Error::Shape(format!(
            "x has {} values, expected n·d = {n}·{d} (both ≥ 1)",
            x.len()
        )));
    }
    if c == 0 || c > n || c > u32::MAX as usize {
        return Err(Error::param("clusters", format!("need 1 ≤ C ≤ n = {n}, got {c}")));
    }
    let row = |i: usize| &x[i * d..(i + 1) * d];
    let dist2 = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(p, q)| (p - q) * (p - q)).sum::<f64>();
    let mut rng = simulation_rng(mix_seed(seed, 0x6b6d_6561_6e73));
    let mut centres = Vec::with_capacity(c * d);
    let first = ((uniform_f64(&mut rng) * n as f64) as usize).min(n - 1);
    centres.extend_from_slice(row(first));
    let mut best: Vec<f64> = (0..n).map(|i| dist2(row(i), row(first))).collect();
    for _ in 1..c {
        let total: f64 = best.iter().sum();
        let pick = if total > 0.0 {
            let target = uniform_f64(&mut rng) * total;
            let mut acc = 0.0;
            let mut pick = n - 1;
            for (i, &b) in best.iter().enumerate() {
                acc += b;
                if acc > target {
                    pick = i;
                    break;
                }
            }
            pick
        } else {
            ((uniform_f64(&mut rng) * n as f64) as usize).min(n - 1)
        };
        let start = centres.len();
        centres.extend_from_slice(row(pick));
        for (i, b) in best.iter_mut().enumerate() {
            *b = b.min(dist2(row(i), &centres[start..start + d]));
        }
    }
    let mut assign = vec![u32::MAX; n];
    let mut sums = vec![0.0; c * d];
    let mut counts = vec![0usize; c];
    for _ in 0..iters.max(1) {
        let mut changed = false;
        for (i, a) in assign.iter_mut().enumerate() {
            let xi = row(i);
            let (mut bj, mut bd) = (0usize, f64::INFINITY);
            for (j, cj) in centres.chunks_exact(d).enumerate() {
                let v = dist2(xi, cj);
                if v < bd {
                    bd = v;
                    bj = j;
                }
            }
            if *a != bj as u32 {
                *a = bj as u32;
                changed = true;
            }
        }
        if !changed {
            break;
        }
        sums.fill(0.0);
        counts.fill(0);
        for (i, &a) in assign.iter().enumerate() {
            let a = a as usize;
            counts[a] += 1;
            for (s, v) in sums[a * d..(a + 1) * d].iter_mut().zip(row(i)) {
                *s += v;
            }
        }
        for (j, &cnt) in counts.iter().enumerate() {
            if cnt > 0 {
                for (cv, s) in centres[j * d..(j + 1) * d].iter_mut().zip(&sums[j * d..(j + 1) * d]) {
                    *cv = s / cnt as f64;
                }
            }
        }
    }
    Ok(assign)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn histogram_prior_normalises_and_records_its_cost() {
        // Large ε_p: the noise is tiny relative to the counts.
        let clusters = [0u32, 0, 0, 0, 1, 1, 1, 1];
        let labels = [0u8, 0, 0, 1, 2, 2, 2, 2];
        let mut rng = NoiseRng::seeded(4);
        let h = histogram_prior(&clusters, &labels, 3, 1e6, &mut rng).unwrap();
        assert_eq!(h.clusters, 2);
        assert_eq!(h.noisy_counts, vec![3, 1, 0, 0, 0, 4]);
        assert!((h.prior.row(0)[0] - 0.75).abs() < 1e-15);
        assert_eq!(h.prior.row(5), &[0.0, 0.0, 1.0]);
        let g = h.prior.guarantee.as_ref().unwrap();
        assert_eq!((g.eps, g.delta), (1e6, 0.0));
        assert!(!g.holds_for_real_data());
        assert_eq!(h.noisy_counts.len(), 2 * 3, "one draw per bin");
        // Tiny ε_p: the rows are still distributions (uniform when all noisy counts ≤ 0).
        let h = histogram_prior(&clusters, &labels, 3, 1e-3, &mut rng).unwrap();
        for i in 0..8 {
            assert!((h.prior.row(i).iter().sum::<f64>() - 1.0).abs() < 1e-12);
        }
        assert!(histogram_prior(&clusters, &labels[..7], 3, 1.0, &mut rng).is_err());
        assert!(histogram_prior(&clusters, &labels, 2, 1.0, &mut rng).is_err());
        assert!(histogram_prior(&clusters, &labels, 3, 0.0, &mut rng).is_err());
    }

    #[test]
    fn kmeans_separates_blobs() {
        let mut x = Vec::new();
        for i in 0..60 {
            let c = (i % 3) as f64 * 10.0;
            x.extend_from_slice(&[c + (i as f64 * 0.01), -c]);
        }
        let a = kmeans(&x, 60, 2, 3, 50, 1).unwrap();
        for i in 0..60 {
            assert_eq!(a[i], a[i % 3], "row {i}");
        }
        assert_ne!(a[0], a[1]);
        assert_ne!(a[1], a[2]);
        assert_ne!(a[0], a[2]);
        assert_eq!(a, kmeans(&x, 60, 2, 3, 50, 1).unwrap());
        assert!(kmeans(&x, 60, 2, 0, 5, 1).is_err());
        assert!(kmeans(&x, 60, 2, 61, 5, 1).is_err());
    }
}
