//! The label randomisers: binary randomized response, K-ary RR, RRTop-k, RR-with-prior and
//! user-level RR, each returning [`Privatized`] labels that carry their provenance.
//!
//! `seed=None` draws the noise from the OS-seeded ChaCha20 CSPRNG (the only choice for real
//! data); an integer seed uses the seeded simulation generator, and the provenance then says
//! "simulation only" (`holds_for_real_data: false` in the guarantee).

use crate::arrays::{borrow_exact, values};
use crate::results::to_json;
use crate::run::run;
use numpy::{PyArray1, PyArrayMethods};
use privpref::data::UserIndex;
use privpref::mechanism::{KaryRr, RandomizedResponse, RrTopK, RrWithPrior, UserLevelRr};
use privpref::privacy::{NoiseRng, PrivatizedLabels, Randomizer};
use privpref::Error;
use pyo3::prelude::*;

/// Privatised labels and their provenance (the library's `PrivatizedLabels`).
#[pyclass(frozen, name = "PrivatizedLabels", module = "privpref._native")]
pub struct Privatized {
    pub inner: PrivatizedLabels,
}

#[pymethods]
impl Privatized {
    /// The privatised labels (a read-only `uint8` copy).
    #[getter]
    fn labels<'py>(&self, py: Python<'py>) -> Bound<'py, PyArray1<u8>> {
        let a = PyArray1::from_slice(py, self.inner.labels());
        a.readwrite().make_nonwriteable();
        a
    }

    /// The provenance as the library's JSON (mechanism, ε, K, generator, origin).
    #[getter]
    fn provenance_json(&self) -> PyResult<String> {
        to_json(self.inner.provenance())
    }

    /// The guarantee the labels carry, as the library's JSON.
    #[getter]
    fn guarantee_json(&self) -> PyResult<String> {
        to_json(&self.inner.guarantee())
    }

    fn __len__(&self) -> usize {
        self.inner.len()
    }
}

fn rng(seed: Option<u64>) -> privpref::Result<NoiseRng> {
    NoiseRng::from_seed(seed)
}

/// Binary randomized response at `eps` (keep each label with probability `σ(ε)`).
#[pyfunction]
#[pyo3(signature = (y, eps, seed=None))]
pub fn privatize_rr(py: Python<'_>, y: &Bound<'_, PyAny>, eps: f64, seed: Option<u64>) -> PyResult<Privatized> {
    let y = borrow_exact::<u8>(y, "y", "uint8", 1)?;
    let y = values(&y);
    run(py, None, |_| {
        RandomizedResponse::new(eps)?.privatize(y, &mut rng(seed)?)
    })
    .map(|inner| Privatized { inner })
}

/// K-ary randomized response at `eps` over `k` labels.
#[pyfunction]
#[pyo3(signature = (y, eps, k, seed=None))]
pub fn privatize_krr(
    py: Python<'_>,
    y: &Bound<'_, PyAny>,
    eps: f64,
    k: usize,
    seed: Option<u64>,
) -> PyResult<Privatized> {
    let y = borrow_exact::<u8>(y, "y", "uint8", 1)?;
    let y = values(&y);
    run(py, None, |_| KaryRr::new(eps, k)?.privatize(y, &mut rng(seed)?)).map(|inner| Privatized { inner })
}

/// RRTop-k at `eps` with per-sample priors (`n × K`, rows summing to 1).
#[pyfunction]
#[pyo3(signature = (y, eps, k, priors, seed=None))]
pub fn privatize_rr_top_k(
    py: Python<'_>,
    y: &Bound<'_, PyAny>,
    eps: f64,
    k: usize,
    priors: &Bound<'_, PyAny>,
    seed: Option<u64>,
) -> PyResult<Privatized> {
    let y = borrow_exact::<u8>(y, "y", "uint8", 1)?;
    let p = borrow_exact::<f64>(priors, "priors", "float64", 2)?;
    let (y, p) = (values(&y), values(&p));
    run(py, None, |_| RrTopK::new(eps, k)?.privatize(y, p, &mut rng(seed)?)).map(|inner| Privatized { inner })
}

/// RR-with-prior at `eps` (RRTop-k* with the per-sample k* of Ghazi et al. (2021), Alg. 2);
/// returns the labels and each sample's k*.
#[pyfunction]
#[pyo3(signature = (y, eps, priors, seed=None))]
pub fn privatize_rr_with_prior(
    py: Python<'_>,
    y: &Bound<'_, PyAny>,
    eps: f64,
    priors: &Bound<'_, PyAny>,
    seed: Option<u64>,
) -> PyResult<(Privatized, Vec<usize>)> {
    let y = borrow_exact::<u8>(y, "y", "uint8", 1)?;
    let p = borrow_exact::<f64>(priors, "priors", "float64", 2)?;
    let (y, p) = (values(&y), values(&p));
    run(py, None, |_| RrWithPrior::new(eps)?.privatize(y, p, &mut rng(seed)?))
        .map(|(inner, ks)| (Privatized { inner }, ks))
}

/// User-level randomized response with user budget `eps`: user `u`'s `m_u` labels (rows in
/// user order, `counts[u] = m_u`) each at `ε/m_u`.
#[pyfunction]
#[pyo3(signature = (y, counts, eps, seed=None))]
pub fn privatize_user_rr(
    py: Python<'_>,
    y: &Bound<'_, PyAny>,
    counts: Vec<usize>,
    eps: f64,
    seed: Option<u64>,
) -> PyResult<Privatized> {
    let y = borrow_exact::<u8>(y, "y", "uint8", 1)?;
    let y = values(&y);
    run(py, None, |_| {
        let users = UserIndex::from_counts(&counts)?;
        UserLevelRr::new(eps)?.privatize(&users, y, &mut rng(seed)?)
    })
    .map(|inner| Privatized { inner })
}

/// Labels privatised elsewhere, with the caller's word for how (the provenance names `rr`,
/// `krr`, `rrtopk`, `rr-prior`, `user-rr`): the guarantee then says "asserted by the caller".
#[pyfunction]
#[pyo3(signature = (y, mechanism, eps, k=None, num_labels=None, counts=None))]
pub fn asserted_labels(
    py: Python<'_>,
    y: &Bound<'_, PyAny>,
    mechanism: &str,
    eps: f64,
    k: Option<usize>,
    num_labels: Option<usize>,
    counts: Option<Vec<usize>>,
) -> PyResult<Privatized> {
    let y = borrow_exact::<u8>(y, "y", "uint8", 1)?;
    let y = values(&y).to_vec();
    let need = |v: Option<usize>, name: &'static str| {
        v.ok_or_else(|| Error::param(name, format!("mechanism `{mechanism}` needs {name}")))
    };
    let randomizer = match mechanism {
        "rr" => Ok(Randomizer::Rr { eps }),
        "krr" => need(k, "k").map(|k| Randomizer::Krr { eps, k }),
        "rrtopk" => need(k, "k")
            .and_then(|k| need(num_labels, "num_labels").map(|num_labels| Randomizer::RrTopK { eps, k, num_labels })),
        "rr-prior" => need(num_labels, "num_labels").map(|num_labels| Randomizer::RrWithPrior { eps, num_labels }),
        "user-rr" => counts
            .ok_or_else(|| Error::param("counts", "mechanism `user-rr` needs counts"))
            .map(|counts| Randomizer::UserLevelRr { eps, counts }),
        other => Err(Error::param(
            "mechanism",
            format!("unknown mechanism `{other}` (expected rr, krr, rrtopk, rr-prior or user-rr)"),
        )),
    };
    run(py, None, move |_| PrivatizedLabels::asserted_by_caller(y, randomizer?)).map(|inner| Privatized { inner })
}
