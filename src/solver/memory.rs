//! Memory planned before it is allocated.
//!
//! Every solver and estimator whose buffers grow faster than the input — dense Newton's `d × d`
//! Hessian and its Cholesky factors, the `d × d` second moment of the private covariance, the
//! `d × d` matrices of a policy's confidence set — computes its peak from the shape
//! (`n`, `d`, `K`, threads) first, and returns [`Error::MemoryLimit`] naming the size and the
//! alternative when the peak exceeds a [`MemoryLimit`]. Byte counts saturate at `u64::MAX`
//! (`8d²` overflows for `d` beyond `2^30`), so a plan is never smaller than the truth.
//!
//! The limit ([`MemoryLimit::Default`], the default of every option that holds one) is the
//! process-wide limit set by [`set_process_limit`] when there is one, else the memory available
//! to the process: the smallest of `MemAvailable` (`/proc/meminfo`), the cgroup's
//! `memory.max − memory.current` (cgroup v2) and the address-space limit `RLIMIT_AS`
//! (`/proc/self/limits`). Where none of them can be read (not Linux) there is no limit and only
//! the fallible allocation ([`try_zeros`]) stands between a large plan and an abort.

use crate::error::{Error, Result};
use std::sync::atomic::{AtomicU64, Ordering};

/// Bytes of one `f64`.
const F64: u64 = 8;

/// The memory a run may use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum MemoryLimit {
    /// The process-wide limit ([`set_process_limit`]) if one is set, else the memory available
    /// to the process (module docs).
    #[default]
    Default,
    /// At most this many bytes.
    Bytes(u64),
    /// No limit: plans are not checked (allocation stays fallible where the input sizes it).
    Unlimited,
}

/// No process-wide limit (the value of the atomic when unset).
const UNSET: u64 = u64::MAX;
static PROCESS_LIMIT: AtomicU64 = AtomicU64::new(UNSET);

/// Sets the limit that [`MemoryLimit::Default`] stands for in this process (`None`: the memory
/// available to the process). The command-line tool sets it from `--memory-limit`.
pub fn set_process_limit(bytes: Option<u64>) {
    PROCESS_LIMIT.store(bytes.unwrap_or(UNSET), Ordering::Relaxed);
}

impl MemoryLimit {
    /// The limit in bytes and where it comes from (`None`: no limit).
    pub fn resolve(&self) -> Option<(u64, &'static str)> {
        match *self {
            MemoryLimit::Bytes(b) => Some((b, "memory limit")),
            MemoryLimit::Unlimited => None,
            MemoryLimit::Default => match PROCESS_LIMIT.load(Ordering::Relaxed) {
                UNSET => available_memory().map(|b| (b, "available to the process")),
                b => Some((b, "memory limit")),
            },
        }
    }

    /// `Ok` when `needed` bytes fit within the limit; else [`Error::MemoryLimit`] with `what`
    /// (the computation and its largest buffer, e.g. `newton (its 200000 × 200000 Hessian
    /// and factors)`) and `alternative` (what to do instead).
    pub fn check(&self, what: impl FnOnce() -> String, needed: u64, alternative: &str) -> Result<()> {
        match self.resolve() {
            Some((limit, source)) if needed > limit => Err(Error::MemoryLimit {
                what: what(),
                needed,
                limit,
                limit_from: source,
                alternative: alternative.to_string(),
            }),
            _ => Ok(()),
        }
    }

    /// Whether `needed` bytes fit within the limit.
    pub fn fits(&self, needed: u64) -> bool {
        self.resolve().is_none_or(|(limit, _)| needed <= limit)
    }
}

/// Parses a byte count: a non-negative number with an optional binary suffix `K`, `M`, `G`,
/// `T` (powers of 1024; `B`, `iB` and lower case accepted), e.g. `4G`, `512MiB`, `1000000`.
pub fn parse_bytes(s: &str) -> Result<u64> {
    let t = s.trim();
    let upper = t.to_ascii_uppercase();
    let body = upper
        .strip_suffix("IB")
        .or_else(|| upper.strip_suffix('B'))
        .unwrap_or(&upper);
    let (num, mult) = match body.chars().last() {
        Some('K') => (&body[..body.len() - 1], 1u64 << 10),
        Some('M') => (&body[..body.len() - 1], 1u64 << 20),
        Some('G') => (&body[..body.len() - 1], 1u64 << 30),
        Some('T') => (&body[..body.len() - 1], 1u64 << 40),
        _ => (body, 1),
    };
    let bad = || {
        Error::param(
            "memory-limit",
            format!("expected a byte count such as 4G, 512M or 1000000, got `{s}`"),
        )
    };
    let v: f64 = num.trim().parse().map_err(|_| bad())?;
    if !(v.is_finite() && v >= 0.0) {
        return Err(bad());
    }
    let bytes = v * mult as f64;
    if bytes >= u64::MAX as f64 {
        return Err(bad());
    }
    Ok(bytes as u64)
}

/// `rows × cols` values of 8 bytes, saturating.
pub fn f64_bytes(rows: usize, cols: usize) -> u64 {
    (rows as u64).saturating_mul(cols as u64).saturating_mul(F64)
}

/// `a + b + …`, saturating.
fn sum(parts: &[u64]) -> u64 {
    parts.iter().fold(0u64, |a, &b| a.saturating_add(b))
}

/// Peak bytes of dense Newton ([`crate::solver::newton`]) on `n` rows in dimension `d` with
/// `threads` threads: the `d × d` Hessian; the per-chunk `d × d` accumulators of the Hessian
/// pass (`2^`[`chunk_depth`](crate::par::chunk_depth)`(d)` of them) with their panels of scaled
/// rows (`max(2 MiB, 128·8d)` bytes each, from `d = 12` on); the reduced Hessian and the two Cholesky factors
/// alive during the shift search (`3d²`); and the `O(n + d)` vectors (scores and their
/// directions, `6n`; gradients, steps and refinements, `16d`; `4d` per thread).
pub fn newton_bytes(n: usize, d: usize, threads: usize) -> u64 {
    let d2 = f64_bytes(d, d);
    // Beyond 2^20 columns one accumulator exceeds the chunk budget: two chunks (the fewest).
    let chunks = if d > 1 << 20 {
        2
    } else {
        1u64 << crate::par::chunk_depth(d)
    };
    // Below 12 columns the accumulators are fed row by row, without panels.
    let panel = if d < 12 { 0 } else { f64_bytes(d, 128).max(2 << 20) };
    sum(&[
        d2,
        chunks.saturating_mul(d2.saturating_add(panel)),
        d2.saturating_mul(3),
        vectors(n, d, threads),
    ])
}

/// The `O(n + d)` vectors of a first- or second-order run: `6n` scores and directions, `16d`
/// gradients and steps, `4d` per thread.
fn vectors(n: usize, d: usize, threads: usize) -> u64 {
    sum(&[
        f64_bytes(n, 6),
        f64_bytes(d, 16),
        f64_bytes(d, 4).saturating_mul(threads.max(1) as u64),
    ])
}

/// Peak bytes of Newton-CG ([`crate::solver::newton_cg`]): no `d × d` matrix; the CG vectors
/// (`8d`) besides the vectors of every run.
pub fn newton_cg_bytes(n: usize, d: usize, threads: usize) -> u64 {
    sum(&[f64_bytes(d, 8), vectors(n, d, threads)])
}

/// Peak bytes of L-BFGS ([`crate::solver::lbfgs`]) with `memory` correction pairs: `2·memory`
/// vectors of length `d` and `memory` score directions of length `n`, besides the vectors of
/// every run.
pub fn lbfgs_bytes(n: usize, d: usize, memory: usize, threads: usize) -> u64 {
    sum(&[
        f64_bytes(d, 2usize.saturating_mul(memory)),
        f64_bytes(n, memory),
        vectors(n, d, threads),
    ])
}

/// Peak bytes of the private covariance
/// ([`crate::estimator::private_mle::private_covariance`]) in dimension `d`: the second
/// moment, the noise, the eigenvectors of the PSD repair and the repaired matrix (`4d²`), plus
/// the eigensolver's workspace (`d²`).
pub fn covariance_bytes(d: usize) -> u64 {
    f64_bytes(d, d).saturating_mul(5)
}

/// Peak bytes of the `d × d` matrices of a policy's confidence set and its inner minimum
/// ([`crate::policy`]): `Σ + λI`, its factor and inverse, and the matrices of the inner problem
/// (`4d²`).
pub fn confidence_set_bytes(d: usize) -> u64 {
    f64_bytes(d, d).saturating_mul(4)
}

/// A zeroed vector of `len` values, allocated fallibly: an allocation the system refuses is
/// [`Error::MemoryLimit`] with `what` and `alternative`, never an abort.
pub fn try_zeros(len: usize, what: impl FnOnce() -> String, alternative: &str) -> Result<Vec<f64>> {
    let mut v = Vec::new();
    if v.try_reserve_exact(len).is_err() {
        return Err(Error::MemoryLimit {
            what: what(),
            needed: f64_bytes(len, 1),
            limit: available_memory().unwrap_or(0),
            limit_from: "available to the process (the system refused the allocation)",
            alternative: alternative.to_string(),
        });
    }
    v.resize(len, 0.0);
    Ok(v)
}

/// The memory available to this process in bytes (module docs), `None` when it cannot be read.
pub fn available_memory() -> Option<u64> {
    [meminfo_available(), cgroup_available(), address_space_limit()]
        .into_iter()
        .flatten()
        .min()
}

/// `MemAvailable` of `/proc/meminfo`.
fn meminfo_available() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kb: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb.saturating_mul(1024))
}

/// `memory.max − memory.current` of the process's cgroup (v2), when a maximum is set.
fn cgroup_available() -> Option<u64> {
    let cg = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    let path = cg.lines().find_map(|l| l.strip_prefix("0::"))?.trim();
    let dir = std::path::Path::new("/sys/fs/cgroup").join(path.trim_start_matches('/'));
    let max: u64 = std::fs::read_to_string(dir.join("memory.max"))
        .ok()?
        .trim()
        .parse()
        .ok()?;
    let current: u64 = std::fs::read_to_string(dir.join("memory.current"))
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(0);
    Some(max.saturating_sub(current))
}

/// The soft `RLIMIT_AS` of `/proc/self/limits` ("Max address space"), when not unlimited.
fn address_space_limit() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/limits").ok()?;
    let line = s.lines().find(|l| l.starts_with("Max address space"))?;
    line.split_whitespace().nth(3)?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_counts_parse() {
        assert_eq!(parse_bytes("1000").unwrap(), 1000);
        assert_eq!(parse_bytes("4G").unwrap(), 4 << 30);
        assert_eq!(parse_bytes("512MiB").unwrap(), 512 << 20);
        assert_eq!(parse_bytes("1.5k").unwrap(), 1536);
        assert_eq!(parse_bytes("2TB").unwrap(), 2 << 40);
        for bad in ["", "G", "-1", "x", "1e30T", "nan"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn sizes_saturate() {
        assert_eq!(f64_bytes(usize::MAX, 2), u64::MAX);
        assert_eq!(newton_bytes(10, usize::MAX / 2, 2), u64::MAX);
    }
}
