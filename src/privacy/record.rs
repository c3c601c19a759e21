//! Signed provenance records: the record of a library privatisation that travels with a labels
//! file, signed with Ed25519 so that a reader can tell it from a forgery (feature `signing`).
//!
//! A [`ProvenanceRecord`] states that privpref randomised `n` labels once with a [`Randomizer`]
//! and a [`Generator`], and binds the statement to the bytes of the file the labels were written
//! to (their size and SHA-256). [`ProvenanceRecord::sign`] signs it with a [`SigningKey`]; the
//! [`SignedRecord`] is written as JSON next to the labels (the CLI's `LABELS.provenance.json`).
//! [`SignedRecord::verify`] checks the record against the labels' bytes and its signature
//! against the keys the reader trusts ([`TrustedKey`]) and returns the labels' [`Provenance`]:
//!
//! | the record | its provenance | guarantee holds for real data |
//! |---|---|---|
//! | signed by a trusted key, signature valid | [`Origin::SignedRecord`] naming the key | yes (unless the generator was a seeded simulation) |
//! | signed by a trusted key, signature invalid (edited after signing) | error | — |
//! | signed by a key not trusted, signature valid | [`Origin::UnverifiedRecord`] | no |
//! | signed, signature invalid for the key it names | error | — |
//! | unsigned (version 1, or `"signature": null`) | [`Origin::UnverifiedRecord`] | no |
//! | another size or SHA-256 than the labels' bytes | error ([`Error::ProvenanceMismatch`]) | — |
//!
//! **Threat model.** The data curator holds the secret key and runs the privatisation; whoever
//! fits trusts the curator's public key. A valid signature proves that the holder of the secret
//! key recorded that privpref randomised exactly these bytes with these parameters (ε, K, the
//! generator): editing any recorded value, the labels, or writing a record by hand without the
//! key is detected. It cannot prove that the key holder is honest (they could sign a record of
//! labels they never randomised), nor that the key was kept secret.
//!
//! The signed message is a fixed, versioned byte string built from the parsed values (not the
//! JSON text), so formatting, key order and whitespace do not matter, and `ε` is signed as its
//! exact bits.

use super::provenance::{Generator, KeyId, Origin, Provenance, Randomizer};
use crate::error::{Error, Result};
use ed25519_dalek::pkcs8::{
    spki::der::pem::LineEnding, DecodePrivateKey, DecodePublicKey, EncodePrivateKey, EncodePublicKey,
};
use ed25519_dalek::{Signature, Signer, VerifyingKey};
use rand::Rng;
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::fmt;

/// The `format` field of a record.
pub const FORMAT: &str = "privpref-label-provenance";
/// The `version` of the records this module writes (version 1 records, unsigned, are read).
pub const VERSION: u64 = 2;
/// The signature algorithm named in a record.
const ALGORITHM: &str = "ed25519";
/// The first bytes of every signed message (domain separation).
const DOMAIN: &[u8] = b"privpref signed label provenance, version 2\n";

fn bad(message: impl Into<String>) -> Error {
    Error::ProvenanceRecord(message.into())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `N` bytes from exactly `2N` lower- or upper-case hex digits.
fn unhex<const N: usize>(s: &str, what: &str) -> Result<[u8; N]> {
    let b = s.as_bytes();
    if b.len() != 2 * N || !b.iter().all(u8::is_ascii_hexdigit) {
        return Err(bad(format!("`{what}` is not {} hex digits", 2 * N)));
    }
    let mut out = [0u8; N];
    for (i, o) in out.iter_mut().enumerate() {
        let pair = std::str::from_utf8(&b[2 * i..2 * i + 2]).expect("hex digits are ASCII");
        *o = u8::from_str_radix(pair, 16).expect("two hex digits");
    }
    Ok(out)
}

/// The SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    Sha256::digest(bytes).into()
}

fn key_id(key: &VerifyingKey) -> KeyId {
    let d = sha256(key.as_bytes());
    let mut id = [0u8; 8];
    id.copy_from_slice(&d[..8]);
    KeyId(id)
}

/// An Ed25519 secret key that signs provenance records (PKCS#8 PEM on disk).
///
/// `Debug` shows only the key id, never the secret.
pub struct SigningKey(ed25519_dalek::SigningKey);

impl SigningKey {
    /// A new key from 32 bytes of operating-system entropy (through
    /// [`secure_rng`](crate::rng::secure_rng)).
    ///
    /// # Errors
    /// [`Error::Privacy`] when the operating system has no entropy to give.
    pub fn generate() -> Result<Self> {
        let mut seed = [0u8; 32];
        crate::rng::secure_rng()?.fill_bytes(&mut seed);
        let key = ed25519_dalek::SigningKey::from_bytes(&seed);
        seed.fill(0);
        Ok(SigningKey(key))
    }

    /// Reads a PKCS#8 PEM secret key (`-----BEGIN PRIVATE KEY-----`, as `privpref keygen` and
    /// `openssl genpkey -algorithm ed25519` write).
    ///
    /// # Errors
    /// [`Error::ProvenanceRecord`] when the text is not an Ed25519 PKCS#8 PEM key.
    pub fn from_pem(pem: &str) -> Result<Self> {
        ed25519_dalek::SigningKey::from_pkcs8_pem(pem)
            .map(SigningKey)
            .map_err(|e| bad(format!("not an Ed25519 secret key in PKCS#8 PEM ({e})")))
    }

    /// The PKCS#8 PEM text of the secret key (keep it private: mode 0600).
    pub fn to_pem(&self) -> String {
        self.0
            .to_pkcs8_pem(LineEnding::LF)
            .map(|p| p.to_string())
            .expect("an Ed25519 key encodes as PKCS#8")
    }

    /// Its public key, to give to whoever verifies the records it signs.
    pub fn trusted_key(&self) -> TrustedKey {
        TrustedKey(self.0.verifying_key())
    }

    /// The id of its public key.
    pub fn id(&self) -> KeyId {
        key_id(&self.0.verifying_key())
    }
}

impl fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "SigningKey(id {})", self.id())
    }
}

/// An Ed25519 public key whose signatures the reader trusts (SPKI PEM on disk).
#[derive(Clone, PartialEq, Eq)]
pub struct TrustedKey(VerifyingKey);

impl TrustedKey {
    /// Reads an SPKI PEM public key (`-----BEGIN PUBLIC KEY-----`, as `privpref keygen` and
    /// `openssl pkey -pubout` write).
    ///
    /// # Errors
    /// [`Error::ProvenanceRecord`] when the text is not an Ed25519 SPKI PEM key.
    pub fn from_pem(pem: &str) -> Result<Self> {
        VerifyingKey::from_public_key_pem(pem)
            .map(TrustedKey)
            .map_err(|e| bad(format!("not an Ed25519 public key in SPKI PEM ({e})")))
    }

    /// The SPKI PEM text of the key.
    pub fn to_pem(&self) -> String {
        self.0
            .to_public_key_pem(LineEnding::LF)
            .expect("an Ed25519 key encodes as SPKI")
    }

    /// Its id: the first 8 bytes of the SHA-256 of the key's 32 bytes.
    pub fn id(&self) -> KeyId {
        key_id(&self.0)
    }
}

impl fmt::Debug for TrustedKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "TrustedKey(id {})", self.id())
    }
}

/// What privpref did to a labels file: randomised its `n` labels once with `randomizer` and
/// coins from `generator`, and wrote them as the `labels_bytes` bytes whose SHA-256 is
/// `labels_sha256`.
#[derive(Debug, Clone, PartialEq)]
pub struct ProvenanceRecord {
    /// The labels file's name (informational; the hash binds the record to the bytes).
    pub labels_file: String,
    /// The size of the labels file in bytes.
    pub labels_bytes: u64,
    /// The SHA-256 of the labels file.
    pub labels_sha256: [u8; 32],
    /// The number of labels.
    pub n: u64,
    /// The randomiser: binary or K-ary randomized response.
    pub randomizer: Randomizer,
    /// The generator of the coins.
    pub generator: Generator,
    /// The program that wrote the record (informational, e.g. `privpref 0.1.0 privatize`).
    pub written_by: String,
}

impl ProvenanceRecord {
    /// The record of `n` labels that a library mechanism randomised (`provenance`, of origin
    /// [`Origin::Library`]) and the caller wrote as the file `file_bytes` (named `labels_file`).
    ///
    /// # Errors
    /// [`Error::InvalidParam`] for a provenance that is not a library privatisation (a record
    /// vouches only for what privpref did) or whose randomiser is not `rr` or `krr`.
    pub fn new(
        labels_file: &str,
        file_bytes: &[u8],
        provenance: &Provenance,
        n: usize,
        written_by: &str,
    ) -> Result<Self> {
        let Origin::Library(generator) = provenance.origin() else {
            return Err(Error::param(
                "provenance",
                format!(
                    "a provenance record vouches for a privpref privatisation, not for labels {}",
                    provenance.origin().name()
                ),
            ));
        };
        let randomizer = provenance.randomizer().clone();
        if !matches!(randomizer, Randomizer::Rr { .. } | Randomizer::Krr { .. }) {
            return Err(Error::param(
                "mechanism",
                format!("provenance records hold rr and krr privatisations, not {randomizer}"),
            ));
        }
        Ok(ProvenanceRecord {
            labels_file: labels_file.to_string(),
            labels_bytes: file_bytes.len() as u64,
            labels_sha256: sha256(file_bytes),
            n: n as u64,
            randomizer,
            generator,
            written_by: written_by.to_string(),
        })
    }

    /// The signed message: [`DOMAIN`], then one `name=value` line for each field in a fixed
    /// order (`ε` as the 16 hex digits of its bits).
    fn message(&self) -> Vec<u8> {
        let (k, eps) = match self.randomizer {
            Randomizer::Krr { eps, k } => (k.to_string(), eps),
            ref r => ("-".to_string(), r.eps()),
        };
        let seed = match self.generator {
            Generator::Simulation { seed } => seed.to_string(),
            Generator::Csprng => "-".into(),
        };
        let mut m = DOMAIN.to_vec();
        m.extend_from_slice(
            format!(
                "labels_file={}\nlabels_bytes={}\nlabels_sha256={}\nn={}\nmechanism={}\neps={:016x}\nk={k}\ngenerator={}\nseed={seed}\nwritten_by={}\n",
                self.labels_file.escape_default(),
                self.labels_bytes,
                hex(&self.labels_sha256),
                self.n,
                self.randomizer.name(),
                eps.to_bits(),
                self.generator.name(),
                self.written_by.escape_default(),
            )
            .as_bytes(),
        );
        m
    }

    /// The record signed with `key`.
    pub fn sign(self, key: &SigningKey) -> SignedRecord {
        let signature = key.0.sign(&self.message());
        SignedRecord {
            record: self,
            signature: Some((key.0.verifying_key(), signature)),
        }
    }
}

/// Whose word a record is, as far as the reader's trusted keys tell ([`SignedRecord::check`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verification {
    /// Signed by this trusted key; the signature is valid.
    Verified(KeyId),
    /// Without a signature.
    Unsigned,
    /// Validly signed by this key, which the reader does not trust.
    UntrustedKey(KeyId),
}

/// A [`ProvenanceRecord`] with its Ed25519 signature (or none: records of version 1).
#[derive(Debug, Clone, PartialEq)]
pub struct SignedRecord {
    record: ProvenanceRecord,
    signature: Option<(VerifyingKey, Signature)>,
}

/// The keys of a record's JSON object, in the order they are written.
const KEYS: [&str; 13] = [
    "format",
    "version",
    "labels_file",
    "labels_bytes",
    "labels_sha256",
    "n",
    "mechanism",
    "eps",
    "k",
    "generator",
    "seed",
    "written_by",
    "signature",
];

impl SignedRecord {
    /// The record (its statements are only a claim until [`SignedRecord::verify`] vouches for
    /// them).
    pub fn record(&self) -> &ProvenanceRecord {
        &self.record
    }

    /// The id of the key the record says signed it (not yet verified).
    pub fn signer(&self) -> Option<KeyId> {
        self.signature.as_ref().map(|(k, _)| key_id(k))
    }

    /// The record as pretty JSON (with a final newline), the CLI's side-car format:
    /// `format`, `version` (2), `labels_file`, `labels_bytes`, `labels_sha256`, `n`, `mechanism`
    /// (`rr` | `krr`), `eps`, `k`, `generator` (`csprng` | `simulation`), `seed`, `written_by` and
    /// `signature` (`{algorithm: "ed25519", key_id, public_key, value}` in hex, or `null`).
    pub fn to_json(&self) -> String {
        let r = &self.record;
        let k = match r.randomizer {
            Randomizer::Krr { k, .. } => Some(k),
            _ => None,
        };
        let seed = match r.generator {
            Generator::Simulation { seed } => Some(seed),
            Generator::Csprng => None,
        };
        let signature = self.signature.as_ref().map(|(key, sig)| {
            json!({
                "algorithm": ALGORITHM,
                "key_id": key_id(key).to_string(),
                "public_key": hex(key.as_bytes()),
                "value": hex(&sig.to_bytes()),
            })
        });
        let v = json!({
            "format": FORMAT,
            "version": VERSION,
            "labels_file": r.labels_file,
            "labels_bytes": r.labels_bytes,
            "labels_sha256": hex(&r.labels_sha256),
            "n": r.n,
            "mechanism": r.randomizer.name(),
            "eps": r.randomizer.eps(),
            "k": k,
            "generator": r.generator.name(),
            "seed": seed,
            "written_by": r.written_by,
            "signature": signature,
        });
        let mut ordered = Map::new();
        for key in KEYS {
            ordered.insert(key.into(), v[key].clone());
        }
        serde_json::to_string_pretty(&Value::Object(ordered)).expect("JSON values serialise") + "\n"
    }

    /// Parses a record's JSON strictly: the keys of [`SignedRecord::to_json`] and no other
    /// (version 1 records have no `signature`), each of its type; `eps` finite and `> 0`, `k`
    /// for `krr` only, `seed` for `simulation` only.
    ///
    /// # Errors
    /// [`Error::ProvenanceRecord`] naming the first field that is missing, unknown or invalid.
    pub fn from_json(text: &str) -> Result<Self> {
        let v: Value = serde_json::from_str(text).map_err(|e| bad(format!("invalid JSON ({e})")))?;
        let obj = v.as_object().ok_or_else(|| bad("not a JSON object"))?;
        if obj.get("format").and_then(Value::as_str) != Some(FORMAT) {
            return Err(bad(format!("not a provenance record (`format` is not `{FORMAT}`)")));
        }
        let version = obj.get("version").and_then(Value::as_u64);
        let keys: &[&str] = match version {
            Some(1) => &KEYS[..12],
            Some(2) => &KEYS,
            _ => return Err(bad("`version` is not 1 or 2 (a newer privpref wrote it?)")),
        };
        if let Some(unknown) = obj.keys().find(|k| !keys.contains(&k.as_str())) {
            return Err(bad(format!("unknown field `{}`", unknown.escape_default())));
        }
        let field = |name: &str| obj.get(name).ok_or_else(|| bad(format!("no `{name}`")));
        let string = |name: &str| {
            field(name)?
                .as_str()
                .ok_or_else(|| bad(format!("`{name}` is not a string")))
        };
        let integer = |name: &str| {
            field(name)?
                .as_u64()
                .ok_or_else(|| bad(format!("`{name}` is not a non-negative integer")))
        };
        let eps = field("eps")?.as_f64().ok_or_else(|| bad("`eps` is not a number"))?;
        let k = field("k")?;
        let randomizer = match (string("mechanism")?, k.as_u64()) {
            ("rr", None) if k.is_null() => Randomizer::Rr { eps },
            ("krr", Some(k)) => Randomizer::Krr {
                eps,
                k: usize::try_from(k).map_err(|_| bad("`k` is too large"))?,
            },
            _ => {
                return Err(bad(
                    "`mechanism` is not rr (with `k` null) or krr (with an integer `k`)",
                ))
            }
        };
        randomizer
            .validate()
            .map_err(|e| bad(format!("invalid randomiser ({e})")))?;
        let seed = field("seed")?;
        let generator = match (string("generator")?, seed.as_u64()) {
            ("csprng", None) if seed.is_null() => Generator::Csprng,
            ("simulation", Some(seed)) => Generator::Simulation { seed },
            _ => {
                return Err(bad(
                    "`generator` is not csprng (with `seed` null) or simulation (with an integer `seed`)",
                ))
            }
        };
        let record = ProvenanceRecord {
            labels_file: string("labels_file")?.to_string(),
            labels_bytes: integer("labels_bytes")?,
            labels_sha256: unhex::<32>(string("labels_sha256")?, "labels_sha256")?,
            n: integer("n")?,
            randomizer,
            generator,
            written_by: string("written_by")?.to_string(),
        };
        let signature = match obj.get("signature") {
            None | Some(Value::Null) => None,
            Some(Value::Object(s)) => Some(parse_signature(s)?),
            Some(_) => return Err(bad("`signature` is not an object or null")),
        };
        Ok(SignedRecord { record, signature })
    }

    /// Whose word the record is: verified by one of `trusted`, unsigned, or signed by a key not
    /// among them.
    ///
    /// # Errors
    /// [`Error::ProvenanceRecord`] when the signature does not verify for the key it names (the
    /// record was changed after it was signed, or the signature is not one).
    pub fn check(&self, trusted: &[TrustedKey]) -> Result<Verification> {
        let Some((key, signature)) = &self.signature else {
            return Ok(Verification::Unsigned);
        };
        let id = key_id(key);
        key.verify_strict(&self.record.message(), signature).map_err(|_| {
            bad(format!(
                "the signature of key {id} does not verify: the record was changed after it was signed (re-run privatize)"
            ))
        })?;
        if trusted.iter().any(|t| t.0 == *key) {
            Ok(Verification::Verified(id))
        } else {
            Ok(Verification::UntrustedKey(id))
        }
    }

    /// The provenance of the labels file `file_bytes` that this record describes: checks the
    /// file's size and SHA-256 against the record, then the signature
    /// ([`SignedRecord::check`]). Signed by a trusted key: [`Origin::SignedRecord`] naming it;
    /// unsigned or signed by another key: [`Origin::UnverifiedRecord`], whose guarantee does not
    /// hold for real data.
    ///
    /// # Errors
    /// [`Error::ProvenanceMismatch`] when the file is not the one recorded;
    /// [`Error::ProvenanceRecord`] when the signature does not verify.
    pub fn verify(&self, file_bytes: &[u8], trusted: &[TrustedKey]) -> Result<(Provenance, Verification)> {
        let r = &self.record;
        let (size, digest) = (file_bytes.len() as u64, sha256(file_bytes));
        if size != r.labels_bytes || digest != r.labels_sha256 {
            return Err(Error::ProvenanceMismatch {
                expected: format!(
                    "the labels file its provenance record was written for ({} bytes, SHA-256 {})",
                    r.labels_bytes,
                    hex(&r.labels_sha256)
                ),
                found: format!(
                    "a file of {size} bytes, SHA-256 {} (the labels changed after privatize, or the record belongs to other labels)",
                    hex(&digest)
                ),
            });
        }
        let verification = self.check(trusted)?;
        let provenance = match verification {
            Verification::Verified(key) => Provenance::signed_record(r.randomizer.clone(), r.generator, key)?,
            Verification::Unsigned | Verification::UntrustedKey(_) => {
                Provenance::from_record(r.randomizer.clone(), r.generator)?
            }
        };
        Ok((provenance, verification))
    }
}

fn parse_signature(s: &Map<String, Value>) -> Result<(VerifyingKey, Signature)> {
    const SIG_KEYS: [&str; 4] = ["algorithm", "key_id", "public_key", "value"];
    if let Some(unknown) = s.keys().find(|k| !SIG_KEYS.contains(&k.as_str())) {
        return Err(bad(format!("unknown field `signature.{}`", unknown.escape_default())));
    }
    let string = |name: &str| {
        s.get(name)
            .and_then(Value::as_str)
            .ok_or_else(|| bad(format!("`signature.{name}` is missing or not a string")))
    };
    if string("algorithm")? != ALGORITHM {
        return Err(bad(format!("`signature.algorithm` is not {ALGORITHM}")));
    }
    let key = VerifyingKey::from_bytes(&unhex::<32>(string("public_key")?, "signature.public_key")?)
        .map_err(|_| bad("`signature.public_key` is not an Ed25519 public key"))?;
    if string("key_id")? != key_id(&key).to_string() {
        return Err(bad("`signature.key_id` is not the id of `signature.public_key`"));
    }
    let value = Signature::from_bytes(&unhex::<64>(string("value")?, "signature.value")?);
    Ok((key, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_round_trips_and_rejects() {
        let b = [0u8, 1, 0xab, 0xff];
        assert_eq!(hex(&b), "0001abff");
        assert_eq!(unhex::<4>("0001ABff", "x").unwrap(), b);
        for s in ["0001abf", "0001abfff", "0001abfg", "+001abff", "é001abf"] {
            assert!(unhex::<4>(s, "x").is_err(), "{s}");
        }
    }

    #[test]
    fn key_id_is_the_sha256_prefix() {
        let key = SigningKey::generate().unwrap();
        let d = sha256(key.0.verifying_key().as_bytes());
        assert_eq!(key.id().0, d[..8]);
        assert_eq!(key.id().to_string(), hex(&d[..8]));
        assert!(!format!("{key:?}").contains(&hex(key.0.as_bytes())));
    }

    #[test]
    fn pem_round_trips() {
        let key = SigningKey::generate().unwrap();
        let again = SigningKey::from_pem(&key.to_pem()).unwrap();
        assert_eq!(again.id(), key.id());
        let public = TrustedKey::from_pem(&key.trusted_key().to_pem()).unwrap();
        assert_eq!(public, key.trusted_key());
        assert!(SigningKey::from_pem(&key.trusted_key().to_pem()).is_err());
        assert!(TrustedKey::from_pem(&key.to_pem()).is_err());
    }
}
