//! The crate's error type.
//!
//! `Err` is returned for invalid input (bad data, bad parameters, I/O) and for failures that
//! make a result meaningless. Numerical trouble inside a solver is *not* an error: it is a
//! [`Termination`](crate::solver::Termination) recorded in the
//! [`SolveReport`](crate::solver::SolveReport), which can never be mistaken for convergence.

use std::fmt;

/// What is wrong with one entry of the input data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DataErrorKind {
    /// A feature is NaN.
    NaN,
    /// A feature is +inf or -inf.
    Infinite,
    /// A label is outside the loss's label set (e.g. not 0/1).
    LabelOutOfRange {
        /// The offending label, exactly as read: label files may hold any integer dtype, so it
        /// can be negative (`i128` holds every `i64` and every `u64` value).
        label: i128,
        /// Labels must be `< bound`.
        bound: u64,
    },
    /// A sample weight is negative.
    NegativeWeight,
    /// A sample weight is NaN or infinite.
    NonFiniteWeight,
    /// A user id appears again after other users' rows: each user's rows must be consecutive
    /// ([`UserIndex`](crate::data::UserIndex)).
    UserNotContiguous {
        /// The user id.
        user: u64,
    },
    /// A label appears twice in one ranking (a ranking must list distinct alternatives).
    DuplicateInRanking {
        /// The repeated label.
        label: u8,
    },
    /// A feature is so much larger than the others (more than `2^448` times the typical
    /// magnitude of a row's largest entry) that squares and products of features would overflow
    /// double precision.
    OutOfScale,
    /// An item index is outside the item table.
    IndexOutOfRange {
        /// The offending index, as read.
        index: u64,
        /// Indices must be `< bound` (the number of items).
        bound: u64,
    },
}

/// The values `0..bound` in words, without the half-open `0..2` that reads as if 2 were allowed.
fn allowed(bound: u64) -> String {
    match bound {
        0 => "absent (no value is allowed)".into(),
        1 => "0".into(),
        2 => "0 or 1".into(),
        b => format!("between 0 and {}", b - 1),
    }
}

impl fmt::Display for DataErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DataErrorKind::NaN => write!(f, "feature is NaN"),
            DataErrorKind::Infinite => write!(f, "feature is infinite"),
            DataErrorKind::LabelOutOfRange { label, bound } => {
                write!(f, "label {label} is out of range (labels must be {})", allowed(*bound))
            }
            DataErrorKind::NegativeWeight => write!(f, "sample weight is negative"),
            DataErrorKind::NonFiniteWeight => write!(f, "sample weight is NaN or infinite"),
            DataErrorKind::UserNotContiguous { user } => write!(
                f,
                "user {user} appears again after other users' rows (each user's rows must be consecutive)"
            ),
            DataErrorKind::DuplicateInRanking { label } => {
                write!(
                    f,
                    "label {label} appears twice in the ranking (a ranking lists distinct alternatives)"
                )
            }
            DataErrorKind::OutOfScale => write!(
                f,
                "feature is more than 2^448 times the typical row maximum: products of features would overflow double precision (rescale or clip it)"
            ),
            DataErrorKind::IndexOutOfRange { index, bound } => {
                write!(f, "item index {index} is out of range (indices must be {})", allowed(*bound))
            }
        }
    }
}

/// Where a data error is: a row, and a column when the error is about one feature.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Location {
    /// Row (sample) index, 0-based.
    pub row: usize,
    /// Column (feature) index, 0-based, when the error is about one feature.
    pub col: Option<usize>,
}

impl fmt::Display for Location {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.col {
            Some(c) => write!(f, "row {}, column {}", self.row, c),
            None => write!(f, "row {}", self.row),
        }
    }
}

/// Where a data error is in K-wise (grouped) data: the sample, the row of its `K × d` feature
/// block (or the position in its ranking), and the column — the indices of the offending
/// entry in an `n × K × d` feature array or an `n × K` label array.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GroupLocation {
    /// Sample (group) index, 0-based.
    pub sample: usize,
    /// Row within the sample's `K × d` block (an alternative), 0-based, when relevant.
    pub row: Option<usize>,
    /// Column: a feature within the row, or a position within an `n × K` ranking, 0-based.
    pub col: Option<usize>,
}

impl fmt::Display for GroupLocation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "sample {}", self.sample)?;
        if let Some(r) = self.row {
            write!(f, ", row {r}")?;
        }
        if let Some(c) = self.col {
            write!(f, ", column {c}")?;
        }
        Ok(())
    }
}

/// The crate's error type.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// One entry of the input data is invalid.
    #[error("invalid data in {input} at {at}: {kind}")]
    Data {
        /// Which input (`"x"`, `"y"`, `"weights"`, ...).
        input: &'static str,
        /// Row and column.
        at: Location,
        /// What is wrong.
        kind: DataErrorKind,
    },
    /// One entry of a replicated data block
    /// ([`ReplicaBlock`](crate::solver::sgd::ReplicaBlock)) is invalid.
    #[error("invalid data in {input} of replication {replication} at {at}: {kind}")]
    ReplicaData {
        /// Which input (`"x"`, `"y"`).
        input: &'static str,
        /// The replication (0-based).
        replication: usize,
        /// Row (time step) and column (feature) within the replication.
        at: Location,
        /// What is wrong.
        kind: DataErrorKind,
    },
    /// One entry of K-wise (grouped) data is invalid
    /// ([`GroupView`](crate::data::GroupView)).
    #[error("invalid data in {input} at {at}: {kind}")]
    GroupData {
        /// Which input (`"x"`, `"y"`, `"index"`, `"weights"`).
        input: &'static str,
        /// Sample, row and column.
        at: GroupLocation,
        /// What is wrong.
        kind: DataErrorKind,
    },
    /// One entry of an `n × A × d` state-action feature array (the policy's states) is
    /// invalid: named by its three indices, not a flattened column.
    #[error("invalid data in {input} at state {state}, action {action}, feature {feature}: {kind}")]
    StateData {
        /// Which input (`"states"`).
        input: &'static str,
        /// State (first axis), 0-based.
        state: usize,
        /// Action (second axis), 0-based.
        action: usize,
        /// Feature (third axis), 0-based.
        feature: usize,
        /// What is wrong.
        kind: DataErrorKind,
    },
    /// Inputs have inconsistent or empty shapes.
    #[error("shape error: {0}")]
    Shape(String),
    /// A parameter is outside its valid range (eps <= 0, delta outside (0,1), radius <= 0, ...).
    #[error("invalid parameter `{name}`: {reason}")]
    InvalidParam {
        /// Parameter name as the user sees it.
        name: &'static str,
        /// Why it is invalid (includes the value).
        reason: String,
    },
    /// A numerical failure that makes the result meaningless (e.g. a non-finite objective at the
    /// starting point).
    #[error("numerical failure: {0}")]
    Numerical(String),
    /// A privacy-accounting or mechanism failure (e.g. OS entropy unavailable for the CSPRNG).
    #[error("privacy: {0}")]
    Privacy(String),
    /// A solver stopped without meeting its convergence certificate.
    #[error("{solver} did not converge: {reason} (relative KKT residual {kkt_residual:.3e}, tolerance {kkt_tol:.3e}, {iterations} iterations)")]
    NotConverged {
        /// Solver name.
        solver: &'static str,
        /// Why it stopped: the termination's name (`max-iterations`, `no-minimizer`, …, as
        /// [`Termination::as_str`](crate::solver::Termination::as_str)).
        termination: &'static str,
        /// The same in one sentence ([`Termination::describe`](crate::solver::Termination::describe)).
        reason: &'static str,
        /// Achieved KKT residual.
        kkt_residual: f64,
        /// Required tolerance.
        kkt_tol: f64,
        /// Iterations done.
        iterations: usize,
    },
    /// A row's feature vector is longer than the stated bound allows (`‖x_i‖ > 2L` for the
    /// feature bound `L` of `‖φ‖ ≤ L`, Chowdhury, Zhou & Natarajan (2024), Assumption 2.1).
    /// Central-DP calibrations rely on the bound, so such rows are an error, never clipped
    /// silently.
    #[error("invalid data in x at row {row}: ‖x‖ = {norm} exceeds 2L = {limit} (feature bound L = {}); rescale the features or state a larger --feature-bound", limit / 2.0)]
    FeatureBound {
        /// Row (sample) index, 0-based.
        row: usize,
        /// `‖x_row‖₂`.
        norm: f64,
        /// The limit `2L`.
        limit: f64,
    },
    /// An alternative of a K-wise sample has a feature vector longer than the stated bound
    /// (`‖φ_ik‖ > L` for `‖φ‖ ≤ L`): the K-wise central calibrations rely on the bound, so such
    /// rows are an error, never clipped silently.
    #[error("invalid data in x at sample {sample}, row {row}: ‖φ‖ = {norm} exceeds the feature bound L = {limit}; rescale the features or state a larger --feature-bound")]
    GroupFeatureBound {
        /// Sample index, 0-based.
        sample: usize,
        /// Alternative (row of the sample's `K × d` block), 0-based.
        row: usize,
        /// `‖φ_ik‖₂`.
        norm: f64,
        /// The bound `L`.
        limit: f64,
    },
    /// A privacy guarantee was refused: the condition its proof needs (e.g. an exact minimiser,
    /// certified by the KKT residual or a duality gap) does not hold for this run. Nothing was
    /// released.
    #[error("privacy guarantee refused: {reason} (achieved {achieved:.3e}, certified tolerance {tolerance:.3e})")]
    GuaranteeRefused {
        /// Why, in one sentence.
        reason: String,
        /// The achieved value of the certificate (KKT residual, gap, distance bound).
        achieved: f64,
        /// The tolerance the calibration relied on.
        tolerance: f64,
    },
    /// The labels' provenance does not fit the estimator: a loss calibrated to one randomiser
    /// (binary randomized response at `ε`, K-ary randomized response at `ε` over `K` labels,
    /// user-level randomized response at user budget `ε` over given user counts) was given
    /// labels randomised by another randomiser, at another `ε`, over another `K` or user
    /// partition; or the data's labels are not the privatised labels the provenance belongs
    /// to. Fitting anyway would attach a guarantee the labels do not have (and, with a
    /// debiased loss at the wrong `ε`, return a biased estimate). Nothing was fitted.
    #[error("label provenance mismatch: the fit needs {expected}, but the labels are {found}")]
    ProvenanceMismatch {
        /// What the estimator (its loss and data) needs, in words with the parameters.
        expected: String,
        /// What the labels' provenance (or content) says, in words with the parameters.
        found: String,
    },
    /// A provenance record (the side-car a privatisation writes next to its labels) that cannot
    /// be read, or whose signature does not verify for the key it names: the record was changed
    /// after it was signed. Nothing was fitted.
    #[error("provenance record: {0}")]
    ProvenanceRecord(String),
    /// A computation would need more memory than the limit allows, or the system refused an
    /// allocation sized by the input ([`crate::solver::memory`]). Nothing was allocated.
    #[error("{what} needs {}, more than the {} {limit_from}; {alternative}", human_bytes(*needed), human_bytes(*limit))]
    MemoryLimit {
        /// The computation and its largest buffer, e.g. `newton (its 200000 × 200000 Hessian
        /// and factors)`.
        what: String,
        /// The planned peak in bytes.
        needed: u64,
        /// The limit in bytes.
        limit: u64,
        /// Where the limit comes from (`memory limit`, `available to the process`).
        limit_from: &'static str,
        /// What to do instead (another solver, fewer features).
        alternative: String,
    },
    /// File input/output.
    #[error("{path}: {message}")]
    Io {
        /// The file.
        path: String,
        /// What went wrong.
        message: String,
    },
}

/// A byte count in binary units with three significant digits (`298 GiB`, `1.75 TiB`), and the
/// exact count below a kibibyte.
fn human_bytes(b: u64) -> String {
    const UNITS: [&str; 6] = ["KiB", "MiB", "GiB", "TiB", "PiB", "EiB"];
    if b < 1024 {
        return format!("{b} bytes");
    }
    let mut v = b as f64 / 1024.0;
    let mut u = 0;
    while v >= 1023.5 && u + 1 < UNITS.len() {
        v /= 1024.0;
        u += 1;
    }
    let digits = if v >= 99.95 {
        0
    } else if v >= 9.995 {
        1
    } else {
        2
    };
    format!("{v:.digits$} {}", UNITS[u])
}

/// `Result<T, privpref::Error>`.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Shorthand for [`Error::InvalidParam`].
    pub fn param(name: &'static str, reason: impl Into<String>) -> Self {
        Error::InvalidParam {
            name,
            reason: reason.into(),
        }
    }
}

/// Checks `eps` is a finite positive privacy parameter.
pub fn check_eps(eps: f64) -> Result<()> {
    if eps.is_finite() && eps > 0.0 {
        Ok(())
    } else {
        Err(Error::param(
            "eps",
            format!("must be finite and > 0, got {}", crate::math::show::num(eps)),
        ))
    }
}

/// Checks `delta` lies in the open interval (0, 1).
pub fn check_delta(delta: f64) -> Result<()> {
    if delta > 0.0 && delta < 1.0 {
        Ok(())
    } else {
        Err(Error::param(
            "delta",
            format!("must be in (0, 1), got {}", crate::math::show::num(delta)),
        ))
    }
}

/// Checks a ball radius is finite and positive.
pub fn check_radius(radius: f64) -> Result<()> {
    if radius.is_finite() && radius > 0.0 {
        Ok(())
    } else {
        Err(Error::param(
            "radius",
            format!("must be finite and > 0, got {}", crate::math::show::num(radius)),
        ))
    }
}
