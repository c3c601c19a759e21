//! The privacy guarantee attached to every released estimate.

use super::provenance::{Provenance, Randomizer};
use std::fmt;

/// Where the randomness that protects the data is added.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(rename_all = "kebab-case"))]
pub enum PrivacyModel {
    /// Each label is randomised by its owner before collection (label-LDP, Chowdhury, Zhou &
    /// Natarajan (2024), Def. 2.3); every estimator computed from the randomised labels is
    /// post-processing.
    Local,
    /// A trusted curator holds the clear data and randomises the release (Chowdhury, Zhou &
    /// Natarajan (2024), Def. 2.2; "Provable protection of human judgements" (anon., 2025), Def.
    /// 2.2).
    Central,
}

impl PrivacyModel {
    /// Stable name (JSON).
    pub fn as_str(&self) -> &'static str {
        match self {
            PrivacyModel::Local => "local",
            PrivacyModel::Central => "central",
        }
    }
}

/// The unit protected by the guarantee: what a neighbouring dataset changes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(rename_all = "kebab-case"))]
pub enum PrivacyUnit {
    /// One comparison (one row).
    Item,
    /// All comparisons of one user.
    User,
}

impl PrivacyUnit {
    /// Stable name (JSON).
    pub fn as_str(&self) -> &'static str {
        match self {
            PrivacyUnit::Item => "item",
            PrivacyUnit::User => "user",
        }
    }
}

/// The neighbouring relation of the unit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize), serde(rename_all = "kebab-case"))]
pub enum Neighbouring {
    /// Only the label of one unit changes; features are public (label DP, Chowdhury, Zhou &
    /// Natarajan (2024), Def. 2.2).
    LabelChange,
    /// One whole record (features and label) is replaced (standard DP, "Provable protection of
    /// human judgements" (anon., 2025), Def. 2.2: "differ in exactly one item", read as
    /// replace-one).
    ReplaceRecord,
    /// One whole record is added or removed (standard DP, add/remove reading).
    AddRemoveRecord,
}

impl Neighbouring {
    /// Stable name (JSON).
    pub fn as_str(&self) -> &'static str {
        match self {
            Neighbouring::LabelChange => "label-change",
            Neighbouring::ReplaceRecord => "replace-record",
            Neighbouring::AddRemoveRecord => "add-remove-record",
        }
    }
}

/// Which generator drew the mechanism's noise (the RNG policy of [`crate::rng`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NoiseSource {
    /// ChaCha20 keyed from operating-system entropy: the guarantee holds for real data.
    Secure,
    /// xoshiro256++ from a caller-given seed: reproducible, **for simulations only** — anyone who
    /// knows the seed can remove the noise, so the guarantee is void for real data.
    Seeded(u64),
    /// The labels were randomised outside the library, as asserted by the caller
    /// ([`Provenance::asserted_by_caller`](super::Provenance::asserted_by_caller)); the
    /// estimator draws no noise itself and cannot check the generator.
    External,
    /// The labels were randomised by privpref as a provenance record says that no trusted key
    /// vouches for ([`Origin::UnverifiedRecord`](super::Origin::UnverifiedRecord)): the guarantee
    /// does not hold for real data on the record's word.
    Unverified,
}

impl NoiseSource {
    /// Stable description (JSON).
    pub fn describe(&self) -> &'static str {
        match self {
            NoiseSource::Secure => "ChaCha20 seeded from OS entropy",
            NoiseSource::Seeded(_) => "xoshiro256++ seeded (simulation only)",
            NoiseSource::External => "labels randomised outside privpref (asserted by the caller)",
            NoiseSource::Unverified => {
                "labels randomised by privpref as an unverified record says (not signed by a trusted key)"
            }
        }
    }
    /// The seed, if any.
    pub fn seed(&self) -> Option<u64> {
        match self {
            NoiseSource::Seeded(s) => Some(*s),
            _ => None,
        }
    }
}

/// The assumptions a calibration relied on. The guarantee holds only if they do.
#[derive(Debug, Clone, PartialEq, Default)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct Assumptions {
    /// The feature bound `L` (`‖φ‖ ≤ L`, so `‖x_i‖ ≤ 2L`; Chowdhury, Zhou & Natarajan (2024),
    /// Assumption 2.1), stated by the
    /// caller and checked on every row.
    pub feature_bound: Option<f64>,
    /// The certified exactness tolerance of the minimiser: the KKT residual (objective
    /// perturbation), the objective-gap accuracy `β` (private MLE) or the distance bound
    /// (output perturbation) that the run was checked against.
    pub exactness_tol: Option<f64>,
    /// The radius `B` of the feasible set.
    pub radius: Option<f64>,
    /// Everything else, one sentence each.
    pub notes: Vec<String>,
}

/// An `(ε, δ)` guarantee with its model, unit, neighbouring relation and assumptions.
///
/// Returned with every private release. `δ = 0` is pure ε-DP (randomized response).
///
/// A **local** guarantee comes from the labels' [`Provenance`](super::Provenance)
/// ([`Provenance::guarantee`](super::Provenance::guarantee)), never from the loss: an estimator
/// fitted on labels without a provenance carries none.
///
/// **Refusals.** A central estimator that refuses its guarantee when a data-dependent condition
/// fails (the exactness certificate of objective perturbation, the accuracy certificate of the
/// private MLE) makes the refusal itself an output that depends on the data. The guarantee
/// covers the released `θ` of the idealised mechanism (the exact minimiser, which always
/// exists); a refusal reveals that the certificate failed on this dataset and this noise draw.
/// If `p` bounds the refusal probability over the noise on every dataset, the mechanism that
/// releases `θ` or the refusal is `(ε, δ + (1 + e^ε)·p)`-DP. No worst-case bound on `p` is
/// proved here: the certificates fail only through floating-point limits of an exact solver,
/// and the measured rate at default settings is recorded in the docs of
/// [`objective_perturbation`](crate::estimator::central::objective_perturbation) and
/// [`private_mle`](crate::estimator::private_mle::private_mle).
#[derive(Debug, Clone, PartialEq)]
pub struct Guarantee {
    /// `ε > 0`.
    pub eps: f64,
    /// `δ ∈ [0, 1)`.
    pub delta: f64,
    /// Local or central.
    pub model: PrivacyModel,
    /// Item or user.
    pub unit: PrivacyUnit,
    /// What changes between neighbouring datasets.
    pub neighbouring: Neighbouring,
    /// The mechanism, with its paper reference.
    pub mechanism: &'static str,
    /// Which generator drew the noise.
    pub noise: NoiseSource,
    /// What the calibration relied on.
    pub assumptions: Assumptions,
}

/// The keys of the CLI: `eps`, `delta`, `model`, `unit`, `neighbouring`, `mechanism`, `noise`
/// (the generator, [`NoiseSource::describe`]), `seed`, `holds_for_real_data`, the assumptions'
/// `feature_bound`, `exactness_tol`, `radius` and `notes`.
#[cfg(feature = "serde")]
impl serde::Serialize for Guarantee {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let a = &self.assumptions;
        let mut m = s.serialize_map(Some(13))?;
        m.serialize_entry("eps", &self.eps)?;
        m.serialize_entry("delta", &self.delta)?;
        m.serialize_entry("model", &self.model)?;
        m.serialize_entry("unit", &self.unit)?;
        m.serialize_entry("neighbouring", &self.neighbouring)?;
        m.serialize_entry("mechanism", self.mechanism)?;
        m.serialize_entry("noise", self.noise.describe())?;
        m.serialize_entry("seed", &self.noise.seed())?;
        m.serialize_entry("holds_for_real_data", &self.holds_for_real_data())?;
        m.serialize_entry("feature_bound", &a.feature_bound)?;
        m.serialize_entry("exactness_tol", &a.exactness_tol)?;
        m.serialize_entry("radius", &a.radius)?;
        m.serialize_entry("notes", &a.notes)?;
        m.end()
    }
}

impl Guarantee {
    /// The local guarantee of labels the caller states were randomised once by randomized
    /// response at `eps` with a CSPRNG (Chowdhury, Zhou & Natarajan (2024), eq. 2): pure
    /// `ε`-label-LDP per item, which implies central `ε`-label DP (Remark 2.4). **Asserted by the
    /// caller**: the same as
    /// `Provenance::asserted_by_caller(Randomizer::Rr { eps })?.guarantee()`, without the
    /// parameter check. Labels privatised by the library carry their own provenance
    /// ([`RandomizedResponse::privatize`](crate::mechanism::RandomizedResponse::privatize)).
    pub fn local_rr(eps: f64) -> Self {
        Provenance::asserted_unchecked(Randomizer::Rr { eps }).guarantee()
    }

    /// The guarantee of labels the caller states were randomised once by user-level randomized
    /// response with user budget `eps` (each of user `u`'s `m_u` labels at `ε/m_u`; Zhang et
    /// al. (2025), Sec. 4.1): pure `ε`-DP per user, label-change relation, local model. **Asserted
    /// by the caller**, as [`Guarantee::local_rr`].
    pub fn user_level_rr(eps: f64) -> Self {
        Guarantee {
            eps,
            delta: 0.0,
            model: PrivacyModel::Local,
            unit: PrivacyUnit::User,
            neighbouring: Neighbouring::LabelChange,
            mechanism: Randomizer::UserLevelRr { eps, counts: Vec::new() }.mechanism_text(),
            noise: NoiseSource::External,
            assumptions: Assumptions {
                notes: vec![format!(
                    "provenance: asserted by the caller, not performed or checked by privpref: each label of user u randomised exactly once by randomized response at eps/m_u with eps = {eps}, with a CSPRNG; the counts m_u are public"
                )],
                ..Assumptions::default()
            },
        }
    }

    /// The guarantee of K-wise choices the caller states were randomised once by K-ary
    /// randomized response at `eps` over `k` alternatives (Chowdhury, Zhou & Natarajan (2024),
    /// Sec. 4.4): pure `ε`-label-LDP per sample (`P[ỹ = y]/P[ỹ = y'] ≤ e^ε`), which implies central
    /// `ε`-label DP. **Asserted by the caller**, as [`Guarantee::local_rr`].
    pub fn local_krr(eps: f64, k: usize) -> Self {
        Provenance::asserted_unchecked(Randomizer::Krr { eps, k }).guarantee()
    }

    /// Basic composition (Dwork & Roth 2014, Thm 3.16): releasing both is
    /// `(ε₁ + ε₂, δ₁ + δ₂)`-DP. The model, unit and relation must agree; the mechanisms and
    /// assumptions are concatenated.
    ///
    /// # Errors
    /// [`Error::Privacy`](crate::Error::Privacy) when the two guarantees protect different
    /// units, relations or models.
    pub fn compose(&self, other: &Guarantee) -> crate::Result<Guarantee> {
        if self.model != other.model || self.unit != other.unit || self.neighbouring != other.neighbouring {
            return Err(crate::Error::Privacy(format!(
                "cannot compose a {} {} {} guarantee with a {} {} {} one",
                self.model.as_str(),
                self.unit.as_str(),
                self.neighbouring.as_str(),
                other.model.as_str(),
                other.unit.as_str(),
                other.neighbouring.as_str()
            )));
        }
        let mut notes = self.assumptions.notes.clone();
        notes.push(format!("composed with: {}", other.mechanism));
        notes.extend(other.assumptions.notes.iter().cloned());
        // A seeded (simulation-only) source dominates: the composition is then simulation-only.
        let noise = if self.noise == other.noise || matches!(self.noise, NoiseSource::Seeded(_)) {
            self.noise
        } else {
            other.noise
        };
        Ok(Guarantee {
            eps: self.eps + other.eps,
            delta: self.delta + other.delta,
            model: self.model,
            unit: self.unit,
            neighbouring: self.neighbouring,
            mechanism: "basic composition of two releases",
            noise,
            assumptions: Assumptions {
                feature_bound: self.assumptions.feature_bound.or(other.assumptions.feature_bound),
                exactness_tol: self.assumptions.exactness_tol.or(other.assumptions.exactness_tol),
                radius: self.assumptions.radius.or(other.assumptions.radius),
                notes,
            },
        })
    }

    /// Parallel composition over **disjoint** units (McSherry 2009, Thm 4): mechanisms that each
    /// read the labels of a different set of items, possibly chosen adaptively from the earlier
    /// outputs, are together `(max ε_i, max δ_i)`-DP under the replace-one-label relation,
    /// because a neighbouring dataset changes the input of one of them only. Used by
    /// multi-stage training (LP-MST of Ghazi et al. (2021)): each stage privatises its own
    /// disjoint part of the sample once. The caller must ensure the parts are disjoint.
    ///
    /// # Errors
    /// [`Error::Privacy`](crate::Error::Privacy) for an empty list, or guarantees that protect
    /// different units, relations or models.
    pub fn parallel(parts: &[Guarantee]) -> crate::Result<Guarantee> {
        let first = parts
            .first()
            .ok_or_else(|| crate::Error::Privacy("parallel composition of no guarantee".into()))?;
        let mut out = first.clone();
        out.mechanism = "parallel composition over disjoint parts of the sample";
        out.assumptions.notes = vec![format!(
            "{} mechanisms on disjoint sets of labels, each label randomised once",
            parts.len()
        )];
        for g in parts {
            if g.model != first.model || g.unit != first.unit || g.neighbouring != first.neighbouring {
                return Err(crate::Error::Privacy(format!(
                    "cannot compose a {} {} {} guarantee in parallel with a {} {} {} one",
                    first.model.as_str(),
                    first.unit.as_str(),
                    first.neighbouring.as_str(),
                    g.model.as_str(),
                    g.unit.as_str(),
                    g.neighbouring.as_str()
                )));
            }
            out.eps = out.eps.max(g.eps);
            out.delta = out.delta.max(g.delta);
            if !g.holds_for_real_data() && out.holds_for_real_data() {
                out.noise = g.noise;
            }
            out.assumptions.notes.push(format!("part: {}", g.mechanism));
            out.assumptions.notes.extend(g.assumptions.notes.iter().cloned());
            out.assumptions.feature_bound = out.assumptions.feature_bound.or(g.assumptions.feature_bound);
            out.assumptions.radius = out.assumptions.radius.or(g.assumptions.radius);
        }
        Ok(out)
    }

    /// Whether the guarantee can be relied on for real data: the noise (or the labels'
    /// randomisation) came from a CSPRNG, or the caller asserts the labels were randomised with
    /// one ([`NoiseSource::External`]). `false` for a seeded simulation generator and for an
    /// unverified provenance record ([`NoiseSource::Unverified`]).
    pub fn holds_for_real_data(&self) -> bool {
        !matches!(self.noise, NoiseSource::Seeded(_) | NoiseSource::Unverified)
    }
}

impl fmt::Display for Guarantee {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "({}, {})-DP, {} model, per {} ({}); {}",
            self.eps,
            self.delta,
            self.model.as_str(),
            self.unit.as_str(),
            self.neighbouring.as_str(),
            self.mechanism
        )?;
        match self.noise {
            NoiseSource::Seeded(s) => write!(f, "; noise seeded with {s}: simulation only")?,
            NoiseSource::External => write!(f, "; labels randomised as asserted by the caller")?,
            NoiseSource::Unverified => {
                write!(f, "; labels randomised as an unverified record says: not for real data")?
            }
            NoiseSource::Secure => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composition_adds_budgets_and_rejects_mismatches() {
        let a = Guarantee::local_rr(0.5);
        let b = Guarantee::local_rr(0.25);
        let c = a.compose(&b).unwrap();
        assert_eq!(c.eps, 0.75);
        assert_eq!(c.delta, 0.0);
        let mut d = Guarantee::local_rr(1.0);
        d.model = PrivacyModel::Central;
        assert!(a.compose(&d).is_err());
        let mut e = Guarantee::local_rr(1.0);
        e.noise = NoiseSource::Seeded(3);
        assert!(!a.compose(&e).unwrap().holds_for_real_data());
        assert!(c.holds_for_real_data());
    }

    #[test]
    fn parallel_composition_takes_the_maximum() {
        let p = Guarantee::parallel(&[Guarantee::local_rr(0.5), Guarantee::local_rr(1.0)]).unwrap();
        assert_eq!((p.eps, p.delta), (1.0, 0.0));
        let mut s = Guarantee::local_rr(0.2);
        s.noise = NoiseSource::Seeded(1);
        s.delta = 1e-6;
        let q = Guarantee::parallel(&[Guarantee::local_rr(0.5), s]).unwrap();
        assert_eq!((q.eps, q.delta), (0.5, 1e-6));
        assert!(!q.holds_for_real_data());
        assert!(Guarantee::parallel(&[]).is_err());
        let mut c = Guarantee::local_rr(1.0);
        c.model = PrivacyModel::Central;
        assert!(Guarantee::parallel(&[Guarantee::local_rr(1.0), c]).is_err());
    }
}
