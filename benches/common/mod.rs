//! Helpers shared by the benches that write `bench-results/*.md`.

/// Mean time (ns) criterion recorded for the benchmark id `id` (`group/function[/param]`).
pub fn mean_ns(id: &str) -> Option<f64> {
    let dir = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
    let s = std::fs::read_to_string(format!("{dir}/criterion/{id}/new/estimates.json")).ok()?;
    let i = s.find("\"mean\"")?;
    let j = s[i..].find("\"point_estimate\":")? + i + "\"point_estimate\":".len();
    let end = s[j..].find([',', '}'])? + j;
    s[j..end].trim().parse().ok()
}

pub use privpref_experiments::machine::{cpu_name, logical_cpus, utc_date};

/// Writes `bench-results/{name}` of the workspace (the benches of the member crates run in
/// their own directories).
pub fn write_result(name: &str, text: &str) {
    let here = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let root = if here.join("bench-results").is_dir() {
        here
    } else {
        here.join("../..")
    };
    let dir = root.join("bench-results");
    let _ = std::fs::create_dir_all(&dir);
    let path = dir.join(name);
    if std::fs::write(&path, text).is_ok() {
        eprintln!("wrote {}", path.display());
    }
}

/// STREAM-style memory kernels (McCalpin's STREAM: copy, sum, triad), chunked over the current
/// rayon pool in fixed 1 MiB pieces. Bytes per element as STREAM counts them: copy 16, sum 8,
/// triad 24 (the write-allocate read of the destination is not counted).
#[allow(dead_code)]
pub mod stream {
    use rayon::prelude::*;

    /// Elements per parallel piece (1 MiB of f64).
    const PIECE: usize = 1 << 17;

    /// `a = b`.
    pub fn copy(a: &mut [f64], b: &[f64]) {
        a.par_chunks_mut(PIECE)
            .zip(b.par_chunks(PIECE))
            .for_each(|(a, b)| a.copy_from_slice(b));
    }

    /// `Σ b` (eight independent partial sums per piece so the adds do not serialise).
    pub fn sum(b: &[f64]) -> f64 {
        b.par_chunks(PIECE)
            .map(|c| {
                let mut acc = [0.0f64; 8];
                let it = c.chunks_exact(8);
                let tail: f64 = it.remainder().iter().sum();
                for v in it {
                    for k in 0..8 {
                        acc[k] += v[k];
                    }
                }
                acc.iter().sum::<f64>() + tail
            })
            .sum()
    }

    /// `a = b + s·c`.
    pub fn triad(a: &mut [f64], b: &[f64], c: &[f64], s: f64) {
        a.par_chunks_mut(PIECE)
            .zip(b.par_chunks(PIECE))
            .zip(c.par_chunks(PIECE))
            .for_each(|((a, b), c)| {
                for ((a, b), c) in a.iter_mut().zip(b).zip(c) {
                    *a = b + s * c;
                }
            });
    }
}
