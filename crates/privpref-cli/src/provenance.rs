//! Label provenance across commands: `privatize` writes a side-car file next to its labels,
//! `fit` reads it back, so the local guarantee follows the labels from one command to the next.
//!
//! The side-car of `LABELS.npy` is `LABELS.npy.provenance.json`:
//!
//! ```json
//! {
//!   "format": "privpref-label-provenance",
//!   "version": 1,
//!   "labels_file": "y_priv.npy",
//!   "labels_bytes": 228,
//!   "labels_sha256": "…64 hex digits…",
//!   "n": 100,
//!   "mechanism": "rr",
//!   "eps": 1.0,
//!   "k": null,
//!   "generator": "csprng",
//!   "seed": null,
//!   "written_by": "privpref 0.1.0 privatize"
//! }
//! ```
//!
//! `mechanism` is `rr` or `krr` (then `k` is the number of labels); `generator` is `csprng`
//! (ChaCha20 keyed from OS entropy) or `simulation` (seeded with `seed`: the guarantee is then
//! simulation-only). `fit` checks the labels file's size and SHA-256 against the record and
//! refuses a side-car that does not match (exit 1): a stale or edited side-car is never used.
//! Without a side-car, `--assert-provenance MECH:EPS[:K]` states the provenance (the guarantee
//! then says "asserted by the caller"); with neither, the fit carries no local guarantee and its
//! JSON says why (`"provenance": null`, `"no_guarantee_reason"`).

use privpref::privacy::{Generator, PrivatizedLabels, Provenance, Randomizer};
use privpref::Error;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The `format` field of a side-car.
const FORMAT: &str = "privpref-label-provenance";
/// The `version` field of a side-car.
const VERSION: u64 = 1;

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

/// The size and the SHA-256 (lower-case hex) of a file.
fn file_digest(path: &Path) -> Result<(u64, String), Error> {
    let bytes = std::fs::read(path).map_err(|e| io(path, e.to_string()))?;
    let digest = Sha256::digest(&bytes);
    let hex = digest.iter().map(|b| format!("{b:02x}")).collect();
    Ok((bytes.len() as u64, hex))
}

/// The JSON of a randomiser's parameters: `mechanism`, `eps`, `k`.
fn randomizer_fields(r: &Randomizer) -> Result<(&'static str, f64, Option<usize>), Error> {
    match r {
        Randomizer::Rr { eps } => Ok(("rr", *eps, None)),
        Randomizer::Krr { eps, k } => Ok(("krr", *eps, Some(*k))),
        other => Err(Error::param(
            "mechanism",
            format!("the CLI records rr and krr provenances only, not {other}"),
        )),
    }
}

/// Writes the side-car of `labels_path` (just written from `labels`) and returns its path.
///
/// # Errors
/// I/O errors; a randomiser the CLI does not record.
pub fn write_sidecar(labels_path: &Path, labels: &PrivatizedLabels) -> Result<PathBuf, Error> {
    write_sidecar_of(labels_path, labels.provenance(), labels.len())
}

/// [`write_sidecar`] for `n` labels (just written to `labels_path`) randomised as `p` says:
/// under mpirun, the ranks' parts, each privatised by the same mechanism from the rank's own
/// OS-entropy CSPRNG (`p` is rank 0's).
pub fn write_sidecar_of(labels_path: &Path, p: &Provenance, n: usize) -> Result<PathBuf, Error> {
    let (mechanism, eps, k) = randomizer_fields(p.randomizer())?;
    let generator = p
        .origin()
        .generator()
        .ok_or_else(|| Error::param("provenance", "only a library privatisation is recorded in a side-car"))?;
    let seed = match generator {
        Generator::Simulation { seed } => Some(seed),
        _ => None,
    };
    let (size, sha) = file_digest(labels_path)?;
    let file_name = labels_path
        .file_name()
        .map(|f| f.to_string_lossy().into_owned())
        .unwrap_or_default();
    let v = json!({
        "format": FORMAT,
        "version": VERSION,
        "labels_file": file_name,
        "labels_bytes": size,
        "labels_sha256": sha,
        "n": n,
        "mechanism": mechanism,
        "eps": eps,
        "k": k,
        "generator": generator.name(),
        "seed": seed,
        "written_by": concat!("privpref ", env!("CARGO_PKG_VERSION"), " privatize"),
    });
    let path = sidecar_path(labels_path);
    let text = serde_json::to_string_pretty(&v).expect("JSON values serialise") + "\n";
    super::atomic::write_bytes(&path, text.as_bytes())?;
    Ok(path)
}

/// Reads and checks the side-car at `sidecar` for the labels file `labels_path`.
fn read_sidecar(sidecar: &Path, labels_path: &Path) -> Result<Provenance, Error> {
    let text = std::fs::read_to_string(sidecar).map_err(|e| io(sidecar, e.to_string()))?;
    let v: Value = serde_json::from_str(&text)
        .map_err(|e| io(sidecar, format!("not a provenance side-car (invalid JSON: {e})")))?;
    let field = |name: &str| {
        v.get(name)
            .ok_or_else(|| io(sidecar, format!("provenance side-car without `{name}`")))
    };
    if field("format")?.as_str() != Some(FORMAT) || field("version")?.as_u64() != Some(VERSION) {
        return Err(io(
            sidecar,
            format!("not a provenance side-car of this version (expected format `{FORMAT}`, version {VERSION})"),
        ));
    }
    let size = field("labels_bytes")?
        .as_u64()
        .ok_or_else(|| io(sidecar, "`labels_bytes` is not an integer"))?;
    let sha = field("labels_sha256")?
        .as_str()
        .ok_or_else(|| io(sidecar, "`labels_sha256` is not a string"))?;
    let (got_size, got_sha) = file_digest(labels_path)?;
    if got_size != size || got_sha != sha {
        return Err(Error::ProvenanceMismatch {
            expected: format!(
                "{} to be the labels file its side-car {} was written for ({size} bytes, SHA-256 {sha})",
                labels_path.display(),
                sidecar.display()
            ),
            found: format!(
                "a file of {got_size} bytes, SHA-256 {got_sha} (the labels changed after privatize, or the side-car belongs to other labels: re-run privatize, or remove the side-car and assert the provenance with --assert-provenance)"
            ),
        });
    }
    let eps = field("eps")?
        .as_f64()
        .ok_or_else(|| io(sidecar, "`eps` is not a number"))?;
    let randomizer = match field("mechanism")?.as_str() {
        Some("rr") => Randomizer::Rr { eps },
        Some("krr") => {
            let k = field("k")?
                .as_u64()
                .ok_or_else(|| io(sidecar, "`k` is not an integer (mechanism krr)"))?;
            Randomizer::Krr { eps, k: k as usize }
        }
        _ => return Err(io(sidecar, "`mechanism` is not rr or krr")),
    };
    let generator = match (field("generator")?.as_str(), v.get("seed").and_then(Value::as_u64)) {
        (Some("csprng"), None) => Generator::Csprng,
        (Some("simulation"), Some(seed)) => Generator::Simulation { seed },
        _ => {
            return Err(io(
                sidecar,
                "`generator` is not csprng (without a seed) or simulation (with its seed)",
            ))
        }
    };
    Provenance::from_record(randomizer, generator).map_err(|e| io(sidecar, format!("invalid provenance record: {e}")))
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
/// side-car next to the labels when there is one, else from `--assert-provenance`; `None`
/// when there is none.
///
/// # Errors
/// A side-car together with `--assert-provenance`; a missing `--provenance` file; a side-car
/// that does not match the labels file ([`Error::ProvenanceMismatch`]) or cannot be read.
pub fn resolve(
    labels_path: &Path,
    explicit: Option<&Path>,
    assertion: Option<&str>,
) -> Result<Option<Provenance>, Error> {
    let sidecar = match explicit {
        Some(p) => Some(p.to_path_buf()),
        None => Some(sidecar_path(labels_path)).filter(|p| p.exists()),
    };
    match (sidecar, assertion) {
        (Some(s), Some(_)) => Err(Error::param(
            "assert-provenance",
            format!(
                "the labels have a provenance side-car ({}), which states their provenance; remove it to use --assert-provenance",
                s.display()
            ),
        )),
        (Some(s), None) => read_sidecar(&s, labels_path).map(Some),
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
