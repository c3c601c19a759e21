//! `.npy` input/output for the CLI and examples (via the `npyz` crate).
//!
//! * Features: 2-D `float64` or `float32` (converted to f64), C or Fortran order.
//! * Labels: 1-D (or `n × 1`) integer or bool arrays of any width (`u8`…`i64`); values must fit
//!   the label set, checked with the row named.
//! * K-wise data: features as a 3-D `n × K × d` float array ([`read_array3`]); labels as an
//!   integer array of shape `n` (chosen index) or `n × K` (ranking) ([`read_group_labels`]).
//! * Vectors (weights, linear terms): 1-D (or `n × 1`) `float64`/`float32`.

use crate::error::{DataErrorKind, Error, Location, Result};
use npyz::{DType, Endianness, NpyFile, TypeChar, WriterBuilder};
use std::io::{BufReader, Read, Seek};
use std::path::Path;

fn io_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

fn open(path: &Path) -> Result<NpyFile<BufReader<std::fs::File>>> {
    let f = std::fs::File::open(path).map_err(|e| io_err(path, e))?;
    NpyFile::new(BufReader::new(f)).map_err(|e| io_err(path, format!("not a valid .npy file: {e}")))
}

fn type_of(path: &Path, dtype: &DType) -> Result<(TypeChar, u64)> {
    match dtype {
        DType::Plain(ts) => Ok((ts.type_char(), ts.size_field())),
        other => Err(io_err(path, format!("unsupported dtype {}", other.descr()))),
    }
}

/// The payload of an opened file whose dtype the caller has matched to `T` (same kind and size).
/// In the machine's byte order (numpy writes little-endian on x86 and ARM) the bytes are read
/// straight into the vector with one `read_exact` (no per-element decode); in the other byte
/// order npyz decodes element by element (byte-swapping).
/// The values are the same either way (tested).
fn payload<T: bytemuck::Pod + npyz::Deserialize>(
    path: &Path,
    npy: NpyFile<BufReader<std::fs::File>>,
) -> Result<Vec<T>> {
    let native = match npy.dtype() {
        DType::Plain(ts) => {
            let e = ts.endianness();
            e == Endianness::of_machine() || e == Endianness::Irrelevant
        }
        _ => false,
    };
    if !native {
        return npy.into_vec::<T>().map_err(|e| io_err(path, e));
    }
    let len = npy.len();
    let mut r = npy.into_inner();
    // The header's shape is checked against the bytes the file holds before anything is
    // allocated: a corrupt or truncated file is an error, not an allocation failure.
    let have = std::fs::metadata(path).map_err(|e| io_err(path, e))?.len()
        - r.stream_position().map_err(|e| io_err(path, e))?;
    let len = usize::try_from(len).ok();
    let need = len.and_then(|l| l.checked_mul(std::mem::size_of::<T>()));
    let (Some(len), Some(need)) = (len, need) else {
        return Err(io_err(path, "the header's shape is too large for this machine"));
    };
    if (need as u64) > have {
        return Err(io_err(
            path,
            format!("the header's shape needs {need} bytes of data, the file holds {have}"),
        ));
    }
    let mut v = vec![T::zeroed(); len];
    r.read_exact(bytemuck::cast_slice_mut(&mut v))
        .map_err(|e| io_err(path, format!("reading the data: {e}")))?;
    Ok(v)
}

/// Reads numeric data as f64 from an opened file (float32/float64 only).
fn read_floats(path: &Path, npy: NpyFile<BufReader<std::fs::File>>) -> Result<Vec<f64>> {
    let (tc, size) = type_of(path, &npy.dtype())?;
    match (tc, size) {
        (TypeChar::Float, 8) => payload::<f64>(path, npy),
        (TypeChar::Float, 4) => Ok(payload::<f32>(path, npy)?.into_iter().map(f64::from).collect()),
        _ => Err(io_err(
            path,
            format!("expected float64 or float32 data, found dtype {}", npy.dtype().descr()),
        )),
    }
}

/// A 2-D float matrix as row-major `(values, rows, cols)`, widened to `f64`.
pub fn read_matrix(path: impl AsRef<Path>) -> Result<(Vec<f64>, usize, usize)> {
    let (m, n, d) = read_matrix_keep(path)?;
    Ok(match m {
        Matrix::F64(v) => (v, n, d),
        Matrix::F32(v) => (v.into_iter().map(f64::from).collect(), n, d),
    })
}

/// Row-major matrix values in their stored precision.
#[derive(Debug, Clone, PartialEq)]
pub enum Matrix {
    /// `float64` data.
    F64(Vec<f64>),
    /// `float32` data (see [`crate::data::Features::F32`]).
    F32(Vec<f32>),
}

/// A 2-D float matrix as row-major `(values, rows, cols)`, keeping `float32` data in `f32`
/// (half the memory; the kernels widen it a mini-batch at a time).
pub fn read_matrix_keep(path: impl AsRef<Path>) -> Result<(Matrix, usize, usize)> {
    let path = path.as_ref();
    let npy = open(path)?;
    let shape = npy.shape().to_vec();
    let fortran = npy.order() == npyz::Order::Fortran;
    let (n, d) = match shape[..] {
        [n, d] => (n as usize, d as usize),
        _ => {
            return Err(io_err(
                path,
                format!("expected a 2-D array (n × d), found shape {shape:?}"),
            ))
        }
    };
    let (tc, size) = type_of(path, &npy.dtype())?;
    let m = match (tc, size) {
        (TypeChar::Float, 8) => Matrix::F64(row_major(payload::<f64>(path, npy)?, n, d, fortran)),
        (TypeChar::Float, 4) => Matrix::F32(row_major(payload::<f32>(path, npy)?, n, d, fortran)),
        _ => {
            return Err(io_err(
                path,
                format!("expected float64 or float32 data, found dtype {}", npy.dtype().descr()),
            ))
        }
    };
    Ok((m, n, d))
}

/// Column-major (Fortran) `n × d` values to row-major; row-major values unchanged.
fn row_major<T: Copy + Default>(v: Vec<T>, n: usize, d: usize, fortran: bool) -> Vec<T> {
    if !fortran {
        return v;
    }
    let mut r = vec![T::default(); n * d];
    for j in 0..d {
        for i in 0..n {
            r[i * d + j] = v[j * n + i];
        }
    }
    r
}

fn vector_len(path: &Path, shape: &[u64]) -> Result<usize> {
    match shape {
        [n] | [n, 1] => Ok(*n as usize),
        _ => Err(io_err(path, format!("expected a 1-D array, found shape {shape:?}"))),
    }
}

/// A 1-D float vector (also accepts `n × 1`).
pub fn read_vector(path: impl AsRef<Path>) -> Result<Vec<f64>> {
    let path = path.as_ref();
    let npy = open(path)?;
    vector_len(path, npy.shape())?;
    read_floats(path, npy)
}

/// A 1-D label vector of any integer or bool dtype, as `u8`. Values outside `0..bound` are an
/// error naming the row (`bound ≤ 256`).
pub fn read_labels(path: impl AsRef<Path>, bound: u32) -> Result<Vec<u8>> {
    let path = path.as_ref();
    let npy = open(path)?;
    vector_len(path, npy.shape())?;
    let wide = read_ints(path, npy)?;
    let mut out = Vec::with_capacity(wide.len());
    for (row, &v) in wide.iter().enumerate() {
        if v < 0 || v >= bound as i128 {
            return Err(Error::Data {
                input: "y",
                at: Location { row, col: None },
                kind: DataErrorKind::LabelOutOfRange {
                    label: v,
                    bound: bound as u64,
                },
            });
        }
        out.push(v as u8);
    }
    Ok(out)
}

/// A 1-D array of non-negative integer ids (any integer dtype, or bool) below `2^32`, as `u32`
/// (cluster ids of the histogram prior). A negative or too large value is an error naming the
/// row.
pub fn read_ids(path: impl AsRef<Path>, input: &'static str) -> Result<Vec<u32>> {
    let path = path.as_ref();
    let npy = open(path)?;
    vector_len(path, npy.shape())?;
    let wide = read_ints(path, npy)?;
    wide.iter()
        .enumerate()
        .map(|(row, &v)| {
            u32::try_from(v).map_err(|_| Error::Data {
                input,
                at: Location { row, col: None },
                kind: DataErrorKind::LabelOutOfRange {
                    label: v,
                    bound: 1 << 32,
                },
            })
        })
        .collect()
}

/// A 3-D float array `n × K × d` (K-wise features; the `n × A × d` state-action features of
/// `privpref policy`), row-major, widened to `f64`; returns `(values, n, K, d)`. C order only
/// (a Fortran-order file is an error).
pub fn read_array3(path: impl AsRef<Path>) -> Result<(Vec<f64>, usize, usize, usize)> {
    let path = path.as_ref();
    let npy = open(path)?;
    let shape = npy.shape().to_vec();
    let (n, k, d) = match shape[..] {
        [n, k, d] => (n as usize, k as usize, d as usize),
        _ => {
            return Err(io_err(
                path,
                format!("expected a 3-D array (n × K × d) of K-wise features, found shape {shape:?}"),
            ))
        }
    };
    if npy.order() == npyz::Order::Fortran && [n, k, d].iter().filter(|&&s| s > 1).count() > 1 {
        return Err(io_err(
            path,
            "a Fortran-order 3-D array is not supported; save it in C order",
        ));
    }
    Ok((read_floats(path, npy)?, n, k, d))
}

/// K-wise labels: an integer array of shape `n` (the chosen alternative of each sample) or
/// `n × K` (a ranking per sample, best first), dtype `u8`, `u16`, `u32`, `u64`, `i8`, `i16`,
/// `i32` or `i64` (or bool). Returns the values as `u8` and the width (1 or `K`). Values outside
/// `0..k` are an [`Error::GroupData`] naming the sample (and position); the permutation check
/// is [`GroupView`](crate::data::GroupView)'s.
pub fn read_group_labels(path: impl AsRef<Path>, k: usize) -> Result<(Vec<u8>, usize)> {
    let path = path.as_ref();
    let npy = open(path)?;
    let shape = npy.shape().to_vec();
    let width = match shape[..] {
        [_] => 1,
        [_, w] if w as usize == k => k,
        _ => {
            return Err(io_err(
                path,
                format!(
                "expected labels of shape (n,) (chosen index) or (n, {k}) (ranking, best first), found shape {shape:?}"
            ),
            ))
        }
    };
    if width > 1 && npy.order() == npyz::Order::Fortran {
        return Err(io_err(
            path,
            "a Fortran-order ranking array is not supported; save it in C order",
        ));
    }
    let wide = read_ints(path, npy)?;
    let mut out = Vec::with_capacity(wide.len());
    for (p, &v) in wide.iter().enumerate() {
        if v < 0 || v >= k as i128 {
            return Err(Error::GroupData {
                input: "y",
                at: crate::error::GroupLocation {
                    sample: p / width,
                    row: None,
                    col: (width > 1).then_some(p % width),
                },
                kind: DataErrorKind::LabelOutOfRange {
                    label: v,
                    bound: k as u64,
                },
            });
        }
        out.push(v as u8);
    }
    Ok((out, width))
}

/// Integer or bool data of any width, as `i128`.
fn read_ints(path: &Path, npy: NpyFile<BufReader<std::fs::File>>) -> Result<Vec<i128>> {
    let (tc, size) = type_of(path, &npy.dtype())?;
    let descr = npy.dtype().descr();
    let wide: Vec<i128> = match (tc, size) {
        (TypeChar::Bool, 1) => npy
            .into_vec::<bool>()
            .map_err(|e| io_err(path, e))?
            .into_iter()
            .map(i128::from)
            .collect(),
        (TypeChar::Uint, 1) => conv(npy.into_vec::<u8>(), path)?,
        (TypeChar::Uint, 2) => conv(npy.into_vec::<u16>(), path)?,
        (TypeChar::Uint, 4) => conv(npy.into_vec::<u32>(), path)?,
        (TypeChar::Uint, 8) => conv(npy.into_vec::<u64>(), path)?,
        (TypeChar::Int, 1) => conv(npy.into_vec::<i8>(), path)?,
        (TypeChar::Int, 2) => conv(npy.into_vec::<i16>(), path)?,
        (TypeChar::Int, 4) => conv(npy.into_vec::<i32>(), path)?,
        (TypeChar::Int, 8) => conv(npy.into_vec::<i64>(), path)?,
        _ => {
            return Err(io_err(
                path,
                format!("labels must be an integer or bool array, found dtype {descr}"),
            ))
        }
    };
    Ok(wide)
}

fn conv<T: Into<i128>>(r: std::io::Result<Vec<T>>, path: &Path) -> Result<Vec<i128>> {
    Ok(r.map_err(|e| io_err(path, e))?.into_iter().map(Into::into).collect())
}

/// Writes a C-order float64 array of the given shape.
pub fn write_f64(path: impl AsRef<Path>, data: &[f64], shape: &[usize]) -> Result<()> {
    write_any(path.as_ref(), data, shape)
}

/// Writes a 1-D uint32 array.
pub fn write_u32(path: impl AsRef<Path>, data: &[u32]) -> Result<()> {
    write_any(path.as_ref(), data, &[data.len()])
}

/// Writes a C-order uint8 array of the given shape.
pub fn write_u8_shape(path: impl AsRef<Path>, data: &[u8], shape: &[usize]) -> Result<()> {
    write_any(path.as_ref(), data, shape)
}

/// Writes a 1-D uint8 array.
pub fn write_u8(path: impl AsRef<Path>, data: &[u8]) -> Result<()> {
    write_any(path.as_ref(), data, &[data.len()])
}

fn write_any<T: npyz::AutoSerialize + Copy>(path: &Path, data: &[T], shape: &[usize]) -> Result<()> {
    let count: usize = shape.iter().product();
    if count != data.len() {
        return Err(Error::Shape(format!(
            "cannot write {} values as shape {shape:?}",
            data.len()
        )));
    }
    let shape: Vec<u64> = shape.iter().map(|&s| s as u64).collect();
    let f = std::fs::File::create(path).map_err(|e| io_err(path, e))?;
    let mut w = npyz::WriteOptions::new()
        .default_dtype()
        .shape(&shape)
        .writer(std::io::BufWriter::new(f))
        .begin_nd()
        .map_err(|e| io_err(path, e))?;
    w.extend(data.iter().copied()).map_err(|e| io_err(path, e))?;
    w.finish().map_err(|e| io_err(path, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An npy v1.0 file with the given descriptor, shape and payload bytes (test fixture).
    fn npy_bytes(descr: &str, shape: &str, payload: &[u8]) -> Vec<u8> {
        let mut h = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        while (10 + h.len() + 1) % 64 != 0 {
            h.push(' ');
        }
        h.push('\n');
        let mut b = b"\x93NUMPY\x01\x00".to_vec();
        b.extend_from_slice(&(h.len() as u16).to_le_bytes());
        b.extend_from_slice(h.as_bytes());
        b.extend_from_slice(payload);
        b
    }

    #[test]
    fn bulk_and_byte_swapped_payloads_read_the_same_values() {
        let dir = std::env::temp_dir().join(format!("privpref-npy-bulk-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let vals = [1.5, -2.25, 3.0e-300, f64::MAX, -0.0, 7.0];
        let p = dir.join("m.npy");
        for (descr, bytes) in [
            ("<f8", vals.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()),
            (">f8", vals.iter().flat_map(|v| v.to_be_bytes()).collect()),
        ] {
            std::fs::write(&p, npy_bytes(descr, "(3, 2)", &bytes)).unwrap();
            let (x, n, d) = read_matrix(&p).unwrap();
            assert_eq!((n, d), (3, 2), "{descr}");
            assert_eq!(
                x.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                vals.iter().map(|v| v.to_bits()).collect::<Vec<_>>(),
                "{descr}"
            );
        }
        let v32 = [1.5f32, -2.25, 1e-40, 3.0];
        for (descr, bytes) in [
            ("<f4", v32.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<u8>>()),
            (">f4", v32.iter().flat_map(|v| v.to_be_bytes()).collect()),
        ] {
            std::fs::write(&p, npy_bytes(descr, "(2, 2)", &bytes)).unwrap();
            let (m, _, _) = read_matrix_keep(&p).unwrap();
            assert_eq!(m, Matrix::F32(v32.to_vec()), "{descr}");
            assert_eq!(
                read_matrix(&p).unwrap().0,
                v32.iter().map(|&v| f64::from(v)).collect::<Vec<_>>()
            );
        }
        // A payload shorter than the header's shape is an error, not zeros.
        let short: Vec<u8> = vals[..5].iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(&p, npy_bytes("<f8", "(3, 2)", &short)).unwrap();
        let e = read_matrix(&p).unwrap_err();
        assert!(matches!(e, Error::Io { .. }), "{e}");
        assert!(e.to_string().contains("needs 48 bytes"), "{e}");
        // A header claiming an absurd shape is a clean error, not an allocation failure.
        std::fs::write(&p, npy_bytes("<f8", "(1000000000000000, 1)", &short)).unwrap();
        let e = read_matrix(&p).unwrap_err();
        assert!(matches!(e, Error::Io { .. }), "{e}");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn round_trip_and_label_checks() {
        let dir = std::env::temp_dir().join(format!("privpref-npy-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let xp = dir.join("x.npy");
        write_f64(&xp, &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2]).unwrap();
        let (x, n, d) = read_matrix(&xp).unwrap();
        assert_eq!((n, d), (3, 2));
        assert_eq!(x, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
        let yp = dir.join("y.npy");
        write_u8(&yp, &[0, 1, 1]).unwrap();
        assert_eq!(read_labels(&yp, 2).unwrap(), vec![0, 1, 1]);
        write_u8(&yp, &[0, 1, 7]).unwrap();
        let e = read_labels(&yp, 2).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Data {
                    at: Location { row: 2, .. },
                    ..
                }
            ),
            "{e}"
        );
        // A negative label (int64 file) is reported as itself, not clamped to 0.
        write_any(&yp, &[1i64, -1, 0], &[3]).unwrap();
        let e = read_labels(&yp, 2).unwrap_err();
        assert!(
            matches!(
                e,
                Error::Data {
                    at: Location { row: 1, .. },
                    kind: DataErrorKind::LabelOutOfRange { label: -1, bound: 2 },
                    ..
                }
            ),
            "{e}"
        );
        assert!(e.to_string().contains("label -1"), "{e}");
        // Labels from a float array are refused.
        assert!(read_labels(&xp, 2).is_err());
        // A matrix is not a vector.
        assert!(read_vector(&xp).is_err());
        assert!(read_matrix(dir.join("missing.npy")).is_err());
        std::fs::remove_dir_all(&dir).ok();
    }
}
