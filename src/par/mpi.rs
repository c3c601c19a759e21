//! MPI ranks as a [`Collective`] (feature `mpi`): rsmpi over the system's MPI library (Open MPI
//! or MPICH).
//!
//! ```no_run
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use privpref::par::mpi::Mpi;
//! let world = Mpi::init()?; // MPI_Init_thread(SERIALIZED); finalised when `world` is dropped
//! // Every rank maps the same file and fits `view.distributed(&world)`; rank 0 writes the result.
//! # Ok(()) }
//! ```

use super::Collective;
use mpi::datatype::PartitionMut;
use mpi::environment::Universe;
use mpi::topology::SimpleCommunicator;
use mpi::traits::*;
use mpi::{Count, Threading};

/// The ranks of an MPI communicator as a [`Collective`].
///
/// The reductions call MPI from whichever thread drives the fit (one call at a time, in program
/// order), so MPI must be initialised with at least `MPI_THREAD_SERIALIZED`: [`Mpi::init`] does
/// so; [`Mpi::from_communicator`] checks it.
pub struct Mpi {
    comm: SimpleCommunicator,
    /// Finalises MPI when dropped (only when [`Mpi::init`] initialised it).
    _universe: Option<Universe>,
}

impl std::fmt::Debug for Mpi {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Mpi")
            .field("rank", &self.comm.rank())
            .field("size", &self.comm.size())
            .finish()
    }
}

// SAFETY: the communicator is only used through `Collective`, whose calls the library makes one
// at a time from the thread that drives a fit (a reduction exchanges only after its local
// subtrees are done); with MPI_THREAD_SERIALIZED (checked at construction) MPI allows calls
// from any thread as long as they never overlap.
unsafe impl Send for Mpi {}
// SAFETY: as above: shared references never call MPI concurrently.
unsafe impl Sync for Mpi {}

impl Mpi {
    /// Initialises MPI with `MPI_THREAD_SERIALIZED` and returns `MPI_COMM_WORLD`; MPI is
    /// finalised when the value is dropped.
    ///
    /// # Errors
    /// When MPI was already initialised, or the library offers less than
    /// `MPI_THREAD_SERIALIZED`.
    pub fn init() -> Result<Self, String> {
        let (universe, level) = mpi::initialize_with_threading(Threading::Serialized)
            .ok_or_else(|| "MPI is already initialised in this process".to_string())?;
        if level < Threading::Serialized {
            return Err(format!(
                "the MPI library offers only {level:?} threading; privpref needs Serialized"
            ));
        }
        Ok(Mpi {
            comm: universe.world(),
            _universe: Some(universe),
        })
    }

    /// A communicator of an MPI that the caller initialised (and will finalise).
    ///
    /// # Errors
    /// When MPI offers less than `MPI_THREAD_SERIALIZED`.
    pub fn from_communicator(comm: SimpleCommunicator) -> Result<Self, String> {
        let level = mpi::environment::threading_support();
        if level < Threading::Serialized {
            return Err(format!(
                "MPI was initialised with {level:?} threading; privpref needs Serialized"
            ));
        }
        Ok(Mpi { comm, _universe: None })
    }

    /// The communicator.
    pub fn communicator(&self) -> &SimpleCommunicator {
        &self.comm
    }
}

impl Collective for Mpi {
    fn rank(&self) -> usize {
        self.comm.rank() as usize
    }
    fn size(&self) -> usize {
        self.comm.size() as usize
    }
    fn all_gather(&self, mine: &[f64]) -> Vec<f64> {
        let count = Count::try_from(mine.len()).expect("a partial result of more than 2^31 values");
        let mut counts = vec![0 as Count; self.size()];
        self.comm.all_gather_into(&count, &mut counts[..]);
        let displs: Vec<Count> = counts
            .iter()
            .scan(0 as Count, |at, &c| {
                let d = *at;
                *at += c;
                Some(d)
            })
            .collect();
        let total: usize = counts.iter().map(|&c| c as usize).sum();
        let mut all = vec![0.0; total];
        {
            let mut parts = PartitionMut::new(&mut all[..], counts, &displs[..]);
            self.comm.all_gather_varcount_into(mine, &mut parts);
        }
        all
    }
    fn broadcast(&self, buf: &mut [u8]) {
        self.comm.process_at_rank(0).broadcast_into(buf);
    }
}
