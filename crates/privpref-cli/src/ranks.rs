//! `mpirun -np P privpref fit …` (and `privpref policy …`): the processes of one run.
//!
//! A run started by an MPI launcher (Open MPI's `mpirun`, or a launcher that sets the PMI / PMIx
//! environment) is a group of ranks; every rank maps the same `.npy` files and reduces its
//! contiguous part of the rows ([`privpref::par::Shard`]); rank 0 writes the result. Without a
//! launcher the run is one process, as always. A binary built without the `mpi` feature refuses
//! to run under a launcher, rather than running P identical fits that all write the output.

use crate::Failure;
use privpref::par::Collective;
use privpref::Error;

/// The environment variables by which MPI launchers announce a rank.
const LAUNCHER_VARS: [&str; 4] = ["OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK", "MPI_LOCALNRANKS"];

/// The processes of this run.
pub struct Ranks {
    #[cfg(feature = "mpi")]
    mpi: Option<privpref::par::mpi::Mpi>,
}

/// Whether this process was started by an MPI launcher.
fn launched() -> bool {
    LAUNCHER_VARS.iter().any(|v| std::env::var_os(v).is_some())
}

/// Refuses to run `what` under an MPI launcher: only the pairwise fits (local and `--central`),
/// the policy optimisation and the label privatisation are distributed; anything else would run
/// whole on every rank, each writing the output.
pub fn single_process(what: &str) -> Result<(), Error> {
    if launched() {
        return Err(Error::param(
            "mpi",
            format!("{what} runs in one process; under mpirun only `privpref fit` with a pairwise loss (local or --central), `privpref policy` and `privpref privatize` are distributed"),
        ));
    }
    Ok(())
}

impl Ranks {
    /// One process, or the MPI ranks when started by a launcher.
    pub fn from_env() -> Result<Ranks, Error> {
        #[cfg(feature = "mpi")]
        {
            if launched() {
                let mpi = privpref::par::mpi::Mpi::init().map_err(|m| Error::param("mpi", m))?;
                return Ok(Ranks { mpi: Some(mpi) });
            }
            Ok(Ranks { mpi: None })
        }
        #[cfg(not(feature = "mpi"))]
        {
            if launched() {
                return Err(Error::param(
                    "mpi",
                    "started by an MPI launcher, but this privpref was built without the `mpi` feature (cargo build --release -p privpref-cli --features mpi)",
                ));
            }
            Ok(Ranks {})
        }
    }

    /// The group, when there are several processes (or one started by a launcher).
    pub fn group(&self) -> Option<&dyn Collective> {
        #[cfg(feature = "mpi")]
        {
            self.mpi.as_ref().map(|m| m as &dyn Collective)
        }
        #[cfg(not(feature = "mpi"))]
        {
            None
        }
    }

    /// Whether this process writes the results (rank 0, or the only process).
    pub fn is_root(&self) -> bool {
        self.group().is_none_or(|g| g.rank() == 0)
    }

    /// Number of processes.
    pub fn size(&self) -> usize {
        self.group().map_or(1, |g| g.size())
    }

    /// The outcome of a run: under MPI, rank 0 prints the error now, while every rank is still
    /// in MPI (finalising waits for all ranks, so no rank's exit can end the job before the
    /// message is out), and the message is left empty for `main`, which prints the others.
    pub fn report(self, r: Result<(), Failure>) -> Result<(), Failure> {
        match r {
            Err(mut f) if self.group().is_some() => {
                if self.is_root() {
                    eprintln!("privpref: {}", f.message);
                }
                f.message.clear();
                Err(f) // `self` (and with it MPI) is finalised on return, after the message
            }
            r => r,
        }
    }

    /// Checks that every rank read inputs of the same shapes (`shape`: the same list of sizes on
    /// each rank, e.g. `[n, d, bytes per value, labels, weights]`, which `names` spells out), so
    /// that no rank takes an early exit that another does not: an error on every rank naming
    /// the first that differs.
    pub fn same_shapes(&self, shape: &[usize], names: &str) -> Result<(), Error> {
        let Some(g) = self.group() else { return Ok(()) };
        let mine: Vec<f64> = shape.iter().map(|&v| v as f64).collect();
        let all = g.all_gather(&mine);
        let root = &all[..mine.len()];
        let sizes = |v: &[f64]| v.iter().map(|&x| x as usize).collect::<Vec<_>>();
        for (rank, theirs) in all.chunks(mine.len().max(1)).enumerate() {
            if theirs != root {
                return Err(Error::Shape(format!(
                    "the ranks read different inputs: rank {rank} has sizes {:?} and rank 0 {:?} ([{names}])",
                    sizes(theirs),
                    sizes(root)
                )));
            }
        }
        Ok(())
    }

    /// The outcome of a step every rank takes on its own (reading its files, validating): when
    /// any rank failed, every rank returns an error (its own, or the first failed rank's), so
    /// no rank goes on to a collective step the others never reach.
    pub fn agree<T>(&self, r: Result<T, Error>) -> Result<T, Error> {
        let Some(g) = self.group() else { return r };
        // Each rank sends [message length + 1 (0 = ok), message bytes…].
        let msg: Vec<f64> = match &r {
            Ok(_) => vec![0.0],
            Err(e) => {
                let text = e.to_string();
                std::iter::once(text.len() as f64 + 1.0)
                    .chain(text.bytes().map(f64::from))
                    .collect()
            }
        };
        let all = g.all_gather(&msg);
        let mut at = 0;
        let mut first_failure = None;
        for rank in 0..g.size() {
            let len = all[at] as usize;
            if len > 0 && first_failure.is_none() {
                let text: Vec<u8> = all[at + 1..at + len].iter().map(|&b| b as u8).collect();
                first_failure = Some((rank, String::from_utf8_lossy(&text).into_owned()));
            }
            at += len.max(1);
        }
        match (r, first_failure) {
            (Ok(_), Some((rank, text))) => Err(Error::Io {
                path: format!("<rank {rank} of {}>", g.size()),
                message: text,
            }),
            (r, _) => r,
        }
    }
}
