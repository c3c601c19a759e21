//! Gram products `C ← β C + α AᵀA` (lower triangle) for the row blocks of the Hessian pass
//! ([`super::hessian`]): faer's triangular matrix product by default, OpenBLAS `dsyrk` with the
//! `openblas` feature.
//!
//! Both backends compute each block's product on the calling thread (OpenBLAS is pinned to one
//! thread on first use, so it neither competes with rayon nor changes its summation with the
//! machine's core count); the blocks are combined by the crate's fixed-shape tree. So the
//! Hessian is bit-identical for any rayon thread count **within** a backend. Between the two
//! backends the bits differ (different blocking inside the product); they agree to rounding
//! (`tests/blas_parity.rs`: ≤ 1e-12 relative).

use faer::linalg::matmul::triangular::{matmul as tri_matmul, BlockStructure};
use faer::{Accum, MatMut, MatRef};

/// The backend of the Gram products: `"openblas"` with the `openblas` feature, else `"faer"`.
pub fn backend() -> &'static str {
    if cfg!(feature = "openblas") {
        "openblas"
    } else {
        "faer"
    }
}

static OPENBLAS_CALLS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// How many Gram products OpenBLAS has computed in this process (always 0 without the
/// `openblas` feature): lets a test prove that the BLAS path is the one taken.
pub fn openblas_calls() -> u64 {
    OPENBLAS_CALLS.load(std::sync::atomic::Ordering::Relaxed)
}

/// `C ← α AᵀA` (`accumulate = false`) or `C ← C + α AᵀA` (`accumulate = true`) on the lower
/// triangle of the column-major `d × d` buffer `c`, for the row-major `m × d` matrix `a`. The
/// strict upper triangle of `c` is not referenced.
pub(crate) fn syrk_lower(c: &mut [f64], a: &[f64], m: usize, d: usize, alpha: f64, accumulate: bool) {
    assert_eq!(c.len(), d * d);
    assert_eq!(a.len(), m * d);
    if m == 0 || d == 0 {
        if !accumulate {
            lower_fill_zero(c, d);
        }
        return;
    }
    #[cfg(feature = "openblas")]
    if i32::try_from(m).is_ok() && i32::try_from(d).is_ok() {
        blas::syrk_lower(c, a, m, d, alpha, accumulate);
        OPENBLAS_CALLS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        return;
    }
    faer_syrk_lower(c, a, m, d, alpha, accumulate);
}

/// Rows per part of [`sample_gram`] (the parts, and so the bits, depend only on the shape).
const SAMPLE_PART_ROWS: usize = 1024;
/// Most parts of [`sample_gram`] (each holds a `d × d` product).
const SAMPLE_PARTS: usize = 4;

/// `α AᵀA` for the row-major `m × d` matrix `a` (`m = a.len()/d`), column-major `d × d` with
/// both triangles: the rows cut into at most [`SAMPLE_PARTS`] parts of at least
/// [`SAMPLE_PART_ROWS`] rows (a function of `m` only), each part's [`syrk_lower`] on one thread
/// and the parts summed along the fixed tree — the same bits for any thread count.
pub(crate) fn sample_gram(a: &[f64], d: usize, alpha: f64, par: crate::par::Par) -> Vec<f64> {
    let m = a.len().checked_div(d).unwrap_or(0);
    let parts = m.div_ceil(SAMPLE_PART_ROWS).clamp(1, SAMPLE_PARTS);
    let per = m.div_ceil(parts).max(1);
    let leaf = |p: usize| {
        let lo = (p * per).min(m);
        let hi = ((p + 1) * per).min(m);
        let mut c = vec![0.0; d * d];
        syrk_lower(&mut c, &a[lo * d..hi * d], hi - lo, d, alpha, false);
        c
    };
    let combine = |mut x: Vec<f64>, y: Vec<f64>| {
        x.iter_mut().zip(&y).for_each(|(p, q)| *p += q);
        x
    };
    let mut c = crate::par::tree_reduce(parts, par, &leaf, &combine);
    for j in 0..d {
        for i in j + 1..d {
            c[i * d + j] = c[j * d + i];
        }
    }
    c
}

fn lower_fill_zero(c: &mut [f64], d: usize) {
    for j in 0..d {
        c[j * d + j..(j + 1) * d].fill(0.0);
    }
}

fn faer_syrk_lower(c: &mut [f64], a: &[f64], m: usize, d: usize, alpha: f64, accumulate: bool) {
    let cm = MatMut::from_column_major_slice_mut(c, d, d);
    let am = MatRef::from_row_major_slice(a, m, d);
    tri_matmul(
        cm,
        BlockStructure::TriangularLower,
        if accumulate { Accum::Add } else { Accum::Replace },
        am.transpose(),
        BlockStructure::Rectangular,
        am,
        BlockStructure::Rectangular,
        alpha,
        faer::Par::Seq,
    );
}

#[cfg(feature = "openblas")]
mod blas {
    // Links OpenBLAS (blas-src selects it; openblas-src's `system` feature finds Debian's).
    use blas_src as _;
    use cblas_sys::{cblas_dsyrk, CBLAS_LAYOUT, CBLAS_TRANSPOSE, CBLAS_UPLO};
    use std::sync::Once;

    extern "C" {
        /// OpenBLAS's own thread-count setter (exported by every OpenBLAS build).
        fn openblas_set_num_threads(num_threads: std::os::raw::c_int);
    }

    static SINGLE_THREADED: Once = Once::new();

    /// As [`super::syrk_lower`]; `m, d` fit in `i32` (checked by the caller).
    pub(super) fn syrk_lower(c: &mut [f64], a: &[f64], m: usize, d: usize, alpha: f64, accumulate: bool) {
        // SAFETY: a plain setter of OpenBLAS's global thread count, called once.
        SINGLE_THREADED.call_once(|| unsafe { openblas_set_num_threads(1) });
        let (m, d) = (m as i32, d as i32);
        // Column-major view: `a` (row-major m × d) is the column-major d × m matrix Aᵀ with
        // leading dimension d, so AᵀA = (Aᵀ)(Aᵀ)ᵀ is dsyrk with `NoTrans`, n = d, k = m.
        // SAFETY: `a` holds m·d values (lda = d ≥ 1), `c` holds d·d values (ldc = d); the
        // slices' lengths are asserted by the caller and outlive the call.
        unsafe {
            cblas_dsyrk(
                CBLAS_LAYOUT::CblasColMajor,
                CBLAS_UPLO::CblasLower,
                CBLAS_TRANSPOSE::CblasNoTrans,
                d,
                m,
                alpha,
                a.as_ptr(),
                d,
                if accumulate { 1.0 } else { 0.0 },
                c.as_mut_ptr(),
                d,
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Straightforward reference `α Σ_r a_r a_rᵀ`, lower triangle.
    fn reference(a: &[f64], m: usize, d: usize, alpha: f64) -> Vec<f64> {
        let mut c = vec![0.0; d * d];
        for r in 0..m {
            for j in 0..d {
                for i in j..d {
                    c[j * d + i] += alpha * a[r * d + i] * a[r * d + j];
                }
            }
        }
        c
    }

    #[test]
    fn matches_the_reference_lower_triangle_and_accumulates() {
        for (m, d) in [(1usize, 1usize), (7, 3), (40, 17), (3, 33)] {
            let a: Vec<f64> = (0..m * d).map(|i| ((i * 37 % 11) as f64 - 5.0) / 7.0).collect();
            let mut c = vec![f64::NAN; d * d];
            // Replace must not read the NaNs of the lower triangle.
            syrk_lower(&mut c, &a, m, d, 2.0, false);
            let want = reference(&a, m, d, 2.0);
            for j in 0..d {
                for i in j..d {
                    let (g, w) = (c[j * d + i], want[j * d + i]);
                    assert!(
                        (g - w).abs() <= 1e-13 * (1.0 + w.abs()),
                        "{m}x{d} ({i},{j}): {g} vs {w}"
                    );
                }
            }
            syrk_lower(&mut c, &a, m, d, -1.0, true);
            for j in 0..d {
                for i in j..d {
                    let (g, w) = (c[j * d + i], want[j * d + i] / 2.0);
                    assert!(
                        (g - w).abs() <= 1e-13 * (1.0 + w.abs()),
                        "{m}x{d} ({i},{j}): {g} vs {w}"
                    );
                }
            }
        }
    }

    #[test]
    fn the_sample_gram_is_symmetric_matches_the_reference_and_ignores_the_pool() {
        // 5000 rows: four parts of 1250 (the multi-part tree), and 300 rows: one part.
        for (m, d) in [(5000usize, 6usize), (300, 5)] {
            let a: Vec<f64> = (0..m * d).map(|i| ((i * 37 % 13) as f64 - 6.0) / 5.0).collect();
            let want = reference(&a, m, d, 0.5);
            let seq = sample_gram(&a, d, 0.5, crate::par::Par::Seq);
            let pool = rayon::ThreadPoolBuilder::new().num_threads(2).build().unwrap();
            let par = pool.install(|| sample_gram(&a, d, 0.5, crate::par::Par::Rayon));
            assert_eq!(
                seq.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                par.iter().map(|v| v.to_bits()).collect::<Vec<_>>()
            );
            for j in 0..d {
                for i in j..d {
                    let w = want[j * d + i];
                    assert!(
                        (seq[j * d + i] - w).abs() <= 1e-12 * (1.0 + w.abs()),
                        "{m}x{d} ({i},{j})"
                    );
                    assert_eq!(seq[i * d + j], seq[j * d + i]);
                }
            }
        }
    }

    #[test]
    fn backend_name_follows_the_feature() {
        assert_eq!(backend() == "openblas", cfg!(feature = "openblas"));
    }
}
