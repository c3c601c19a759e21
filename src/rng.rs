//! Random number generators: the RNG policy of the crate (every mechanism takes its generator
//! explicitly; see also CONTRIBUTING.md).
//!
//! * **Privatising real data** must use [`secure_rng`]: a [`SecureRng`] (ChaCha20, a CSPRNG)
//!   seeded from operating-system entropy. The privacy guarantee of a local randomiser
//!   (Chowdhury, Zhou & Natarajan (2024), Def. 2.3) assumes its coins are unpredictable
//!   to the adversary; a seeded or non-cryptographic generator voids that assumption.
//! * **Simulations** use [`simulation_rng`]: a seeded [`SimRng`] (xoshiro256++), fast and
//!   reproducible (same seed → same stream on every platform). Never use it on real labels.
//!
//! All mechanisms and generators take the RNG as an explicit `&mut R` argument with
//! `R: rand::Rng + ?Sized`; nothing in the library creates a generator behind the caller's back.

use crate::error::{Error, Result};
use rand::rngs::SysRng;
use rand::{Rng, SeedableRng};

/// The cryptographically secure generator used to privatise real labels: ChaCha20
/// (`rand::rngs::ChaCha20Rng`), 256-bit key. Create it with [`secure_rng`].
pub type SecureRng = rand::rngs::ChaCha20Rng;

/// The seeded generator used by simulations and tests: xoshiro256++
/// (`rand_xoshiro::Xoshiro256PlusPlus`). **Not** cryptographically secure: never use it to
/// privatise real data. Create it with [`simulation_rng`].
pub type SimRng = rand_xoshiro::Xoshiro256PlusPlus;

/// A fresh [`SecureRng`] keyed with 32 bytes of operating-system entropy (`SysRng`, i.e.
/// `getrandom`). This is the generator to pass to
/// [`Mechanism::randomize`](crate::mechanism::Mechanism::randomize) when privatising real labels.
///
/// # Errors
/// [`Error::Privacy`] when the operating system cannot provide entropy. Privatisation must not
/// proceed with a weaker generator in that case.
pub fn secure_rng() -> Result<SecureRng> {
    SecureRng::try_from_rng(&mut SysRng)
        .map_err(|e| Error::Privacy(format!("cannot seed the CSPRNG: OS entropy unavailable ({e})")))
}

/// A seeded [`SimRng`] for simulations: `Xoshiro256PlusPlus::seed_from_u64(seed)` (the seed is
/// expanded to 256 bits with SplitMix64). The same seed gives the same stream on every platform.
/// For simulations and tests only; real privatisation must use [`secure_rng`].
pub fn simulation_rng(seed: u64) -> SimRng {
    SimRng::seed_from_u64(seed)
}

/// Combines a seed with a value (a repetition, a sample size, an epoch…) into a new seed: the
/// SplitMix64 finaliser of `a ⊕ b·φ` (`φ = 0x9E3779B97F4A7C15`), which decorrelates nearby
/// inputs. Used to derive independent, reproducible [`simulation_rng`] streams, e.g.
/// `mix_seed(mix_seed(seed, rep), n)`.
pub fn mix_seed(a: u64, b: u64) -> u64 {
    let mut z = a ^ b.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// `2^-53`.
const TWO_POW_M53: f64 = 1.0 / (1u64 << 53) as f64;

/// A uniform draw on `[0, 1)` from the top 53 bits of one `next_u64()`:
/// `u = (r >> 11) · 2^-53`, so `u ∈ {0, 2^-53, …, 1 − 2^-53}`, each with probability `2^-53`.
///
/// Consequently `P[u < p] = ⌈p·2^53⌉ / 2^53` for `p ∈ [0, 1]`: at least `p` and less than
/// `p + 2^-53`. Every Bernoulli draw in the crate (randomized response, BTL/Thurstone labels) is
/// `u < p` with exactly one `next_u64()` per draw, so the draw order is one word per label.
#[inline]
pub fn uniform_f64<R: Rng + ?Sized>(rng: &mut R) -> f64 {
    (rng.next_u64() >> 11) as f64 * TWO_POW_M53
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uniform_is_in_unit_interval_and_uses_top_bits() {
        struct Fixed(u64);
        impl rand::TryRng for Fixed {
            type Error = std::convert::Infallible;
            fn try_next_u32(&mut self) -> std::result::Result<u32, Self::Error> {
                Ok(self.0 as u32)
            }
            fn try_next_u64(&mut self) -> std::result::Result<u64, Self::Error> {
                Ok(self.0)
            }
            fn try_fill_bytes(&mut self, dst: &mut [u8]) -> std::result::Result<(), Self::Error> {
                dst.fill(0);
                Ok(())
            }
        }
        assert_eq!(uniform_f64(&mut Fixed(0)), 0.0);
        assert_eq!(uniform_f64(&mut Fixed(u64::MAX)), 1.0 - TWO_POW_M53);
        assert_eq!(uniform_f64(&mut Fixed(1 << 11)), TWO_POW_M53);
        assert_eq!(uniform_f64(&mut Fixed((1 << 11) - 1)), 0.0);
        assert_eq!(uniform_f64(&mut Fixed(1 << 63)), 0.5);
    }

    #[test]
    fn simulation_rng_is_seeded() {
        let mut a = simulation_rng(7);
        let mut b = simulation_rng(7);
        let mut c = simulation_rng(8);
        let va: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        let vc: Vec<u64> = (0..4).map(|_| c.next_u64()).collect();
        assert_eq!(va, vb);
        assert_ne!(va, vc);
    }

    #[test]
    fn secure_rng_streams_differ() {
        let mut a = secure_rng().unwrap();
        let mut b = secure_rng().unwrap();
        let va: Vec<u64> = (0..4).map(|_| a.next_u64()).collect();
        let vb: Vec<u64> = (0..4).map(|_| b.next_u64()).collect();
        assert_ne!(va, vb);
    }
}
