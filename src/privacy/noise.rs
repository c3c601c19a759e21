//! Gaussian noise for the central mechanisms, from a vetted sampler (`rand_distr::StandardNormal`,
//! the ziggurat method) driven by an explicit generator.
//!
//! [`NoiseRng`] is the generator the central estimators take: a CSPRNG keyed from OS entropy by
//! default ([`NoiseRng::secure`]), or a seeded simulation generator ([`NoiseRng::seeded`]) whose
//! seed is recorded in the guarantee, which then says "simulation only".

use super::guarantee::NoiseSource;
use crate::error::Result;
use crate::par::Collective;
use crate::rng::{secure_rng, simulation_rng, SecureRng, SimRng};
use rand::{Rng, SeedableRng};
use rand_distr::{Distribution, StandardNormal};
use std::convert::Infallible;

/// The generator of a mechanism's noise, with its provenance: a CSPRNG keyed from OS entropy
/// ([`NoiseRng::secure`]) or a seeded simulation generator ([`NoiseRng::seeded`]).
///
/// The type is opaque on purpose: the only way to obtain a generator that reports
/// [`NoiseSource::Secure`] is [`NoiseRng::secure`], which keys ChaCha20 from operating-system
/// entropy, so a guarantee (or a label provenance) can never call a seeded generator a CSPRNG.
/// Not `Clone`: duplicating a noise stream would reuse noise across releases.
#[derive(Debug)]
pub struct NoiseRng(Inner);

#[derive(Debug)]
enum Inner {
    /// ChaCha20 keyed from operating-system entropy (the default for real data).
    Secure(Box<SecureRng>),
    /// xoshiro256++ from a seed (simulations and tests only).
    Seeded { seed: u64, rng: SimRng },
}

impl NoiseRng {
    /// A CSPRNG keyed from OS entropy ([`crate::mechanism::secure_rng`]).
    ///
    /// # Errors
    /// [`Error::Privacy`](crate::Error::Privacy) when the OS cannot provide entropy.
    pub fn secure() -> Result<Self> {
        Ok(NoiseRng(Inner::Secure(Box::new(secure_rng()?))))
    }
    /// The same CSPRNG on every member of a group of processes: member 0 draws a 32-byte key
    /// from OS entropy and sends it to the others, which key ChaCha20 with it. For a mechanism
    /// run by every member of a distributed fit ([`crate::data::PairwiseView::distributed`]),
    /// which must draw the *same* noise everywhere (the noise is drawn once, as if on member 0
    /// alone). Never use it for noise that must differ between members (privatising each
    /// member's own labels: [`NoiseRng::secure`] on each).
    ///
    /// # Errors
    /// [`Error::Privacy`](crate::Error::Privacy) on every member when member 0 cannot obtain
    /// entropy.
    pub fn secure_shared(group: &dyn Collective) -> Result<Self> {
        // Byte 0: whether member 0 has a key; bytes 1..33: the key.
        let mut buf = [0u8; 33];
        if group.rank() == 0 {
            if let Ok(mut r) = secure_rng() {
                r.fill_bytes(&mut buf[1..]);
                buf[0] = 1;
            }
        }
        group.broadcast(&mut buf);
        if buf[0] != 1 {
            return Err(crate::Error::Privacy(
                "cannot seed the CSPRNG: OS entropy unavailable on member 0 of the group".into(),
            ));
        }
        let mut key = [0u8; 32];
        key.copy_from_slice(&buf[1..]);
        Ok(NoiseRng(Inner::Secure(Box::new(SecureRng::from_seed(key)))))
    }
    /// A seeded simulation generator ([`crate::mechanism::simulation_rng`]): the same stream as
    /// `simulation_rng(seed)`. Anything it randomises is reproducible by whoever knows the seed,
    /// so guarantees and label provenances built on it are marked simulation-only.
    pub fn seeded(seed: u64) -> Self {
        NoiseRng(Inner::Seeded {
            seed,
            rng: simulation_rng(seed),
        })
    }
    /// `seeded(s)` for `Some(s)`, [`NoiseRng::secure`] for `None`.
    pub fn from_seed(seed: Option<u64>) -> Result<Self> {
        match seed {
            Some(s) => Ok(NoiseRng::seeded(s)),
            None => NoiseRng::secure(),
        }
    }
    /// The provenance recorded in a [`Guarantee`](super::Guarantee):
    /// [`NoiseSource::Secure`] or [`NoiseSource::Seeded`] with the seed.
    pub fn source(&self) -> NoiseSource {
        match &self.0 {
            Inner::Secure(_) => NoiseSource::Secure,
            Inner::Seeded { seed, .. } => NoiseSource::Seeded(*seed),
        }
    }
}

impl rand::TryRng for NoiseRng {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> std::result::Result<u32, Infallible> {
        Ok(match &mut self.0 {
            Inner::Secure(r) => r.next_u32(),
            Inner::Seeded { rng, .. } => rng.next_u32(),
        })
    }
    fn try_next_u64(&mut self) -> std::result::Result<u64, Infallible> {
        Ok(match &mut self.0 {
            Inner::Secure(r) => r.next_u64(),
            Inner::Seeded { rng, .. } => rng.next_u64(),
        })
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> std::result::Result<(), Infallible> {
        match &mut self.0 {
            Inner::Secure(r) => r.fill_bytes(dst),
            Inner::Seeded { rng, .. } => rng.fill_bytes(dst),
        }
        Ok(())
    }
}

/// `d` i.i.d. `N(0, std²)` draws: `std · z_j`, `z_j ~ StandardNormal`, in order `j = 0..d`.
pub fn gaussian_vector<R: Rng + ?Sized>(d: usize, std: f64, rng: &mut R) -> Vec<f64> {
    (0..d)
        .map(|_| {
            let z: f64 = StandardNormal.sample(rng);
            std * z
        })
        .collect()
}

/// The symmetrised Gaussian noise of Algorithm 2 of "Provable protection of human judgements"
/// (anon., 2025) (the paper's noise matrix is not symmetric; only its symmetric part matters): a `d
/// × d` matrix `G` of i.i.d. `N(0, std²)` entries (drawn row-major), returned as `G_sym = (G +
/// Gᵀ)/2` (row-major). Symmetrising is post-processing of `Σ_D + G`, so it costs no privacy; the
/// diagonal keeps variance `std²`, off-diagonal entries have `std²/2`.
pub(crate) fn symmetric_gaussian_matrix<R: Rng + ?Sized>(d: usize, std: f64, rng: &mut R) -> Vec<f64> {
    let g = gaussian_vector(d * d, std, rng);
    let mut s = vec![0.0; d * d];
    for i in 0..d {
        for j in 0..d {
            s[i * d + j] = 0.5 * (g[i * d + j] + g[j * d + i]);
        }
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeded_noise_is_reproducible_and_recorded() {
        let mut a = NoiseRng::seeded(11);
        let mut b = NoiseRng::seeded(11);
        assert_eq!(gaussian_vector(5, 2.0, &mut a), gaussian_vector(5, 2.0, &mut b));
        assert_eq!(a.source(), NoiseSource::Seeded(11));
        let s = NoiseRng::secure().unwrap();
        assert_eq!(s.source(), NoiseSource::Secure);
    }

    #[test]
    fn symmetric_matrix_is_symmetric_with_the_stated_variances() {
        let mut r = NoiseRng::seeded(5);
        let d = 4;
        let (mut diag, mut off, mut nd, mut no) = (0.0, 0.0, 0usize, 0usize);
        for _ in 0..4000 {
            let m = symmetric_gaussian_matrix(d, 3.0, &mut r);
            for i in 0..d {
                for j in 0..d {
                    assert_eq!(m[i * d + j], m[j * d + i]);
                    if i == j {
                        diag += m[i * d + j].powi(2);
                        nd += 1;
                    } else {
                        off += m[i * d + j].powi(2);
                        no += 1;
                    }
                }
            }
        }
        let (vd, vo) = (diag / nd as f64, off / no as f64);
        // 16000 diagonal draws: relative sd of the variance estimate ≈ √(2/16000) ≈ 1.1%.
        assert!((vd / 9.0 - 1.0).abs() < 0.05, "{vd}");
        assert!((vo / 4.5 - 1.0).abs() < 0.05, "{vo}");
    }
}
