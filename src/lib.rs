//! # privpref
//!
//! Reward models from pairwise preference feedback under label differential privacy.
#![warn(missing_docs)]

pub mod data;
pub mod error;
pub mod kernels;
pub mod loss;
pub mod mechanism;
pub mod par;
pub mod sim;

pub use error::{Error, Result};
pub mod estimator;
pub mod experiments;
pub mod feasible;
pub mod model;
pub mod objective;
pub mod solver;
