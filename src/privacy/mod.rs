//! Privacy guarantees, noise calibrations and noise generation.
//!
//! * [`Guarantee`]: `(ε, δ)`, model (local | central), unit (item | user), neighbouring
//!   relation, the noise source, and the assumptions the calibration relied on (feature bound
//!   `L`, exactness tolerance, radius). Every estimator returns one (`None` = not private).
//! * [`Provenance`] and [`PrivatizedLabels`]: how labels were privatised (the [`Randomizer`]
//!   with `ε`, `k`, priors or user counts; the [`Origin`]: a library mechanism with its
//!   [`Generator`], a record of one, or the caller's assertion). A local guarantee is built from
//!   the labels' provenance ([`Provenance::guarantee`]), never from the loss.
//! * [`calibrate`]: the noise scales of objective perturbation (Chowdhury, Zhou & Natarajan (2024),
//!   Thm 5.2), the private MLE and private covariance of "Provable protection of human judgements"
//!   (anon., 2025) (Algorithms 1–2, with corrected constants, listed in `docs/papers.md`), the
//!   classic Gaussian mechanism and its exact privacy profile for audits; [`calibrate_kwise`]:
//!   their K-wise (Plackett–Luce) constants (Thm 4.3 of that paper, derived).
//! * [`rdp`]: the Rényi-DP accountant of the Poisson-subsampled Gaussian mechanism (integer and
//!   fractional orders, add/remove and replace-one neighbours, RDP → (ε, δ), noise calibration)
//!   for user-wise DP-SGD and AdapUserPriv-SGD (Zhang et al. (2025)).
//! * [`pld`]: the privacy-loss-distribution accountant of the same mechanism (pessimistic
//!   connect-the-dots discretisation, FFT composition): tighter than RDP; chosen by
//!   [`rdp::Accounting::Pld`] in an [`rdp::Accountant`].
//! * `noise`: [`NoiseRng`] (CSPRNG by default, seeded simulation generator on request, with
//!   provenance) and Gaussian vectors / symmetric matrices from `rand_distr::StandardNormal`.
//!
//! The central estimators themselves are in [`crate::estimator::central`],
//! [`crate::estimator::private_mle`] and [`crate::estimator::private_mle_kwise`].

pub mod calibrate;
pub mod calibrate_kwise;
mod guarantee;
pub(crate) mod noise;
pub mod pld;
mod provenance;
pub mod rdp;

pub use crate::data::FeatureBound;
pub(crate) use calibrate::check_feature_bound;
pub use calibrate::{
    analytic_gaussian_std, calibrate_private_mle, gaussian_mechanism_std, objpert_noise_std, PrivateMleCalibration,
    PrivateMleParams,
};
pub use calibrate_kwise::{calibrate_kwise_private_mle, kwise_covariance_sensitivity};
pub use guarantee::{Assumptions, Guarantee, Neighbouring, NoiseSource, PrivacyModel, PrivacyUnit};
pub(crate) use noise::symmetric_gaussian_matrix;
pub use noise::{gaussian_vector, NoiseRng};
pub use provenance::{Generator, KeyId, Origin, PrivatizedLabels, Provenance, Randomizer};
#[cfg(feature = "signing")]
pub mod record;
