//! Output files written whole or not at all: each is written to a temporary file in its own
//! directory (`.NAME.PID.tmp`), then renamed over its final name, so a run that fails or is
//! killed midway leaves either the complete new file or whatever was there before, never a
//! half-written one. (A killed run may leave the hidden temporary file behind. There is no
//! `fsync`: the guarantee covers a killed process, not a power failure.)
//!
//! A path that exists and is not a regular file (a symbolic link, `/dev/stdout`, a pipe) is
//! written in place, as before: renaming over it would replace the link or the device.

use privpref::Error;
use std::path::{Path, PathBuf};

fn io(path: &Path, e: impl std::fmt::Display) -> Error {
    Error::Io {
        path: path.display().to_string(),
        message: e.to_string(),
    }
}

/// The temporary file for `path`, in its directory; `None` when `path` has no file name or
/// exists as something other than a regular file (write it in place).
fn temp_for(path: &Path) -> Option<PathBuf> {
    let name = path.file_name()?;
    match std::fs::symlink_metadata(path) {
        Ok(m) if !m.file_type().is_file() => return None,
        _ => {}
    }
    let tmp = format!(".{}.{}.tmp", name.to_string_lossy(), std::process::id());
    Some(path.with_file_name(tmp))
}

/// Writes the file `path` by calling `write` on a temporary path next to it, then renames the
/// result to `path` (module docs). On failure the temporary file is removed, `path` is left as
/// it was, and an I/O error names `path`.
pub fn write_with(path: &Path, write: impl FnOnce(&Path) -> Result<(), Error>) -> Result<(), Error> {
    let Some(tmp) = temp_for(path) else {
        return write(path);
    };
    let res = write(&tmp).and_then(|()| std::fs::rename(&tmp, path).map_err(|e| io(path, e)));
    if res.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    res.map_err(|e| match e {
        Error::Io { message, .. } => io(path, message),
        e => e,
    })
}

/// Writes `bytes` to the file `path`, whole or not at all ([`write_with`]).
pub fn write_bytes(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    write_with(path, |tmp| std::fs::write(tmp, bytes).map_err(|e| io(tmp, e)))
}
