//! The paper experiments' tests, gathered into one test binary.

mod experiments;
mod krr_scaling;
mod rates;
