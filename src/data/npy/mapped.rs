//! Memory-mapped feature matrices (feature `mmap`): [`MappedMatrix`] maps the data of a `.npy`
//! file read-only and lends it as [`Features`]; [`load_matrix`] maps when the layout allows and
//! otherwise reads a copy. The header is parsed and checked by the same strict reader as
//! [`read_matrix_keep`](super::read_matrix_keep), with the same messages, before anything is
//! mapped.

use super::{io_err, matrix_data, matrix_header, open, sigbus, Matrix, Npy, Precision};
use crate::data::Features;
use crate::error::Result;
use std::path::Path;

/// A 2-D `float64` or `float32` `.npy` matrix whose data are memory-mapped read-only: the
/// features are the file's own bytes, not a copy, and only the pages a pass touches are read
/// from storage.
///
/// **Access pattern.** The exact solvers stream the rows in order, pass after pass (each pass
/// in fixed blocks of consecutive rows, spread over the worker threads), so the map is advised
/// sequential. A file that fits in free memory is read from storage once and then served from
/// the page cache at memory speed; a file larger than RAM is read again on every pass, at the
/// speed of the disk and the page cache, instead of failing to load. (SGD with a shuffled order
/// visits the rows at random: on a file larger than RAM each step then waits for its pages.)
/// Keep such files on a local SSD (a network file system serves every pass over the network)
/// and leave memory free for the page cache.
///
/// **The file must not change while it is mapped.** The slices that
/// [`features`](MappedMatrix::features) lends are the file's pages: if another process writes
/// to the file, the values change under the borrow (unnoticed), and if it truncates the file,
/// reading the lost pages raises `SIGBUS`: by default the process dies by that signal with no
/// message; after [`install_sigbus_handler`](super::install_sigbus_handler) (the `privpref`
/// binary installs it) it ends with exit status 1 and one line on standard error naming the
/// file. Nothing in this library writes to it; the caller
/// keeps the file unmodified and at its length until the `MappedMatrix` is dropped (write a new
/// file and rename it over the old one, which leaves an open map on the old data).
///
/// Mapping needs a layout the kernels can read in place: C (row-major) order (or a single row
/// or column, the same bytes in either order), the machine's byte order, and data that start at
/// a multiple of the element size (NumPy aligns them to 64 bytes). A file in another layout is
/// an [`Error::Io`](crate::Error::Io) saying why; [`load_matrix`] reads a copy instead.
#[derive(Debug)]
pub struct MappedMatrix {
    /// The map's entry in the `SIGBUS` registry; declared first, so it is dropped (the range
    /// unregistered) before the map is unmapped.
    _registration: Option<sigbus::Registration>,
    map: memmap2::Mmap,
    /// Bytes before the data.
    offset: usize,
    precision: Precision,
    n: usize,
    d: usize,
}

/// What an attempt to map a matrix found: the map, or the opened file with the reason it cannot
/// be mapped (read it with [`matrix_data`]).
enum Attempt {
    Mapped(MappedMatrix),
    Unmappable {
        npy: Npy,
        n: usize,
        d: usize,
        precision: Precision,
        why: String,
    },
}

/// Opens `path`, checks its header as the reader does (exact size, a 2-D shape, a float dtype)
/// and maps its data when the layout allows ([`MappedMatrix`]).
fn attempt(path: &Path) -> Result<Attempt> {
    let npy = open(path)?;
    let (n, d, precision) = matrix_header(path, &npy.header)?;
    let (dtype, data_offset, data_bytes) = (npy.header.dtype, npy.header.data_offset, npy.header.data_bytes);
    let why = if dtype.big_endian != cfg!(target_endian = "big") {
        Some(format!(
            "its data ({}) are not in this machine's byte order",
            dtype.descr()
        ))
    } else if npy.header.fortran_order && n > 1 && d > 1 {
        Some("its data are in Fortran (column-major) order".to_string())
    } else {
        None
    };
    if let Some(why) = why {
        return Ok(Attempt::Unmappable {
            npy,
            n,
            d,
            precision,
            why,
        });
    }
    // SAFETY: `Mmap::map` is unsafe because the mapped bytes are shared with the file: a write
    // by another process changes them under the slices `features` lends, and a truncation
    // turns an access into `SIGBUS`. The map is read-only and nothing in this crate writes to
    // the file; `MappedMatrix` documents that the caller must keep the file unmodified while
    // it is mapped. Every bit pattern is a valid `f64`/`f32`, so the values themselves cannot
    // be invalid.
    let mapped = unsafe { memmap2::Mmap::map(npy.reader.get_ref()) };
    let map = match mapped {
        Ok(map) => map,
        Err(e) => {
            return Ok(Attempt::Unmappable {
                npy,
                n,
                d,
                precision,
                why: format!("the operating system refused to map it ({e})"),
            })
        }
    };
    // The header and size were checked on the open file; a file that changed size since is
    // refused rather than read past its end.
    let expected = data_offset + data_bytes;
    if map.len() as u64 != expected {
        return Err(io_err(
            path,
            format!(
                "the file changed while it was opened: {} bytes mapped, the header describes {expected}",
                map.len()
            ),
        ));
    }
    // `open` checked that the data fit in `usize`, so the offset does too.
    let offset = data_offset as usize;
    let bytes = &map[offset..];
    let aligned = match precision {
        Precision::F64 => bytemuck::try_cast_slice::<u8, f64>(bytes).is_ok(),
        Precision::F32 => bytemuck::try_cast_slice::<u8, f32>(bytes).is_ok(),
    };
    if !aligned {
        return Ok(Attempt::Unmappable {
            npy,
            n,
            d,
            precision,
            why: format!(
                "its data start at byte {offset}, which is not a multiple of {} (the size of {})",
                dtype.size,
                dtype.descr()
            ),
        });
    }
    #[cfg(unix)]
    {
        // A hint to read ahead and drop pages behind; a kernel that refuses it maps all the
        // same, so its error is ignored.
        let _ = map.advise(memmap2::Advice::Sequential);
    }
    let _registration = sigbus::register(map.as_ptr() as usize, map.len(), path);
    Ok(Attempt::Mapped(MappedMatrix {
        _registration,
        map,
        offset,
        precision,
        n,
        d,
    }))
}

impl MappedMatrix {
    /// Maps the `n × d` matrix of the `.npy` file at `path` (see the type's docs).
    ///
    /// # Errors
    /// [`Error::Io`](crate::Error::Io), with the reader's messages, for a file that is not a
    /// valid 2-D `float64`/`float32` `.npy` array (a malformed or lying header, truncated data,
    /// trailing bytes, a shape whose size overflows, another dtype or number of dimensions);
    /// and, naming the reason, for a valid file that cannot be mapped in place: Fortran order,
    /// the other byte order, data not aligned to the element size, or a file system that does
    /// not support mapping.
    pub fn open(path: impl AsRef<Path>) -> Result<MappedMatrix> {
        let path = path.as_ref();
        match attempt(path)? {
            Attempt::Mapped(m) => Ok(m),
            Attempt::Unmappable { why, .. } => Err(io_err(
                path,
                format!("cannot be memory-mapped: {why} (load_matrix reads a copy instead)"),
            )),
        }
    }

    /// Number of rows `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of columns `d`.
    pub fn d(&self) -> usize {
        self.d
    }

    /// The `n·d` values, row-major, in their stored precision, borrowed from the map (no copy).
    pub fn features(&self) -> Features<'_> {
        // `attempt` checked that these bytes are aligned for the element type and that their
        // length is `n·d` elements, so the casts cannot fail.
        let bytes = &self.map[self.offset..];
        match self.precision {
            Precision::F64 => Features::F64(bytemuck::cast_slice(bytes)),
            Precision::F32 => Features::F32(bytemuck::cast_slice(bytes)),
        }
    }

    /// Unmaps the file, dropping its page-table entries in parallel on the current rayon pool
    /// first. The kernel tears a mapping down page by page, under one lock: for a large map
    /// whose pages were all touched (800 MB: about 25 ms on one core) that is a visible part of
    /// a short run. `MADV_DONTNEED` on disjoint parts runs concurrently; on this read-only
    /// shared file mapping it only drops the entries (the file's pages stay in the page cache,
    /// and nothing is lost: an access would fault the same file pages back in, but `self` is
    /// consumed, so none can follow).
    pub fn release(self) {
        #[cfg(unix)]
        {
            use rayon::prelude::*;
            const PART: usize = 32 << 20;
            let len = self.map.len();
            (0..len.div_ceil(PART)).into_par_iter().for_each(|k| {
                let (at, part) = (k * PART, PART.min(len - k * PART));
                // SAFETY: a read-only MAP_SHARED file mapping: MADV_DONTNEED drops page-table
                // entries only; the file's contents are unchanged and any later access would
                // read them again (no borrow of the map outlives `self`, consumed here). A
                // failure leaves the entries to the unmapping below.
                let _ = unsafe {
                    self.map
                        .unchecked_advise_range(memmap2::UncheckedAdvice::DontNeed, at, part)
                };
            });
        }
        drop(self);
    }
}

/// A 2-D `float64` or `float32` matrix from [`load_matrix`]: memory-mapped
/// ([`MappedMatrix`]) when the file's layout allows, otherwise read into memory as by
/// [`read_matrix_keep`](super::read_matrix_keep). Either way its features are row-major in the
/// stored precision, with the same values.
#[derive(Debug)]
pub struct LoadedMatrix {
    data: Loaded,
    n: usize,
    d: usize,
}

#[derive(Debug)]
enum Loaded {
    Mapped(MappedMatrix),
    Read(Matrix),
}

impl LoadedMatrix {
    /// Number of rows `n`.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Number of columns `d`.
    pub fn d(&self) -> usize {
        self.d
    }

    /// The `n·d` values, row-major, in their stored precision.
    pub fn features(&self) -> Features<'_> {
        match &self.data {
            Loaded::Mapped(m) => m.features(),
            Loaded::Read(Matrix::F64(v)) => Features::F64(v),
            Loaded::Read(Matrix::F32(v)) => Features::F32(v),
        }
    }

    /// Drops the matrix; a mapped one is unmapped in parallel ([`MappedMatrix::release`]).
    pub fn release(self) {
        match self.data {
            Loaded::Mapped(m) => m.release(),
            Loaded::Read(m) => drop(m),
        }
    }

    /// Whether the features are the mapped file (`true`) or a copy read into memory (`false`).
    pub fn is_mapped(&self) -> bool {
        matches!(self.data, Loaded::Mapped(_))
    }
}

/// The `n × d` matrix of the `.npy` file at `path`: memory-mapped when its layout allows (see
/// [`MappedMatrix`], whose caveat then applies: the file must not change while the result
/// lives), otherwise (Fortran order, the other byte order, unaligned data, a file system
/// without mapping) read into memory, transposed or byte-swapped as by
/// [`read_matrix_keep`](super::read_matrix_keep). [`LoadedMatrix::is_mapped`] says which.
///
/// # Errors
/// [`Error::Io`](crate::Error::Io) for a file that is not a valid 2-D `float64`/`float32`
/// `.npy` array, with the reader's messages.
pub fn load_matrix(path: impl AsRef<Path>) -> Result<LoadedMatrix> {
    let path = path.as_ref();
    Ok(match attempt(path)? {
        Attempt::Mapped(m) => LoadedMatrix {
            n: m.n,
            d: m.d,
            data: Loaded::Mapped(m),
        },
        Attempt::Unmappable {
            npy, n, d, precision, ..
        } => LoadedMatrix {
            data: Loaded::Read(matrix_data(path, npy, n, d, precision)?),
            n,
            d,
        },
    })
}
