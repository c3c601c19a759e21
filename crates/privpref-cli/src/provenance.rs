//! Label provenance across commands: `privatize` writes a signed side-car file next to its
//! labels, `fit` reads and verifies it, so the local guarantee follows the labels from one
//! command to the next and cannot be forged by editing or writing a side-car.
//!
//! The side-car of `LABELS.npy` is `LABELS.npy.provenance.json`, a signed provenance record
//! (`privpref::privacy::record`):
//!
//! ```json
//! {
//!   "format": "privpref-label-provenance",
//!   "version": 2,
//!   "labels_file": "y_priv.npy",
//!   "labels_bytes": 228,
//!   "labels_sha256": "…64 hex digits…",
//!   "n": 100,
//!   "mechanism": "rr",
//!   "eps": 1.0,
//!   "k": null,
//!   "generator": "csprng",
//!   "seed": null,
//!   "written_by": "privpref 0.1.0 privatize",
//!   "signature": { "algorithm": "ed25519", "key_id": "…16 hex…", "public_key": "…64 hex…", "value": "…128 hex…" }
//! }
//! ```
//!
//! `mechanism` is `rr` or `krr` (then `k` is the number of labels); `generator` is `csprng`
//! (ChaCha20 keyed from OS entropy) or `simulation` (seeded with `seed`: the guarantee is then
//! simulation-only). The signature covers every field. `fit` checks the labels file's size and
//! SHA-256 against the record (exit 1 if they differ: a stale side-car is never used), then the
//! signature against the keys it trusts ([`keys`](super::keys)): a record signed by a trusted
//! key gives the guarantee, naming the key (`"origin": "signed-record"`, `"verified_by"`); an
//! edited record (the signature no longer verifies) is refused (exit 1); an unsigned record, or
//! one signed by a key that is not trusted, gives a guarantee marked as an unverified record,
//! which does not hold for real data, and a note on stderr. Without a side-car,
//! `--assert-provenance MECH:EPS[:K]` states the provenance (the guarantee then says "asserted
//! by the caller"); with neither, the fit carries no local guarantee and its JSON says why
//! (`"provenance": null`, `"no_guarantee_reason"`).

use super::keys;
use privpref::privacy::record::{ProvenanceRecord, SignedRecord, SigningKey, TrustedKey, Verification};
use privpref::privacy::{PrivatizedLabels, Provenance, Randomizer};
use privpref::Error;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The `written_by` field of the records this CLI writes.
const WRITTEN_BY: &str = concat!("privpref ", env!("CARGO_PKG_VERSION"), " privatize");

/// `LABELS.provenance.json` for the labels file `LABELS`.
pub fn sidecar_path(labels: &Path) -> PathBuf {
    let mut s = labels.as_os_str().to_os_string();
    s.push(".provenance.json");
    PathBuf::from(s)
}

fn io(path: &Path, message: impl Into<String>) -> Error {
    Error::Io {
        path: path.display().to_string(),
        message: message.into(),
    }
}

/// Writes the signed side-car of `labels_path` (just written from `labels`) and returns its
/// path.
///
/// # Errors
/// I/O errors; a randomiser the CLI does not record.
pub fn write_sidecar(labels_path: &Path, labels: &PrivatizedLabels, key: &SigningKey) -> Result<PathBuf, Error> {
    write_sidecar_of(labels_path, labels.provenance(), labels.len(), key)
}

/// [`write_sidecar`] for `n` labels (just written to `labels_path`) randomised as `p` says:
/// under mpirun, the ranks' parts, each privatised by the same mechanism from the rank's own
/// OS-entropy CSPRNG (`p` is rank 0's).
pub fn write_sidecar_of(labels_path: &Path, p: &Provenance, n: usize, key: &SigningKey) -> Result<PathBuf, Error> {
    let bytes = std::fs::read(labels_path).map_err(|e| io(labels_path, e.to_string()))?;
    let file_name = labels_path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let signed = ProvenanceRecord::new(&file_name, &bytes, p, n, WRITTEN_BY)?.sign(key);
    let path = sidecar_path(labels_path);
    super::atomic::write_bytes(&path, signed.to_json().as_bytes())?;
    Ok(path)
}

/// Reads the side-car at `sidecar` for the labels file `labels_path` and verifies it against
/// the `trusted` keys; a note on stderr when no trusted key vouches for it.
fn read_sidecar(sidecar: &Path, labels_path: &Path, trusted: &[(TrustedKey, PathBuf)]) -> Result<Provenance, Error> {
    let text = std::fs::read_to_string(sidecar).map_err(|e| io(sidecar, e.to_string()))?;
    let as_io = |e: Error| match e {
        Error::ProvenanceRecord(m) => io(sidecar, format!("provenance side-car: {m}")),
        other => other,
    };
    let record = SignedRecord::from_json(&text).map_err(as_io)?;
    let bytes = std::fs::read(labels_path).map_err(|e| io(labels_path, e.to_string()))?;
    let keys: Vec<TrustedKey> = trusted.iter().map(|(k, _)| k.clone()).collect();
    let (provenance, verification) = record.verify(&bytes, &keys).map_err(|e| match e {
        Error::ProvenanceMismatch { expected, found } => Error::ProvenanceMismatch {
            expected: format!("{} to be {expected} ({})", labels_path.display(), sidecar.display()),
            found: format!(
                "{found}: re-run privatize, or remove the side-car and assert the provenance with --assert-provenance"
            ),
        },
        other => as_io(other),
    })?;
    let trusted_text = if trusted.is_empty() {
        "no key is trusted: pass --trusted-key, or privatize on this machine to create the default key pair".to_string()
    } else {
        let list: Vec<String> = trusted
            .iter()
            .map(|(k, p)| format!("{} ({})", k.id(), p.display()))
            .collect();
        format!("trusted: {}", list.join(", "))
    };
    match verification {
        Verification::Verified(_) => {}
        Verification::Unsigned => eprintln!(
            "privpref: note: {} is not signed, so the guarantee is marked as an unverified record and does not hold for real data (re-run privatize, which signs its side-car)",
            sidecar.display()
        ),
        Verification::UntrustedKey(id) => eprintln!(
            "privpref: note: {} is signed by key {id}, which is not trusted ({trusted_text}), so the guarantee is marked as an unverified record and does not hold for real data; pass --trusted-key with that key's public key if you trust it",
            sidecar.display()
        ),
    }
    Ok(provenance)
}

/// Parses `--assert-provenance MECH:EPS[:K]`: `rr:EPS` or `krr:EPS:K`.
///
/// # Errors
/// [`Error::InvalidParam`] for anything else.
pub fn parse_assertion(spec: &str) -> Result<Randomizer, Error> {
    let bad = || {
        Error::param(
            "assert-provenance",
            format!("expected rr:EPS or krr:EPS:K (the randomiser the labels went through), got `{spec}`"),
        )
    };
    let parts: Vec<&str> = spec.split(':').collect();
    let eps = |s: &str| s.parse::<f64>().map_err(|_| bad());
    let r = match parts.as_slice() {
        ["rr", e] => Randomizer::Rr { eps: eps(e)? },
        ["krr", e, k] => Randomizer::Krr {
            eps: eps(e)?,
            k: k.parse().map_err(|_| bad())?,
        },
        _ => return Err(bad()),
    };
    r.validate()?;
    Ok(r)
}

/// The provenance of the labels file `labels_path`: from `--provenance PATH`, else from the
/// side-car next to the labels when there is one (verified against the keys of
/// `--trusted-key`, else the default public key), else from `--assert-provenance`; `None`
/// when there is none.
///
/// # Errors
/// A side-car together with `--assert-provenance`; a missing `--provenance` file; a side-car
/// that does not match the labels file ([`Error::ProvenanceMismatch`]), whose signature does
/// not verify, or that cannot be read; a `--trusted-key` that cannot be read.
pub fn resolve(
    labels_path: &Path,
    explicit: Option<&Path>,
    assertion: Option<&str>,
    trusted_key_paths: &[PathBuf],
) -> Result<Option<Provenance>, Error> {
    let sidecar = match explicit {
        Some(p) => Some(p.to_path_buf()),
        None => Some(sidecar_path(labels_path)).filter(|p| p.exists()),
    };
    // Explicit keys are read (and must be valid) whether or not a side-car needs them; the
    // default key only when a side-car does.
    let explicit_keys = match trusted_key_paths {
        [] => None,
        paths => Some(keys::trusted_keys(paths)?),
    };
    match (sidecar, assertion) {
        (Some(s), Some(_)) => Err(Error::param(
            "assert-provenance",
            format!(
                "the labels have a provenance side-car ({}), which states their provenance; remove it to use --assert-provenance",
                s.display()
            ),
        )),
        (Some(s), None) => {
            let trusted = match explicit_keys {
                Some(k) => k,
                None => keys::trusted_keys(&[])?,
            };
            read_sidecar(&s, labels_path, &trusted).map(Some)
        }
        (None, Some(spec)) => Ok(Some(Provenance::asserted_by_caller(parse_assertion(spec)?)?)),
        (None, None) => Ok(None),
    }
}

/// Adds `provenance` (object or `null`) and `no_guarantee_reason` (string or `null`) to the
/// JSON of a local fit.
pub fn insert_fields(
    result: &mut serde_json::Map<String, Value>,
    provenance: Option<&Provenance>,
    no_guarantee_reason: Option<&str>,
) {
    result.insert("provenance".into(), provenance_json(provenance));
    result.insert("no_guarantee_reason".into(), json!(no_guarantee_reason));
}

/// The `provenance` field of a result (`null` without one).
pub fn provenance_json(p: Option<&Provenance>) -> Value {
    serde_json::to_value(p).expect("a Provenance serialises to JSON")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn assertions_parse_strictly() {
        assert_eq!(parse_assertion("rr:1").unwrap(), Randomizer::Rr { eps: 1.0 });
        assert_eq!(
            parse_assertion("krr:0.5:4").unwrap(),
            Randomizer::Krr { eps: 0.5, k: 4 }
        );
        for bad in [
            "rr",
            "rr:",
            "rr:0",
            "rr:-1",
            "rr:nan",
            "krr:1",
            "krr:1:1",
            "krr:1:300",
            "rr:1:2",
            "gauss:1",
        ] {
            assert!(parse_assertion(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sidecar_is_next_to_the_labels() {
        assert_eq!(
            sidecar_path(Path::new("/tmp/a/y.npy")),
            PathBuf::from("/tmp/a/y.npy.provenance.json")
        );
    }
}
