//! Where privatised labels come from, and the local guarantee that follows from it.
//!
//! A local label-DP guarantee is a property of the **labels**, not of the loss fitted to them:
//! an estimator computed from labels that were each randomised once by an `ε`-label-LDP
//! randomiser is `ε`-label-DP by post-processing (Chowdhury, Zhou & Natarajan (2024),
//! Def. 2.3 and Remark 2.4). A loss calibrated to `ε` (the debiased randomized-response loss)
//! says nothing about how, or whether, its labels were randomised. So the estimators attach a
//! local guarantee only to labels that carry a [`Provenance`]:
//!
//! | [`Origin`] | how it is obtained | guarantee |
//! |---|---|---|
//! | [`Origin::Library`] with [`Generator::Csprng`] | a mechanism's `privatize` with [`NoiseRng::secure`](super::NoiseRng::secure) | `ε`, holds for real data |
//! | [`Origin::Library`] with [`Generator::Simulation`] | a mechanism's `privatize` with [`NoiseRng::seeded`](super::NoiseRng::seeded) | `ε`, **simulation only** (the seed undoes the randomisation) |
//! | [`Origin::SignedRecord`] | `SignedRecord::verify` (feature `signing`): a record of a library privatisation, signed by a key the caller trusts (the CLI's side-car file) | as recorded; simulation only if the record says so |
//! | [`Origin::UnverifiedRecord`] | [`Provenance::from_record`], or a record without a trusted signature | as recorded, but **unverified**: does not hold for real data |
//! | [`Origin::AssertedByCaller`] | [`Provenance::asserted_by_caller`] | `ε`, "asserted by the caller": the library neither performed nor checked the randomisation |
//! | none | raw `&[u8]` labels | no local guarantee (the fit still runs, and says why) |
//!
//! [`PrivatizedLabels`] keeps the labels and their provenance together. A library provenance
//! cannot be detached and re-attached to other labels: [`PrivatizedLabels::new`] accepts only
//! recorded and asserted provenances.

use super::guarantee::{Assumptions, Guarantee, Neighbouring, NoiseSource, PrivacyModel, PrivacyUnit};
use super::noise::NoiseRng;
use crate::data::check_labels;
use crate::error::{check_eps, Error, Result};
use std::fmt;

/// A local label randomiser with its parameters: what the labels went through.
///
/// Every variant is pure `ε`-label-LDP for its unit (Chowdhury, Zhou & Natarajan (2024),
/// Def. 2.3): `P[ỹ | y] ≤ e^ε · P[ỹ | y']`.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum Randomizer {
    /// Binary randomized response on `{0, 1}` (Chowdhury, Zhou & Natarajan (2024), eq. 2):
    /// `P[ỹ = y] = σ(ε) = e^ε/(1 + e^ε)`.
    Rr {
        /// `ε > 0`.
        eps: f64,
    },
    /// K-ary randomized response on `{0, …, k−1}` (Chowdhury, Zhou & Natarajan (2024), Sec. 4.4;
    /// Ghazi et al. (2021)): `P[ỹ = y] = e^ε/(e^ε + k − 1)`, each other label `1/(e^ε + k − 1)`.
    Krr {
        /// `ε > 0`.
        eps: f64,
        /// The number of labels `k`, `2 ≤ k ≤ 256`.
        k: usize,
    },
    /// RRTop-k with a per-sample prior that does not depend on the sample's own label (Ghazi
    /// et al. (2021)): randomized response over the `k` labels of largest prior mass, a label
    /// outside them replaced by a uniform draw from them.
    RrTopK {
        /// `ε > 0`.
        eps: f64,
        /// The size `k` of the top set, `1 ≤ k ≤ num_labels`.
        k: usize,
        /// The number of labels `K`, `2 ≤ K ≤ 256`.
        num_labels: usize,
    },
    /// RR-with-prior (Ghazi et al. (2021), Alg. 2): RRTop-`k*` with the per-sample `k*` that
    /// maximises the probability of reporting the true label under the prior.
    RrWithPrior {
        /// `ε > 0`.
        eps: f64,
        /// The number of labels `K`, `2 ≤ K ≤ 256`.
        num_labels: usize,
    },
    /// User-level randomized response with user budget `ε` (Zhang et al. (2025), Sec. 4.1): each
    /// of user `u`'s `m_u` labels through binary randomized response at `ε/m_u`, so that all of
    /// one user's labels together are `ε`-DP.
    UserLevelRr {
        /// The user budget `ε > 0`.
        eps: f64,
        /// The public counts `m_u ≥ 1`, users in row order (the rows of user `u` are
        /// consecutive, as in [`UserIndex`](crate::data::UserIndex)).
        counts: Vec<usize>,
    },
}

impl Randomizer {
    /// The privacy level `ε` (the user budget for [`Randomizer::UserLevelRr`]).
    pub fn eps(&self) -> f64 {
        match *self {
            Randomizer::Rr { eps }
            | Randomizer::Krr { eps, .. }
            | Randomizer::RrTopK { eps, .. }
            | Randomizer::RrWithPrior { eps, .. }
            | Randomizer::UserLevelRr { eps, .. } => eps,
        }
    }

    /// The number of labels `K` of the randomiser's input and output alphabet.
    pub fn num_labels(&self) -> usize {
        match *self {
            Randomizer::Rr { .. } | Randomizer::UserLevelRr { .. } => 2,
            Randomizer::Krr { k, .. } => k,
            Randomizer::RrTopK { num_labels, .. } | Randomizer::RrWithPrior { num_labels, .. } => num_labels,
        }
    }

    /// The unit protected: one item, or one user for [`Randomizer::UserLevelRr`].
    pub fn unit(&self) -> PrivacyUnit {
        match self {
            Randomizer::UserLevelRr { .. } => PrivacyUnit::User,
            _ => PrivacyUnit::Item,
        }
    }

    /// Stable short name (CLI, JSON): `rr`, `krr`, `rrtopk`, `rr-prior`, `user-rr`.
    pub fn name(&self) -> &'static str {
        match self {
            Randomizer::Rr { .. } => "rr",
            Randomizer::Krr { .. } => "krr",
            Randomizer::RrTopK { .. } => "rrtopk",
            Randomizer::RrWithPrior { .. } => "rr-prior",
            Randomizer::UserLevelRr { .. } => "user-rr",
        }
    }

    /// Checks the parameters: `ε` finite and `> 0`; `2 ≤ K ≤ 256`; `1 ≤ k ≤ K` for RRTop-k;
    /// at least one user and every count `≥ 1` for user-level RR.
    ///
    /// # Errors
    /// [`Error::InvalidParam`] naming the parameter.
    pub fn validate(&self) -> Result<()> {
        check_eps(self.eps())?;
        let kk = self.num_labels();
        if !(2..=256).contains(&kk) {
            return Err(Error::param("k", format!("needs 2 ≤ K ≤ 256 labels, got {kk}")));
        }
        match self {
            Randomizer::RrTopK { k, num_labels, .. } if !(1..=*num_labels).contains(k) => Err(Error::param(
                "k",
                format!("RRTop-k needs 1 ≤ k ≤ K = {num_labels}, got {k}"),
            )),
            Randomizer::UserLevelRr { counts, .. } if counts.is_empty() || counts.contains(&0) => Err(Error::param(
                "counts",
                "user-level randomized response needs at least one user and every user count ≥ 1",
            )),
            _ => Ok(()),
        }
    }

    /// The number of labels the randomiser covers, when it is fixed by its parameters (the
    /// sum of the user counts for [`Randomizer::UserLevelRr`]).
    fn fixed_len(&self) -> Option<usize> {
        match self {
            Randomizer::UserLevelRr { counts, .. } => Some(counts.iter().sum()),
            _ => None,
        }
    }

    /// The guarantee's mechanism text.
    pub(crate) fn mechanism_text(&self) -> &'static str {
        match self {
            Randomizer::Rr { .. } => {
                "randomized response (Chowdhury, Zhou & Natarajan (2024), eq. 2); the estimator is post-processing"
            }
            Randomizer::Krr { .. } => {
                "K-ary randomized response (Chowdhury, Zhou & Natarajan (2024), Sec. 4.4); the estimator is post-processing"
            }
            Randomizer::RrTopK { .. } => "RRTop-k with a prior (Ghazi et al. (2021)); the estimator is post-processing",
            Randomizer::RrWithPrior { .. } => {
                "RR-with-prior (Ghazi et al. (2021), Alg. 2); the estimator is post-processing"
            }
            Randomizer::UserLevelRr { .. } => {
                "user-level randomized response, eps/m_u per label (Zhang et al. (2025), Sec. 4.1); the estimator is post-processing"
            }
        }
    }
}

impl fmt::Display for Randomizer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Randomizer::Rr { eps } => write!(f, "binary randomized response at eps = {eps}"),
            Randomizer::Krr { eps, k } => write!(f, "K-ary randomized response over K = {k} labels at eps = {eps}"),
            Randomizer::RrTopK { eps, k, num_labels } => write!(
                f,
                "RRTop-k (k = {k} of K = {num_labels} labels, per-sample priors) at eps = {eps}"
            ),
            Randomizer::RrWithPrior { eps, num_labels } => {
                write!(f, "RR-with-prior over K = {num_labels} labels at eps = {eps}")
            }
            Randomizer::UserLevelRr { eps, counts } => write!(
                f,
                "user-level randomized response at user budget eps = {eps} ({} users, {} labels, each label of user u at eps/m_u)",
                counts.len(),
                counts.iter().sum::<usize>()
            ),
        }
    }
}

/// Which generator drew a library randomisation's coins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Generator {
    /// ChaCha20 keyed from operating-system entropy ([`NoiseRng::secure`]): the coins are
    /// unpredictable, as the local guarantee requires.
    Csprng,
    /// xoshiro256++ from a seed ([`NoiseRng::seeded`]): reproducible, **simulation only**:
    /// anyone who knows the seed can undo the randomisation, so the guarantee is void for real
    /// data.
    Simulation {
        /// The seed.
        seed: u64,
    },
}

impl Generator {
    /// The generator behind `rng`.
    pub fn of(rng: &NoiseRng) -> Self {
        match rng.source() {
            NoiseSource::Seeded(seed) => Generator::Simulation { seed },
            _ => Generator::Csprng,
        }
    }

    /// Stable name (JSON): `csprng` or `simulation`.
    pub fn name(&self) -> &'static str {
        match self {
            Generator::Csprng => "csprng",
            Generator::Simulation { .. } => "simulation",
        }
    }

    /// The [`NoiseSource`] a guarantee built on it records.
    fn noise_source(&self) -> NoiseSource {
        match *self {
            Generator::Csprng => NoiseSource::Secure,
            Generator::Simulation { seed } => NoiseSource::Seeded(seed),
        }
    }
}

impl fmt::Display for Generator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Generator::Csprng => write!(f, "ChaCha20 keyed from OS entropy"),
            Generator::Simulation { seed } => write!(f, "xoshiro256++ seeded with {seed} (simulation only)"),
        }
    }
}

/// The identity of an Ed25519 public key: the first 8 bytes of the SHA-256 of its 32 bytes,
/// written as 16 hex digits (`privpref keygen` prints it; the guarantee of a signed record names
/// it).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct KeyId(pub [u8; 8]);

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

/// Who vouches for a [`Provenance`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Origin {
    /// A privpref mechanism randomised the labels (its `privatize` method), with this
    /// generator. Only the library can create this origin.
    Library(Generator),
    /// A record of a privpref randomisation, signed with Ed25519 by a key the caller trusts, and
    /// checked against the labels' bytes (size and SHA-256). Only signature verification
    /// (`privpref::privacy::record`, feature `signing`) creates this origin. The signature proves
    /// that the holder of the secret key recorded this randomisation of these bytes; it cannot
    /// prove that the key holder is honest.
    SignedRecord {
        /// The recorded generator.
        generator: Generator,
        /// The trusted key that verified the signature.
        key: KeyId,
    },
    /// A record of a privpref randomisation that no trusted key vouches for: unsigned, or signed
    /// by a key the caller did not trust ([`Provenance::from_record`]). Anyone can write such a
    /// record, so its guarantee is marked unverified and does not hold for real data.
    UnverifiedRecord(Generator),
    /// The caller states how the labels were randomised ([`Provenance::asserted_by_caller`]);
    /// the library neither performed nor checked it, including that the coins came from a
    /// CSPRNG and that each label was randomised exactly once.
    AssertedByCaller,
}

impl Origin {
    /// Stable name (JSON): `library`, `signed-record`, `unverified-record` or
    /// `asserted-by-caller`.
    pub fn name(&self) -> &'static str {
        match self {
            Origin::Library(_) => "library",
            Origin::SignedRecord { .. } => "signed-record",
            Origin::UnverifiedRecord(_) => "unverified-record",
            Origin::AssertedByCaller => "asserted-by-caller",
        }
    }

    /// The generator, when the library randomised the labels (directly or as recorded).
    pub fn generator(&self) -> Option<Generator> {
        match *self {
            Origin::Library(g) | Origin::SignedRecord { generator: g, .. } | Origin::UnverifiedRecord(g) => Some(g),
            Origin::AssertedByCaller => None,
        }
    }

    /// The trusted key that verified a signed record.
    pub fn verified_by(&self) -> Option<KeyId> {
        match *self {
            Origin::SignedRecord { key, .. } => Some(key),
            _ => None,
        }
    }
}

/// How a set of labels was privatised: the [`Randomizer`] (with `ε`, `k`, priors or user
/// counts) and the [`Origin`] (library with its generator, a record, or the caller's word).
///
/// The local guarantee of any estimator computed from the labels (and public features) is
/// [`Provenance::guarantee`]: pure `ε`-label-LDP per item (per user for user-level RR), by
/// post-processing (Chowdhury, Zhou & Natarajan (2024), Remark 2.4).
#[derive(Debug, Clone, PartialEq)]
pub struct Provenance {
    randomizer: Randomizer,
    origin: Origin,
}

impl Provenance {
    /// The provenance of labels a library mechanism randomised with `rng`.
    pub(crate) fn library(randomizer: Randomizer, rng: &NoiseRng) -> Self {
        Provenance {
            randomizer,
            origin: Origin::Library(Generator::of(rng)),
        }
    }

    /// The caller's statement that each label was randomised **exactly once** by `randomizer`
    /// with an unpredictable generator (a CSPRNG), outside this library or by
    /// [`Mechanism::randomize`](crate::mechanism::Mechanism::randomize). The library cannot
    /// check it: the guarantee built on it says "asserted by the caller".
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for invalid parameters ([`Randomizer::validate`]).
    pub fn asserted_by_caller(randomizer: Randomizer) -> Result<Self> {
        randomizer.validate()?;
        Ok(Provenance {
            randomizer,
            origin: Origin::AssertedByCaller,
        })
    }

    /// [`Provenance::asserted_by_caller`] without the parameter check (the guarantee
    /// constructors of [`Guarantee`] that predate provenance, e.g. [`Guarantee::local_rr`]).
    pub(crate) fn asserted_unchecked(randomizer: Randomizer) -> Self {
        Provenance {
            randomizer,
            origin: Origin::AssertedByCaller,
        }
    }

    /// A provenance read back from a record of a library randomisation that no trusted key
    /// vouches for (an unsigned side-car, or one signed by a key the caller does not trust).
    /// The caller must have checked that the record belongs to the labels. Anyone can write such
    /// a record, so its guarantee says "unverified record" and does not hold for real data
    /// ([`Guarantee::holds_for_real_data`] is `false`). A record signed by a trusted key is
    /// verified by `SignedRecord::verify` (feature `signing`).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for invalid parameters ([`Randomizer::validate`]).
    pub fn from_record(randomizer: Randomizer, generator: Generator) -> Result<Self> {
        randomizer.validate()?;
        Ok(Provenance {
            randomizer,
            origin: Origin::UnverifiedRecord(generator),
        })
    }

    /// A provenance whose record's signature the trusted key `key` verified.
    #[cfg(feature = "signing")]
    pub(crate) fn signed_record(randomizer: Randomizer, generator: Generator, key: KeyId) -> Result<Self> {
        randomizer.validate()?;
        Ok(Provenance {
            randomizer,
            origin: Origin::SignedRecord { generator, key },
        })
    }

    /// The randomiser.
    pub fn randomizer(&self) -> &Randomizer {
        &self.randomizer
    }

    /// Who vouches for it.
    pub fn origin(&self) -> Origin {
        self.origin
    }

    /// `ε` of the randomiser.
    pub fn eps(&self) -> f64 {
        self.randomizer.eps()
    }

    /// Whether the labels were randomised with a seeded simulation generator: the guarantee is
    /// then void for real data.
    pub fn is_simulation_only(&self) -> bool {
        matches!(self.origin.generator(), Some(Generator::Simulation { .. }))
    }

    /// Whether the provenance rests on a record no trusted key vouches for
    /// ([`Origin::UnverifiedRecord`]): the guarantee then does not hold for real data.
    pub fn is_unverified_record(&self) -> bool {
        matches!(self.origin, Origin::UnverifiedRecord(_))
    }

    /// Checks the labels were randomised by exactly `expected` (same randomiser, same `ε`
    /// compared exactly, same `K`, same user counts); `what` names the estimator for the
    /// message.
    ///
    /// # Errors
    /// [`Error::ProvenanceMismatch`] otherwise.
    pub(crate) fn require(&self, expected: &Randomizer, what: &str) -> Result<()> {
        if &self.randomizer == expected {
            return Ok(());
        }
        Err(Error::ProvenanceMismatch {
            expected: format!("labels randomised by {expected} ({what})"),
            found: format!("randomised by {} ({})", self.randomizer, self.describe_origin()),
        })
    }

    fn describe_origin(&self) -> String {
        match self.origin {
            Origin::Library(g) => format!("privatised by privpref with {g}"),
            Origin::SignedRecord { generator, key } => {
                format!("privatised by privpref with {generator}, as recorded and signed by trusted key {key}")
            }
            Origin::UnverifiedRecord(g) => {
                format!("privatised by privpref with {g}, as an unverified record says")
            }
            Origin::AssertedByCaller => "asserted by the caller".into(),
        }
    }

    /// The local guarantee of any estimator computed from these labels and public features:
    /// pure `ε`-DP (`δ = 0`), local model, label-change relation, per item (per user for
    /// user-level RR). The noise source is the generator ([`NoiseSource::Secure`] or
    /// [`NoiseSource::Seeded`], which marks the guarantee simulation-only), or
    /// [`NoiseSource::External`] when the provenance is asserted by the caller. The first note
    /// states the provenance.
    pub fn guarantee(&self) -> Guarantee {
        let r = &self.randomizer;
        let first = match self.origin {
            Origin::Library(g) => format!("provenance: each label randomised exactly once by privpref with {r}, coins from {g}"),
            Origin::SignedRecord { generator, key } => format!(
                "provenance: each label randomised exactly once by privpref with {r}, coins from {generator}, as recorded in a provenance record signed by the trusted Ed25519 key {key} and checked against the labels' SHA-256 (the signature vouches for the record, not for the key holder's honesty)"
            ),
            Origin::UnverifiedRecord(g) => format!(
                "provenance: each label randomised exactly once by privpref with {r}, coins from {g}, as an unverified provenance record says (unsigned, or signed by a key the caller did not trust)"
            ),
            Origin::AssertedByCaller => format!(
                "provenance: asserted by the caller, not performed or checked by privpref: each label randomised exactly once by {r}, with a CSPRNG"
            ),
        };
        let mut notes = vec![first];
        if matches!(r, Randomizer::RrTopK { .. } | Randomizer::RrWithPrior { .. }) {
            notes.push("each sample's prior does not depend on its own label".into());
        }
        if let Randomizer::UserLevelRr { .. } = r {
            notes.push("the user counts m_u are public".into());
        }
        if self.is_unverified_record() {
            notes.push(
                "unverified record: anyone can write such a record, so the guarantee does not hold for real data on its word; sign it (privatize with a signing key) and verify it with the trusted public key".into(),
            );
        }
        if self.is_simulation_only() {
            notes.push(
                "simulation only: the seed reproduces the randomisation, so the guarantee is void for real data".into(),
            );
        }
        Guarantee {
            eps: r.eps(),
            delta: 0.0,
            model: PrivacyModel::Local,
            unit: r.unit(),
            neighbouring: Neighbouring::LabelChange,
            mechanism: r.mechanism_text(),
            noise: match self.origin {
                Origin::UnverifiedRecord(Generator::Csprng) => NoiseSource::Unverified,
                o => o.generator().map_or(NoiseSource::External, |g| g.noise_source()),
            },
            assumptions: Assumptions {
                notes,
                ..Assumptions::default()
            },
        }
    }
}

/// The CLI's keys: `origin`, `asserted_by_caller`, `mechanism`, `eps`, `k` (K-RR and RRTop-k),
/// `generator`, `seed` (a simulation generator's), `simulation_only`, `verified_by` (the key id of
/// a signed record's trusted key, else `null`) and `description` (the `Display` text).
#[cfg(feature = "serde")]
impl serde::Serialize for Provenance {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let r = self.randomizer();
        let k = match r {
            Randomizer::Krr { k, .. } | Randomizer::RrTopK { k, .. } => Some(*k),
            _ => None,
        };
        let generator = self.origin().generator();
        let seed = match generator {
            Some(Generator::Simulation { seed }) => Some(seed),
            _ => None,
        };
        let mut m = s.serialize_map(Some(10))?;
        m.serialize_entry("origin", self.origin().name())?;
        m.serialize_entry("asserted_by_caller", &(self.origin() == Origin::AssertedByCaller))?;
        m.serialize_entry("mechanism", r.name())?;
        m.serialize_entry("eps", &r.eps())?;
        m.serialize_entry("k", &k)?;
        m.serialize_entry("generator", &generator.map(|g| g.name()))?;
        m.serialize_entry("seed", &seed)?;
        m.serialize_entry("simulation_only", &self.is_simulation_only())?;
        m.serialize_entry("verified_by", &self.origin().verified_by().map(|k| k.to_string()))?;
        m.serialize_entry("description", &self.to_string())?;
        m.end()
    }
}

impl fmt::Display for Provenance {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.randomizer, self.describe_origin())
    }
}

/// Labels with their [`Provenance`]: what the mechanisms' `privatize` methods return and the
/// `*_privatized` estimators take.
///
/// The labels cannot be changed in place, and a library provenance cannot be moved to other
/// labels, so a [`Origin::Library`] provenance always describes the labels it is attached to.
#[derive(Debug, Clone, PartialEq)]
pub struct PrivatizedLabels {
    labels: Vec<u8>,
    provenance: Provenance,
}

impl PrivatizedLabels {
    /// Labels a library mechanism randomised with `rng` (checked by the mechanism).
    pub(crate) fn library(labels: Vec<u8>, randomizer: Randomizer, rng: &NoiseRng) -> Self {
        PrivatizedLabels {
            labels,
            provenance: Provenance::library(randomizer, rng),
        }
    }

    /// Attaches a recorded or asserted provenance ([`Provenance::from_record`],
    /// [`Provenance::asserted_by_caller`]) to `labels`.
    ///
    /// # Errors
    /// * [`Error::InvalidParam`] for a provenance of origin [`Origin::Library`] (it belongs to
    ///   the labels its mechanism returned);
    /// * [`Error::Data`] naming the first label `≥ K`;
    /// * [`Error::Shape`] when a user-level provenance's counts do not add up to the number of
    ///   labels.
    pub fn new(labels: Vec<u8>, provenance: Provenance) -> Result<Self> {
        if let Origin::Library(_) = provenance.origin {
            return Err(Error::param(
                "provenance",
                "a library provenance belongs to the labels its mechanism returned; use from_record or asserted_by_caller for other labels",
            ));
        }
        let kk = provenance.randomizer.num_labels();
        if kk < 256 {
            check_labels(&labels, kk as u8)?;
        }
        if let Some(m) = provenance.randomizer.fixed_len() {
            if m != labels.len() {
                return Err(Error::Shape(format!(
                    "the user counts of the provenance add up to {m} labels, but there are {}",
                    labels.len()
                )));
            }
        }
        Ok(PrivatizedLabels { labels, provenance })
    }

    /// `PrivatizedLabels::new(labels, Provenance::asserted_by_caller(randomizer)?)`.
    ///
    /// # Errors
    /// As [`Provenance::asserted_by_caller`] and [`PrivatizedLabels::new`].
    pub fn asserted_by_caller(labels: Vec<u8>, randomizer: Randomizer) -> Result<Self> {
        PrivatizedLabels::new(labels, Provenance::asserted_by_caller(randomizer)?)
    }

    /// The privatised labels `ỹ`.
    pub fn labels(&self) -> &[u8] {
        &self.labels
    }

    /// Their provenance.
    pub fn provenance(&self) -> &Provenance {
        &self.provenance
    }

    /// The number of labels.
    pub fn len(&self) -> usize {
        self.labels.len()
    }

    /// Whether there are no labels.
    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }

    /// The local guarantee of estimators computed from the labels ([`Provenance::guarantee`]).
    pub fn guarantee(&self) -> Guarantee {
        self.provenance.guarantee()
    }

    /// The labels and the provenance, separated (they cannot be rejoined with a library
    /// provenance).
    pub fn into_parts(self) -> (Vec<u8>, Provenance) {
        (self.labels, self.provenance)
    }

    /// Checks `y` (the labels an estimator's data view holds) are these labels, entry by entry.
    ///
    /// # Errors
    /// [`Error::ProvenanceMismatch`] naming the length or the first differing row.
    pub(crate) fn check_same(&self, y: &[u8]) -> Result<()> {
        let expected = format!("the {} privatised labels its provenance belongs to", self.labels.len());
        if y.len() != self.labels.len() {
            return Err(Error::ProvenanceMismatch {
                expected,
                found: format!("{} labels", y.len()),
            });
        }
        if let Some(row) = y.iter().zip(&self.labels).position(|(a, b)| a != b) {
            return Err(Error::ProvenanceMismatch {
                expected,
                found: format!(
                    "different labels (first at row {row}: {} instead of {}); build the data view on PrivatizedLabels::labels()",
                    y[row], self.labels[row]
                ),
            });
        }
        Ok(())
    }
}
