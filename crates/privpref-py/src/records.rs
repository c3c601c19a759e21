//! Signed provenance records (the library's `privacy::record`): the Ed25519 signing key, the
//! record of privatised labels written to a file, and its verification against trusted keys.

use crate::arrays::{borrow_exact, values};
use crate::errors::to_py;
use crate::mechanisms::Privatized;
use privpref::privacy::record::{ProvenanceRecord, SignedRecord, SigningKey, TrustedKey, Verification};
use privpref::privacy::PrivatizedLabels;
use privpref::Error;
use pyo3::prelude::*;

/// An Ed25519 secret key that signs provenance records (PKCS#8 PEM).
#[pyclass(frozen, name = "SigningKey", module = "privpref._native")]
pub struct PySigningKey {
    inner: SigningKey,
}

#[pymethods]
impl PySigningKey {
    /// A new key from operating-system entropy.
    #[staticmethod]
    fn generate(py: Python<'_>) -> PyResult<Self> {
        SigningKey::generate()
            .map(|inner| PySigningKey { inner })
            .map_err(|e| to_py(py, e))
    }

    /// Reads a PKCS#8 PEM secret key.
    #[staticmethod]
    fn from_pem(py: Python<'_>, pem: &str) -> PyResult<Self> {
        SigningKey::from_pem(pem)
            .map(|inner| PySigningKey { inner })
            .map_err(|e| to_py(py, e))
    }

    /// The PKCS#8 PEM text of the secret key.
    fn to_pem(&self) -> String {
        self.inner.to_pem()
    }

    /// The SPKI PEM text of its public key (for whoever verifies).
    #[getter]
    fn public_key_pem(&self) -> String {
        self.inner.trusted_key().to_pem()
    }

    /// The key id (16 hex digits).
    #[getter]
    fn key_id(&self) -> String {
        self.inner.id().to_string()
    }
}

/// The signed record (JSON) of library-privatised `labels` written as the file `file_bytes`.
#[pyfunction]
pub fn sign_record(
    py: Python<'_>,
    labels: &Privatized,
    file_bytes: &[u8],
    labels_file: &str,
    key: &PySigningKey,
) -> PyResult<String> {
    let writer = concat!("privpref ", env!("CARGO_PKG_VERSION"), " python");
    ProvenanceRecord::new(
        labels_file,
        file_bytes,
        labels.inner.provenance(),
        labels.inner.len(),
        writer,
    )
    .map(|r| r.sign(&key.inner).to_json())
    .map_err(|e| to_py(py, e))
}

/// Verifies the record `record_json` of the file `file_bytes` (whose labels are `y`) against
/// the trusted public keys (SPKI PEM): the labels with the record's provenance, and how it was
/// verified (`verified`, `unsigned` or `untrusted-key`) with the key id.
#[pyfunction]
pub fn verify_record(
    py: Python<'_>,
    y: &Bound<'_, PyAny>,
    record_json: &str,
    file_bytes: &[u8],
    trusted_pems: Vec<String>,
) -> PyResult<(Privatized, String, Option<String>)> {
    let y = borrow_exact::<u8>(y, "y", "uint8", 1)?;
    let y = values(&y).to_vec();
    let result = (|| {
        let trusted = trusted_pems
            .iter()
            .map(|p| TrustedKey::from_pem(p))
            .collect::<privpref::Result<Vec<_>>>()?;
        let record = SignedRecord::from_json(record_json)?;
        if record.record().n != y.len() as u64 {
            return Err(Error::ProvenanceMismatch {
                expected: format!("the {} labels its provenance record states", record.record().n),
                found: format!("{} labels", y.len()),
            });
        }
        let (provenance, how) = record.verify(file_bytes, &trusted)?;
        let how = match how {
            Verification::Verified(k) => ("verified", Some(k.to_string())),
            Verification::Unsigned => ("unsigned", None),
            Verification::UntrustedKey(k) => ("untrusted-key", Some(k.to_string())),
        };
        Ok((PrivatizedLabels::new(y, provenance)?, how))
    })();
    result
        .map(|(inner, (how, key))| (Privatized { inner }, how.to_string(), key))
        .map_err(|e| to_py(py, e))
}
