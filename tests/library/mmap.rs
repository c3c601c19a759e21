//! Memory-mapped feature matrices (feature `mmap`): `MappedMatrix::open` and `load_matrix` lend
//! the same values, bit for bit, as the copying reader `read_matrix_keep`, and a fit on them
//! gives the same bits; files that cannot be mapped in place (Fortran order, the other byte
//! order, unaligned data) are refused by `MappedMatrix::open` with the reason and read as a copy
//! by `load_matrix`; invalid files give the reader's own errors, never a panic.

use crate::common::npy_bytes;
use privpref::data::npy::{self, header, LoadedMatrix, MappedMatrix, Matrix};
use privpref::data::{Features, PairwiseView};
use privpref::estimator::{fit, FitOptions, SolverKind};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::simulation_rng;
use privpref::sim::{btl_pairs, theta_star};
use privpref::Error;
use std::path::{Path, PathBuf};

/// A scratch directory, removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new(tag: &str) -> Dir {
        let p = std::env::temp_dir().join(format!("privpref-mmap-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).unwrap();
        Dir(p)
    }
    fn path(&self, name: &str) -> PathBuf {
        self.0.join(name)
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn write_npy(path: &Path, descr: &str, fortran: bool, shape: &str, payload: &[u8], shift: usize) {
    std::fs::write(path, npy_bytes(descr, fortran, shape, payload, shift)).unwrap();
}

/// The values of `f` as bits (`f32` values as their own bits, tagged so the two widths differ).
fn feature_bits(f: Features<'_>) -> (u8, Vec<u64>) {
    match f {
        Features::F64(v) => (8, v.iter().map(|x| x.to_bits()).collect()),
        Features::F32(v) => (4, v.iter().map(|x| u64::from(x.to_bits())).collect()),
    }
}

fn matrix_bits(m: &Matrix) -> (u8, Vec<u64>) {
    match m {
        Matrix::F64(v) => feature_bits(Features::F64(v)),
        Matrix::F32(v) => feature_bits(Features::F32(v)),
    }
}

/// BTL data with seeds 1 and 2: features (f64), labels.
fn btl(n: usize, d: usize) -> (Vec<f64>, Vec<u8>) {
    let theta = theta_star(d, 1.0, true, &mut simulation_rng(1)).unwrap();
    let p = btl_pairs(n, &theta, &mut simulation_rng(2)).unwrap();
    (p.x, p.y)
}

/// A C-order little-endian float file of `x` (as f64 or rounded to f32) as NumPy writes it.
fn write_floats(path: &Path, x: &[f64], n: usize, d: usize, f32_data: bool) {
    if f32_data {
        let mut b = header::format(
            header::Dtype {
                kind: header::Kind::Float,
                size: 4,
                big_endian: false,
            },
            &[n as u64, d as u64],
        );
        b.extend(x.iter().flat_map(|&v| (v as f32).to_le_bytes()));
        std::fs::write(path, b).unwrap();
    } else {
        npy::write_f64(path, x, &[n, d]).unwrap();
    }
}

fn view<'a>(f: Features<'a>, n: usize, d: usize, y: &'a [u8]) -> PairwiseView<'a> {
    match f {
        Features::F64(x) => PairwiseView::new(x, n, d, y, None).unwrap(),
        Features::F32(x) => PairwiseView::new_f32(x, n, d, y, None).unwrap(),
    }
}

#[test]
fn mapped_and_read_matrices_give_the_same_bits_and_the_same_fits() {
    let dir = Dir::new("same-bits");
    let (n, d) = (3000, 9);
    let (x, y) = btl(n, d);
    for f32_data in [false, true] {
        let p = dir.path(if f32_data { "x32.npy" } else { "x64.npy" });
        write_floats(&p, &x, n, d, f32_data);
        let (read, rn, rd) = npy::read_matrix_keep(&p).unwrap();
        let mapped = MappedMatrix::open(&p).unwrap();
        let loaded = npy::load_matrix(&p).unwrap();
        assert!(loaded.is_mapped(), "f32 = {f32_data}");
        assert_eq!((mapped.n(), mapped.d()), (rn, rd));
        assert_eq!((loaded.n(), loaded.d()), (n, d));
        let want = matrix_bits(&read);
        assert_eq!(want.0, if f32_data { 4 } else { 8 });
        assert_eq!(feature_bits(mapped.features()), want, "f32 = {f32_data}");
        assert_eq!(feature_bits(loaded.features()), want, "f32 = {f32_data}");

        let read_view = match &read {
            Matrix::F64(v) => view(Features::F64(v), n, d, &y),
            Matrix::F32(v) => view(Features::F32(v), n, d, &y),
        };
        for solver in [SolverKind::Newton, SolverKind::Lbfgs] {
            let mut o = FitOptions::new(LossSpec::Mle, FeasibleSet::theta_b(2.0).unwrap());
            o.solver = solver.into();
            let a = fit(read_view, &o).unwrap();
            let b = fit(view(mapped.features(), n, d, &y), &o).unwrap();
            assert!(a.report.converged(), "{solver:?}");
            let bits = |t: &[f64]| t.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
            assert_eq!(bits(&a.theta), bits(&b.theta), "{solver:?}, f32 = {f32_data}");
            assert_eq!(a.report.counts.iterations, b.report.counts.iterations);
        }
        // Releasing the maps (their pages dropped in parallel, then unmapped) leaves the file
        // as it was: mapped again, the same bits.
        mapped.release();
        loaded.release();
        let again = npy::load_matrix(&p).unwrap();
        assert_eq!(feature_bits(again.features()), want, "f32 = {f32_data}");
    }
}

/// The error of `MappedMatrix::open` on a valid file it cannot map, which `load_matrix` reads
/// as a copy equal to `read_matrix_keep`'s.
fn refused_then_read(p: &Path, reason: &str) {
    let e = MappedMatrix::open(p).unwrap_err();
    assert!(matches!(e, Error::Io { .. }), "{e}");
    let msg = e.to_string();
    assert!(
        msg.contains("cannot be memory-mapped") && msg.contains(reason) && !msg.contains('\n'),
        "{msg}"
    );
    let loaded: LoadedMatrix = npy::load_matrix(p).unwrap();
    assert!(!loaded.is_mapped(), "{}", p.display());
    let (read, n, d) = npy::read_matrix_keep(p).unwrap();
    assert_eq!((loaded.n(), loaded.d()), (n, d));
    assert_eq!(feature_bits(loaded.features()), matrix_bits(&read), "{}", p.display());
}

#[test]
fn layouts_that_cannot_be_mapped_are_refused_by_open_and_read_by_load_matrix() {
    let dir = Dir::new("layouts");
    let p = dir.path("x.npy");
    // 3 × 2, values 1..6 row-major.
    let vals = [1.5f64, -2.0, 3.25, 4.0, -5.5, 6.0];
    // Fortran order: the file holds the columns; the reader transposes.
    let cols = [1.5f64, 3.25, -5.5, -2.0, 4.0, 6.0];
    let le = |v: &[f64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    write_npy(&p, "<f8", true, "(3, 2)", &le(&cols), 0);
    refused_then_read(&p, "Fortran");
    assert_eq!(npy::load_matrix(&p).unwrap().features().get(1), -2.0);
    let cols32: Vec<u8> = cols.iter().flat_map(|&x| (x as f32).to_le_bytes()).collect();
    write_npy(&p, "<f4", true, "(3, 2)", &cols32, 0);
    refused_then_read(&p, "Fortran");
    // A Fortran-order file with one column (or one row) has the C layout: it is mapped.
    write_npy(&p, "<f8", true, "(6, 1)", &le(&vals), 0);
    let m = MappedMatrix::open(&p).unwrap();
    assert_eq!(feature_bits(m.features()), feature_bits(Features::F64(&vals)));
    write_npy(&p, "<f8", true, "(1, 6)", &le(&vals), 0);
    assert!(npy::load_matrix(&p).unwrap().is_mapped());
    // The other byte order: swapped by the reader.
    let be: Vec<u8> = vals.iter().flat_map(|x| x.to_be_bytes()).collect();
    write_npy(&p, ">f8", false, "(3, 2)", &be, 0);
    refused_then_read(&p, "byte order");
    assert_eq!(npy::load_matrix(&p).unwrap().features().get(5), 6.0);
    // Data at byte 64k + 4: not aligned for f64 (read as a copy), aligned for f32 (mapped).
    write_npy(&p, "<f8", false, "(3, 2)", &le(&vals), 4);
    refused_then_read(&p, "not a multiple of 8");
    let v32: Vec<u8> = vals.iter().flat_map(|&x| (x as f32).to_le_bytes()).collect();
    write_npy(&p, "<f4", false, "(3, 2)", &v32, 4);
    let m = MappedMatrix::open(&p).unwrap();
    assert_eq!(
        feature_bits(m.features()),
        matrix_bits(&npy::read_matrix_keep(&p).unwrap().0)
    );
    write_npy(&p, "<f4", false, "(3, 2)", &v32, 2);
    refused_then_read(&p, "not a multiple of 4");
    // An empty matrix maps to no values.
    write_npy(&p, "<f8", false, "(0, 3)", &[], 0);
    let m = MappedMatrix::open(&p).unwrap();
    assert_eq!((m.n(), m.d(), m.features().len()), (0, 3, 0));
}

#[test]
fn invalid_files_give_the_readers_errors() {
    let dir = Dir::new("hostile");
    let p = dir.path("x.npy");
    let le = |v: &[f64]| v.iter().flat_map(|x| x.to_le_bytes()).collect::<Vec<u8>>();
    let six = le(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    let mut bad_header = b"\x93NUMPY\x01\x00".to_vec();
    bad_header.extend_from_slice(&20u16.to_le_bytes());
    bad_header.extend_from_slice(b"{'descr': '<f8', @@@");
    let f8 = |shape: &str, payload: &[u8]| npy_bytes("<f8", false, shape, payload, 0);
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        ("truncated data", f8("(3, 2)", &six[..40]), "(truncated)"),
        (
            "trailing bytes",
            f8("(3, 2)", &[&six[..], &[0u8; 8]].concat()),
            "(trailing bytes)",
        ),
        (
            "a header that claims more rows than the file holds",
            f8("(1000000000000, 2)", &six),
            "needs 16000000000000 bytes",
        ),
        (
            "a shape whose size overflows",
            f8("(4294967296, 4294967296)", &six),
            "64 bits",
        ),
        ("a 1-D array", f8("(6,)", &six), "expected a 2-D array"),
        ("a 3-D array", f8("(1, 3, 2)", &six), "expected a 2-D array"),
        (
            "an integer dtype",
            npy_bytes("<i8", false, "(3, 2)", &six, 0),
            "dtype int64 ('<i8'); features must be float64 or float32",
        ),
        (
            "a big-endian integer dtype",
            npy_bytes(">i4", false, "(3, 4)", &six, 0),
            "('>i4'); features must be float64 or float32",
        ),
        ("a malformed header", bad_header, "not a valid .npy file"),
        ("no NumPy magic", b"PK\x03\x04 not an array".to_vec(), "magic"),
        ("an empty file", Vec::new(), "not a valid .npy file"),
    ];
    for (what, bytes, expect) in &cases {
        std::fs::write(&p, bytes).unwrap();
        let read = npy::read_matrix_keep(&p).unwrap_err().to_string();
        assert!(read.contains(expect), "{what}: the reader says {read}");
        for (who, e) in [
            ("MappedMatrix::open", MappedMatrix::open(&p).map(|_| ()).unwrap_err()),
            ("load_matrix", npy::load_matrix(&p).map(|_| ()).unwrap_err()),
        ] {
            assert!(matches!(e, Error::Io { .. }), "{what}, {who}: {e}");
            assert_eq!(e.to_string(), read, "{what}, {who}");
        }
    }
    // A missing file and a directory.
    for q in [dir.path("missing.npy"), dir.0.clone()] {
        let read = npy::read_matrix_keep(&q).unwrap_err().to_string();
        assert_eq!(MappedMatrix::open(&q).unwrap_err().to_string(), read);
        assert_eq!(npy::load_matrix(&q).unwrap_err().to_string(), read);
    }
}
