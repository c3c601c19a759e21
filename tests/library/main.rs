//! The library's integration tests, gathered into one test binary (one link per profile instead
//! of one per file). `blas_parity` and `determinism` stay separate: CI runs them again with the
//! `openblas` feature.
#[path = "../common/mod.rs"]
mod common;

mod central;
mod clc_radius;
mod closed_form;
mod distributed;
mod f32_data;
mod fit_features;
mod hostile;
mod invalid_options;
mod label_sgd;
mod layering;
mod losses;
mod mechanisms;
mod memory_plan;
#[cfg(feature = "mmap")]
mod mmap;
mod newton_cg;
mod objective;
mod observers;
mod pl_fit;
mod pl_losses;
mod pld;
mod policy_empirical;
mod policy_fw;
mod policy_inner;
mod policy_rule;
mod private_kwise;
mod probit_rr;
mod provenance;
mod rdp;
mod robust;
mod sample_start;
#[cfg(feature = "serde")]
mod serialize;
mod sgd;
mod sgd_engine_bits;
#[cfg(feature = "signing")]
mod signed_record;
mod solver_agreement;
mod topk_erm;
mod user_level;
mod user_level_kwise;
mod warm_start;
