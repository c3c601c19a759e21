//! `.npy` input/output for the CLI and examples.
//!
//! * Features: 2-D `float64` or `float32` (converted to f64), C or Fortran order.
//! * Labels: 1-D (or `n × 1`) integer or bool arrays of any width (`u8`…`i64`); values must fit
//!   the label set, checked with the row named.
//! * K-wise data: features as a 3-D `n × K × d` float array ([`read_array3`]); labels as an
//!   integer array of shape `n` (chosen index) or `n × K` (ranking) ([`read_group_labels`]).
//! * Vectors (weights, linear terms): 1-D (or `n × 1`) `float64`/`float32`.
//!
//! Files are read for hostile input: the header is parsed strictly ([`header`]), and its shape
//! and dtype must describe exactly the bytes that follow it — a truncated file, trailing bytes
//! or a shape whose size overflows are one-line errors, checked before anything is allocated.
//! (A general-purpose reader was used before; its header parser overflowed in debug builds on
//! such shapes and reported parse errors over several lines.) Data in the machine's byte order
//! are read in bulk into the result vector; the other byte order is swapped in place. On Linux,
//! a result of 4 MiB or more is advised onto transparent huge pages before it is filled
//! (`madvise(MADV_HUGEPAGE)`, as numpy does for its arrays; a no-op where THP is off).
//!
//! With the feature `mmap`, a feature matrix can also be memory-mapped instead of read:
//! `MappedMatrix` lends the file's own pages as [`Features`](crate::data::Features) (zero-copy,
//! and out of core: a file larger than RAM is streamed from storage pass after pass), and
//! `load_matrix` maps when the file's layout allows and reads a copy otherwise. Their headers
//! go through the same checks, with the same messages, as [`read_matrix_keep`]. A file
//! truncated under a map ends the process with one line naming it and exit status 1 once
//! `install_sigbus_handler` has been called (opt-in, process-wide; [`sigbus`]).

pub mod header;
#[cfg(feature = "mmap")]
mod mapped;
#[cfg(feature = "mmap")]
pub mod sigbus;

#[cfg(feature = "mmap")]
pub use mapped::{load_matrix, LoadedMatrix, MappedMatrix};
#[cfg(feature = "mmap")]
pub use sigbus::install_sigbus_handler;

use crate::error::{DataErrorKind, Error, Location, Result};
use header::{Dtype, Header, Kind};
use std::io::{BufReader, BufWriter, Read, Seek, SeekFrom, Write};
use std::path::Path;

fn io_err(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Io {
        path: path.display().to_string(),
        message: one_line(&e.to_string()),
    }
}

/// A message on one line: its lines trimmed and joined by spaces, at most 300 characters.
fn one_line(msg: &str) -> String {
    let mut s = msg
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join(" ");
    if s.chars().count() > 300 {
        s = s.chars().take(297).collect::<String>() + "...";
    }
    s
}

/// An opened file: its header, positioned at the data, whose size has been checked.
struct Npy {
    header: Header,
    reader: BufReader<std::fs::File>,
}

/// Opens an `.npy` file, parses its header and checks that the file holds exactly the bytes
/// the header describes (module docs).
fn open(path: &Path) -> Result<Npy> {
    let mut f = std::fs::File::open(path).map_err(|e| io_err(path, e))?;
    let file_len = f.metadata().map_err(|e| io_err(path, e))?.len();
    let mut pre = Vec::with_capacity(12);
    (&mut f).take(12).read_to_end(&mut pre).map_err(|e| io_err(path, e))?;
    let (len, start) = header::preamble(&pre).map_err(|e| io_err(path, format!("not a valid .npy file: {e}")))?;
    if len > header::MAX_HEADER_LEN || (start + len) as u64 > file_len {
        return Err(io_err(path, "not a valid .npy file: truncated or oversized header"));
    }
    f.seek(SeekFrom::Start(start as u64)).map_err(|e| io_err(path, e))?;
    let mut text = vec![0u8; len];
    f.read_exact(&mut text).map_err(|e| io_err(path, e))?;
    let h =
        header::parse(&text, (start + len) as u64).map_err(|e| io_err(path, format!("not a valid .npy file: {e}")))?;
    let have = file_len - h.data_offset;
    if have != h.data_bytes {
        return Err(io_err(
            path,
            format!(
                "the header's shape {:?} needs {} bytes of data, the file holds {have}{}",
                h.shape,
                h.data_bytes,
                if have > h.data_bytes {
                    " (trailing bytes)"
                } else {
                    " (truncated)"
                }
            ),
        ));
    }
    if usize::try_from(h.data_bytes).is_err() {
        return Err(io_err(
            path,
            format!("the header's shape {:?} is too large for this machine", h.shape),
        ));
    }
    Ok(Npy {
        header: h,
        reader: BufReader::new(f),
    })
}

/// A plain-data element type with a byte swap.
trait Elem: bytemuck::Pod {
    fn swap(self) -> Self;
}
macro_rules! elem_int {
    ($($t:ty),*) => {$(impl Elem for $t { fn swap(self) -> Self { self.swap_bytes() } })*};
}
elem_int!(u8, u16, u32, u64, i8, i16, i32, i64);
impl Elem for f64 {
    fn swap(self) -> Self {
        f64::from_bits(self.to_bits().swap_bytes())
    }
}
impl Elem for f32 {
    fn swap(self) -> Self {
        f32::from_bits(self.to_bits().swap_bytes())
    }
}

/// Arrays of at least this many bytes are advised onto transparent huge pages ([`zeroed`]);
/// numpy's threshold for the same advice.
const HUGE_PAGE_MIN_BYTES: usize = 4 << 20;

/// `count` zeros for an array about to be filled. An array of at least
/// [`HUGE_PAGE_MIN_BYTES`] is advised onto transparent huge pages first (Linux,
/// `madvise(MADV_HUGEPAGE)`, as numpy does for its arrays): the allocation is fresh, untouched
/// memory (a large zeroed allocation is mapped, not written), so the pages are faulted in as
/// huge pages when the array is filled, and the passes over a large feature matrix then take
/// far fewer TLB misses. Where the system's THP mode is `never`, or off Linux, this is a plain
/// zeroed vector.
fn zeroed<T: bytemuck::Zeroable + Clone>(count: usize) -> Vec<T> {
    let v = vec![T::zeroed(); count];
    advise_huge_pages(&v);
    v
}

/// `madvise(MADV_HUGEPAGE)` on the whole pages inside `v`'s buffer, if it holds at least
/// [`HUGE_PAGE_MIN_BYTES`]. Best effort: an error (an old kernel, THP compiled out) is ignored,
/// and the kernel backs with huge pages only the aligned 2 MiB ranges of the advised range.
#[cfg(target_os = "linux")]
fn advise_huge_pages<T>(v: &[T]) {
    const PAGE: usize = 4096; // the smallest page size of the Linux targets; rounding to it is safe
    let bytes = std::mem::size_of_val(v);
    if bytes < HUGE_PAGE_MIN_BYTES {
        return;
    }
    let start = (v.as_ptr() as usize).next_multiple_of(PAGE);
    let end = (v.as_ptr() as usize + bytes) / PAGE * PAGE;
    if end > start {
        // SAFETY: `start..end` lies inside `v`'s live allocation. MADV_HUGEPAGE only sets a
        // flag on the mapping (how future faults, and khugepaged, back it): it neither reads
        // nor changes the contents, so `v` stays valid; the return value is ignored on purpose.
        let _ = unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge_pages<T>(_: &[T]) {}

/// The data as `T` (the caller has matched the dtype's kind and size to `T`): one bulk read
/// into a fresh array ([`zeroed`]: on huge pages when large), then a byte swap if the file's
/// byte order is not the machine's.
fn payload<T: Elem>(path: &Path, mut npy: Npy) -> Result<Vec<T>> {
    debug_assert_eq!(npy.header.dtype.size, std::mem::size_of::<T>());
    let count = usize::try_from(npy.header.count).map_err(|e| io_err(path, e))?;
    let mut v = zeroed::<T>(count);
    npy.reader
        .read_exact(bytemuck::cast_slice_mut(&mut v))
        .map_err(|e| io_err(path, format!("reading the data: {e}")))?;
    if npy.header.dtype.big_endian != cfg!(target_endian = "big") && npy.header.dtype.size > 1 {
        v.iter_mut().for_each(|x| *x = x.swap());
    }
    Ok(v)
}

/// The error of an array whose dtype its reader does not take: `path: dtype float16 ('<f2');
/// features must be float64 or float32 (convert with x.astype(np.float64))`, with `what` the
/// array's role and `needs` and `convert` what it takes and how to get it.
fn dtype_err(path: &Path, dtype: &Dtype, what: &str, needs: &str, convert: &str) -> Error {
    io_err(
        path,
        format!(
            "dtype {} ('{}'); {what} must be {needs} (convert with {convert})",
            dtype.name(),
            dtype.descr()
        ),
    )
}

/// The error of a float array (`what`: its role) of another dtype than float64 or float32.
fn float_dtype_err(path: &Path, dtype: &Dtype, what: &str, var: &str) -> Error {
    dtype_err(
        path,
        dtype,
        what,
        "float64 or float32",
        &format!("{var}.astype(np.float64)"),
    )
}

/// Reads numeric data as f64 (float32/float64 only); `what` and `var` name the array in the
/// error of another dtype (as [`float_dtype_err`]).
fn read_floats(path: &Path, npy: Npy, what: &str, var: &str) -> Result<Vec<f64>> {
    match (npy.header.dtype.kind, npy.header.dtype.size) {
        (Kind::Float, 8) => payload::<f64>(path, npy),
        (Kind::Float, 4) => Ok(widen_f32(&payload::<f32>(path, npy)?)),
        _ => Err(float_dtype_err(path, &npy.header.dtype, what, var)),
    }
}

/// A 2-D float matrix as row-major `(values, rows, cols)`, widened to `f64`.
pub fn read_matrix(path: impl AsRef<Path>) -> Result<(Vec<f64>, usize, usize)> {
    let (m, n, d) = read_matrix_keep(path)?;
    Ok(match m {
        Matrix::F64(v) => (v, n, d),
        Matrix::F32(v) => (widen_f32(&v), n, d),
    })
}

/// `f32` values widened to `f64`, into a fresh array ([`zeroed`]: on huge pages when large).
fn widen_f32(v: &[f32]) -> Vec<f64> {
    let mut out = zeroed::<f64>(v.len());
    for (o, &x) in out.iter_mut().zip(v) {
        *o = f64::from(x);
    }
    out
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
/// (half the memory; the kernels widen it to `f64` in registers as they read it).
pub fn read_matrix_keep(path: impl AsRef<Path>) -> Result<(Matrix, usize, usize)> {
    let path = path.as_ref();
    let npy = open(path)?;
    let (n, d, precision) = matrix_header(path, &npy.header)?;
    Ok((matrix_data(path, npy, n, d, precision)?, n, d))
}

/// The element type of a feature matrix: `float64` or `float32`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Precision {
    F64,
    F32,
}

/// The checks every reader of a feature matrix makes on its header, in this order: a 2-D shape,
/// then a `float64` or `float32` dtype. Returns `(n, d, precision)`.
fn matrix_header(path: &Path, h: &Header) -> Result<(usize, usize, Precision)> {
    let (n, d) = match h.shape[..] {
        [n, d] => (n as usize, d as usize),
        _ => {
            return Err(io_err(
                path,
                format!("expected a 2-D array (n × d), found shape {:?}", h.shape),
            ))
        }
    };
    let precision = match (h.dtype.kind, h.dtype.size) {
        (Kind::Float, 8) => Precision::F64,
        (Kind::Float, 4) => Precision::F32,
        _ => return Err(float_dtype_err(path, &h.dtype, "features", "x")),
    };
    Ok((n, d, precision))
}

/// The data of an opened matrix, with the `(n, d, precision)` that [`matrix_header`] returned
/// for it, row-major, in its stored precision.
fn matrix_data(path: &Path, npy: Npy, n: usize, d: usize, precision: Precision) -> Result<Matrix> {
    let fortran = npy.header.fortran_order;
    Ok(match precision {
        Precision::F64 => Matrix::F64(row_major(payload::<f64>(path, npy)?, n, d, fortran)),
        Precision::F32 => Matrix::F32(row_major(payload::<f32>(path, npy)?, n, d, fortran)),
    })
}

/// Column-major (Fortran) `n × d` values to row-major (into a fresh array, [`zeroed`]: on huge
/// pages when large); row-major values unchanged.
fn row_major<T: bytemuck::Pod>(v: Vec<T>, n: usize, d: usize, fortran: bool) -> Vec<T> {
    if !fortran {
        return v;
    }
    let mut r = zeroed::<T>(n * d);
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
    vector_len(path, &npy.header.shape)?;
    read_floats(path, npy, "a float vector", "v")
}

/// A 1-D label vector of any integer or bool dtype, as `u8`. Values outside `0..bound` are an
/// error naming the row (`bound ≤ 256`).
pub fn read_labels(path: impl AsRef<Path>, bound: u32) -> Result<Vec<u8>> {
    let path = path.as_ref();
    let npy = open(path)?;
    vector_len(path, &npy.header.shape)?;
    let wide = read_ints(path, npy, "labels")?;
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
    vector_len(path, &npy.header.shape)?;
    let wide = read_ints(path, npy, input)?;
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
    let shape = npy.header.shape.clone();
    let (n, k, d) = match shape[..] {
        [n, k, d] => (n as usize, k as usize, d as usize),
        _ => {
            return Err(io_err(
                path,
                format!("expected a 3-D array (n × K × d) of K-wise features, found shape {shape:?}"),
            ))
        }
    };
    if npy.header.fortran_order && [n, k, d].iter().filter(|&&s| s > 1).count() > 1 {
        return Err(io_err(
            path,
            "a Fortran-order 3-D array is not supported; save it in C order",
        ));
    }
    Ok((read_floats(path, npy, "features", "x")?, n, k, d))
}

/// K-wise labels: an integer array of shape `n` (the chosen alternative of each sample) or
/// `n × K` (a ranking per sample, best first), dtype `u8`, `u16`, `u32`, `u64`, `i8`, `i16`,
/// `i32` or `i64` (or bool). Returns the values as `u8` and the width (1 or `K`). Values outside
/// `0..k` are an [`Error::GroupData`] naming the sample (and position); the permutation check
/// is [`GroupView`](crate::data::GroupView)'s.
pub fn read_group_labels(path: impl AsRef<Path>, k: usize) -> Result<(Vec<u8>, usize)> {
    let path = path.as_ref();
    let npy = open(path)?;
    let shape = npy.header.shape.clone();
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
    if width > 1 && npy.header.fortran_order {
        return Err(io_err(
            path,
            "a Fortran-order ranking array is not supported; save it in C order",
        ));
    }
    let wide = read_ints(path, npy, "labels")?;
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

/// Integer or bool data of any width, as `i128`; `what` names the array (`labels`) in the error
/// of another dtype.
fn read_ints(path: &Path, npy: Npy, what: &str) -> Result<Vec<i128>> {
    let dtype = npy.header.dtype;
    let wide: Vec<i128> = match (dtype.kind, dtype.size) {
        (Kind::Bool | Kind::Uint, 1) => widen(payload::<u8>(path, npy)?),
        (Kind::Uint, 2) => widen(payload::<u16>(path, npy)?),
        (Kind::Uint, 4) => widen(payload::<u32>(path, npy)?),
        (Kind::Uint, 8) => widen(payload::<u64>(path, npy)?),
        (Kind::Int, 1) => widen(payload::<i8>(path, npy)?),
        (Kind::Int, 2) => widen(payload::<i16>(path, npy)?),
        (Kind::Int, 4) => widen(payload::<i32>(path, npy)?),
        (Kind::Int, 8) => widen(payload::<i64>(path, npy)?),
        _ => {
            return Err(dtype_err(
                path,
                &dtype,
                what,
                "an integer or bool type",
                "y.astype(np.int64)",
            ))
        }
    };
    Ok(wide)
}

fn widen<T: Into<i128>>(v: Vec<T>) -> Vec<i128> {
    v.into_iter().map(Into::into).collect()
}

/// An element type the writers produce, with its dtype.
trait Write1: Elem {
    const DTYPE: Dtype;
}
macro_rules! write1 {
    ($($t:ty => $k:ident),*) => {$(impl Write1 for $t {
        const DTYPE: Dtype = Dtype { kind: Kind::$k, size: std::mem::size_of::<$t>(), big_endian: false };
    })*};
}
write1!(f64 => Float, u32 => Uint, u8 => Uint, i64 => Int);

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

/// Writes `data` as a little-endian C-order array of `shape` (the header as NumPy writes it).
fn write_any<T: Write1>(path: &Path, data: &[T], shape: &[usize]) -> Result<()> {
    let count = shape.iter().try_fold(1usize, |a, &s| a.checked_mul(s));
    if count != Some(data.len()) {
        return Err(Error::Shape(format!(
            "cannot write {} values as shape {shape:?}",
            data.len()
        )));
    }
    let shape: Vec<u64> = shape.iter().map(|&s| s as u64).collect();
    let f = std::fs::File::create(path).map_err(|e| io_err(path, e))?;
    let mut w = BufWriter::new(f);
    w.write_all(&header::format(T::DTYPE, &shape))
        .map_err(|e| io_err(path, e))?;
    if cfg!(target_endian = "little") {
        w.write_all(bytemuck::cast_slice(data)).map_err(|e| io_err(path, e))?;
    } else {
        for x in data {
            w.write_all(bytemuck::bytes_of(&x.swap()))
                .map_err(|e| io_err(path, e))?;
        }
    }
    w.flush().map_err(|e| io_err(path, e))
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

    /// Arrays above the huge-page threshold (advised before they are filled) read the same
    /// values in every layout that goes through a buffer: C and Fortran order, either byte
    /// order, f64 and f32 (kept, and widened).
    #[test]
    fn large_advised_arrays_read_the_same_values() {
        let dir = std::env::temp_dir().join(format!("privpref-npy-large-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("m.npy");
        let (n, d) = (1100, 700); // 6.2 MB of f64, 3.1 MB of f32 (its f64 copy: 6.2 MB)
        let x: Vec<f64> = (0..n * d).map(|i| ((i * 7919) % 10007) as f64 / 13.0 - 300.0).collect();
        let xt: Vec<f64> = (0..n * d).map(|k| x[(k % n) * d + k / n]).collect(); // column-major
        for (fortran, vals) in [(false, &x), (true, &xt)] {
            for big in [false, true] {
                let bytes: Vec<u8> = if big {
                    vals.iter().flat_map(|v| v.to_be_bytes()).collect()
                } else {
                    vals.iter().flat_map(|v| v.to_le_bytes()).collect()
                };
                let descr = if big { ">f8" } else { "<f8" };
                let file = npy_bytes(descr, &format!("({n}, {d})"), &bytes);
                let file = if fortran { to_fortran_header(file) } else { file };
                std::fs::write(&p, file).unwrap();
                let (got, gn, gd) = read_matrix(&p).unwrap();
                assert_eq!((gn, gd), (n, d));
                assert!(
                    got.iter().zip(&x).all(|(a, b)| a.to_bits() == b.to_bits()),
                    "{descr} {fortran}"
                );
            }
        }
        let x32: Vec<f32> = x.iter().map(|&v| v as f32).collect();
        let bytes: Vec<u8> = x32.iter().flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(&p, npy_bytes("<f4", &format!("({n}, {d})"), &bytes)).unwrap();
        assert_eq!(read_matrix_keep(&p).unwrap().0, Matrix::F32(x32.clone()));
        let wide = read_matrix(&p).unwrap().0;
        assert!(wide
            .iter()
            .zip(&x32)
            .all(|(a, &b)| a.to_bits() == f64::from(b).to_bits()));
        std::fs::remove_dir_all(&dir).ok();
    }

    /// The same file with `'fortran_order': True` (same header length).
    fn to_fortran_header(mut b: Vec<u8>) -> Vec<u8> {
        let (from, to) = (b"'fortran_order': False,", b"'fortran_order': True, ");
        let at = b.windows(from.len()).position(|w| w == from).unwrap();
        b[at..at + from.len()].copy_from_slice(to);
        b
    }

    /// The advice reaches the kernel: the mapping holding a large zeroed array is flagged for
    /// huge pages (`hg` in its VmFlags). Skipped where the kernel has no THP.
    #[cfg(target_os = "linux")]
    #[test]
    fn large_arrays_are_advised_onto_huge_pages() {
        if !std::path::Path::new("/sys/kernel/mm/transparent_hugepage/enabled").exists() {
            return;
        }
        let v = zeroed::<f64>(3 << 20); // 24 MiB
        let mid = v.as_ptr() as usize + (12 << 20);
        let smaps = std::fs::read_to_string("/proc/self/smaps").unwrap();
        let mut inside = false;
        let mut flags = None;
        for line in smaps.lines() {
            if let Some((range, _)) = line.split_once(' ') {
                if let Some((lo, hi)) = range.split_once('-') {
                    if let (Ok(lo), Ok(hi)) = (usize::from_str_radix(lo, 16), usize::from_str_radix(hi, 16)) {
                        inside = (lo..hi).contains(&mid);
                        continue;
                    }
                }
            }
            if inside {
                if let Some(f) = line.strip_prefix("VmFlags:") {
                    flags = Some(f.split_whitespace().map(str::to_string).collect::<Vec<_>>());
                }
            }
        }
        let flags = flags.expect("the array's mapping in /proc/self/smaps");
        assert!(flags.iter().any(|f| f == "hg"), "VmFlags {flags:?}");
        assert!(v.iter().all(|&x| x == 0.0));
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
        // A shape whose product overflows (2^32 × 2^32 × 8 bytes) is a clean error, in debug too.
        std::fs::write(&p, npy_bytes("<f8", "(4294967296, 4294967296)", &short)).unwrap();
        let e = read_matrix(&p).unwrap_err();
        assert!(e.to_string().contains("64 bits"), "{e}");
        // Trailing bytes after the payload are refused (labels and vectors too).
        let long: Vec<u8> = vals.iter().chain(&[1.0]).flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(&p, npy_bytes("<f8", "(3, 2)", &long)).unwrap();
        let e = read_matrix(&p).unwrap_err();
        assert!(e.to_string().contains("trailing bytes"), "{e}");
        std::fs::write(&p, npy_bytes("|u1", "(3,)", &[0, 1, 1, 0])).unwrap();
        assert!(read_labels(&p, 2).unwrap_err().to_string().contains("trailing bytes"));
        std::fs::write(&p, npy_bytes("<i8", "(1000000000000000000,)", &[0; 8])).unwrap();
        assert!(read_labels(&p, 2).is_err());
        // A malformed header is one line.
        let mut bad = npy_bytes("<f8", "(3, 2)", &long);
        bad[20] = b'@';
        std::fs::write(&p, &bad).unwrap();
        let e = read_matrix(&p).unwrap_err().to_string();
        assert!(!e.contains('\n') && e.contains("not a valid .npy file"), "{e}");
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
