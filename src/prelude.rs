//! The names most programs need, in one import: `use privpref::prelude::*;`.
//!
//! Data views and bounds, feasible sets, loss choices, the fit entry points with their options
//! and results, the label mechanisms with the provenance of what they privatise, and the noise
//! generators.
//!
//! ```
//! use privpref::prelude::*;
//!
//! let x = [1.0, 0.0, 0.0, 1.0, 1.0, 1.0, -1.0, 0.5];
//! let y = [1u8, 0, 1, 0];
//! let private = RandomizedResponse::new(1.0)?.privatize(&y, &mut NoiseRng::secure()?)?;
//! let view = PairwiseView::new(&x, 4, 2, private.labels(), None)?;
//! let opts = FitOptions::new(LossSpec::DebiasedRr { eps: 1.0 }, FeasibleSet::theta_b(1.0)?);
//! let model = fit_privatized(view, &private, &opts)?;
//! assert_eq!(model.guarantee.map(|g| g.eps), Some(1.0));
//! # Ok::<(), Error>(())
//! ```

pub use crate::data::{FeatureBound, GroupView, PairwiseView, UserIndex};
pub use crate::error::{Error, Result};
pub use crate::estimator::central::{objective_perturbation, ObjPertDetail, ObjPertOptions};
pub use crate::estimator::{fit, fit_kwise, fit_kwise_privatized, fit_privatized, FitOptions, Solver, SolverKind};
pub use crate::feasible::{FeasibleSet, Radius};
pub use crate::loss::{GroupLossSpec, LossSpec};
pub use crate::mechanism::{KaryRr, Mechanism, RandomizedResponse, UserLevelRr};
pub use crate::model::{Fit, FitConfig, Local, NoGuarantee};
pub use crate::privacy::{Guarantee, NoiseRng, PrivatizedLabels, Provenance, Randomizer};
pub use crate::solver::{Control, SolveReport, Termination};
