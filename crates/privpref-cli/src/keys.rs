//! The key pair that signs provenance side-cars: where it lives, how it is created and how its
//! permissions are checked.
//!
//! A key directory holds `signing-key.pem` (the Ed25519 secret key, PKCS#8 PEM, mode 0600) and
//! `signing-key.pub.pem` (its public key, SPKI PEM). The default directory is
//! `$PRIVPREF_KEY_DIR`, else `$XDG_CONFIG_HOME/privpref`, else `$HOME/.config/privpref`.
//!
//! * `privpref keygen [--dir DIR]` creates a pair (never replacing one).
//! * `privatize` signs with `--signing-key PATH`, else with the default directory's secret key,
//!   creating the pair on first use (directory 0700, secret 0600) and saying so on stderr.
//! * `fit` trusts the public keys of `--trusted-key PATH` (repeatable), else the default
//!   directory's public key when there is one.
//!
//! A secret key file that the group or others may read or write, a trusted public key they may
//! write, or a key directory they may write to (unless it is sticky, like `/tmp`), is refused:
//! the key could have been read or replaced.

use privpref::privacy::record::{SigningKey, TrustedKey};
use privpref::Error;
use std::fs;
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

/// The secret key's file name in a key directory.
pub const SECRET: &str = "signing-key.pem";
/// The public key's file name in a key directory.
pub const PUBLIC: &str = "signing-key.pub.pem";

fn io(path: &Path, message: impl Into<String>) -> Error {
    Error::Io {
        path: path.display().to_string(),
        message: message.into(),
    }
}

/// The default key directory: `$PRIVPREF_KEY_DIR`, `$XDG_CONFIG_HOME/privpref` or
/// `$HOME/.config/privpref`.
///
/// # Errors
/// When none of the three variables is set.
pub fn default_dir() -> Result<PathBuf, Error> {
    let var = |name: &str| std::env::var_os(name).filter(|v| !v.is_empty()).map(PathBuf::from);
    var("PRIVPREF_KEY_DIR")
        .or_else(|| var("XDG_CONFIG_HOME").map(|d| d.join("privpref")))
        .or_else(|| var("HOME").map(|d| d.join(".config").join("privpref")))
        .ok_or_else(|| {
            Error::param(
                "signing-key",
                "no key directory: set PRIVPREF_KEY_DIR (or HOME), or pass --signing-key / --trusted-key",
            )
        })
}

/// Refuses a file or directory whose mode grants the group or others what `mask` names. A
/// sticky directory (such as `/tmp`) is accepted: others cannot replace the files in it.
fn check_mode(path: &Path, mask: u32, what: &str, fix: &str) -> Result<(), Error> {
    let meta = fs::metadata(path).map_err(|e| io(path, e.to_string()))?;
    if meta.is_dir() && meta.permissions().mode() & 0o1000 != 0 {
        return Ok(());
    }
    let mode = meta.permissions().mode() & 0o777;
    if mode & mask != 0 {
        return Err(io(
            path,
            format!("{what} has mode {mode:04o}, which lets other users read or replace it; {fix}"),
        ));
    }
    Ok(())
}

/// Reads the secret key at `path`, after checking that only its owner can read or write it and
/// that its directory is not writable by others.
///
/// # Errors
/// Loose permissions, I/O errors, a file that is not an Ed25519 PKCS#8 PEM key.
pub fn load_signing_key(path: &Path) -> Result<SigningKey, Error> {
    check_mode(path, 0o077, "the signing key", &format!("chmod 600 {}", path.display()))?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        check_mode(
            dir,
            0o022,
            "the signing key's directory",
            &format!("chmod go-w {}", dir.display()),
        )?;
    }
    let pem = fs::read_to_string(path).map_err(|e| io(path, e.to_string()))?;
    SigningKey::from_pem(&pem).map_err(|e| io(path, e.to_string()))
}

/// Reads a trusted public key (SPKI PEM), after checking that others cannot replace it (the
/// file and its directory not writable by the group or others).
///
/// # Errors
/// Loose permissions, I/O errors, a file that is not an Ed25519 SPKI PEM key.
pub fn load_trusted_key(path: &Path) -> Result<TrustedKey, Error> {
    check_mode(
        path,
        0o022,
        "the trusted key",
        &format!("chmod go-w {}", path.display()),
    )?;
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        check_mode(
            dir,
            0o022,
            "the trusted key's directory",
            &format!("chmod go-w {}", dir.display()),
        )?;
    }
    let pem = fs::read_to_string(path).map_err(|e| io(path, e.to_string()))?;
    TrustedKey::from_pem(&pem).map_err(|e| io(path, e.to_string()))
}

/// Writes `text` to `path` with `mode`, atomically and only if `path` does not exist: a
/// temporary file in the same directory, hard-linked to `path` (which fails if it exists).
/// Returns `false` when `path` already existed (another process created it first).
fn create_exclusive(path: &Path, text: &str, mode: u32) -> Result<bool, Error> {
    let tmp = path.with_extension(format!("tmp.{}", std::process::id()));
    let _ = fs::remove_file(&tmp);
    let mut f = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(&tmp)
        .map_err(|e| io(&tmp, e.to_string()))?;
    let written = f.write_all(text.as_bytes()).and_then(|()| f.sync_all());
    drop(f);
    let linked = written.and_then(|()| fs::hard_link(&tmp, path));
    let _ = fs::remove_file(&tmp);
    match linked {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(io(path, e.to_string())),
    }
}

/// Creates `dir` (mode 0700) if it does not exist.
fn ensure_dir(dir: &Path) -> Result<(), Error> {
    if !dir.exists() {
        fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)
            .map_err(|e| io(dir, format!("cannot create the key directory: {e}")))?;
    }
    Ok(())
}

/// A new key pair in `dir`: the secret key (0600) and the public key beside it. Never replaces
/// an existing key.
///
/// # Errors
/// A key already in `dir`; I/O errors.
pub fn keygen(dir: &Path) -> Result<(SigningKey, PathBuf, PathBuf), Error> {
    ensure_dir(dir)?;
    let (secret, public) = (dir.join(SECRET), dir.join(PUBLIC));
    for p in [&secret, &public] {
        if p.exists() {
            return Err(io(
                p,
                "a key is already there; keygen never replaces a key (move it away first, or choose another --dir)",
            ));
        }
    }
    let key = SigningKey::generate()?;
    if !create_exclusive(&secret, &key.to_pem(), 0o600)? {
        return Err(io(
            &secret,
            "a key was created there meanwhile; keygen never replaces a key",
        ));
    }
    if !create_exclusive(&public, &key.trusted_key().to_pem(), 0o644)? {
        return Err(io(&public, "a public key was created there meanwhile"));
    }
    Ok((key, secret, public))
}

/// The key `privatize` signs with: `explicit`, else the default directory's, created on first
/// use. Returns the key, its path, and whether it was just created.
///
/// # Errors
/// As [`load_signing_key`] and [`default_dir`]; I/O errors creating the pair.
pub fn signing_key(explicit: Option<&Path>) -> Result<(SigningKey, PathBuf, bool), Error> {
    if let Some(p) = explicit {
        return Ok((load_signing_key(p)?, p.to_path_buf(), false));
    }
    let dir = default_dir()?;
    let secret = dir.join(SECRET);
    let mut created = false;
    if !secret.exists() {
        ensure_dir(&dir)?;
        let key = SigningKey::generate()?;
        // Several ranks of one mpirun may race here: one links its key, the others read it.
        created = create_exclusive(&secret, &key.to_pem(), 0o600)?;
    }
    let key = load_signing_key(&secret)?;
    let public = dir.join(PUBLIC);
    if !public.exists() {
        create_exclusive(&public, &key.trusted_key().to_pem(), 0o644)?;
    }
    Ok((key, secret, created))
}

/// The keys `fit` trusts: those of `explicit` (each must read), else the default directory's
/// public key when it exists (none otherwise).
///
/// # Errors
/// An explicit key that cannot be read.
pub fn trusted_keys(explicit: &[PathBuf]) -> Result<Vec<(TrustedKey, PathBuf)>, Error> {
    if !explicit.is_empty() {
        return explicit.iter().map(|p| Ok((load_trusted_key(p)?, p.clone()))).collect();
    }
    let Ok(dir) = default_dir() else { return Ok(Vec::new()) };
    let public = dir.join(PUBLIC);
    if public.exists() {
        Ok(vec![(load_trusted_key(&public)?, public)])
    } else {
        Ok(Vec::new())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tmp(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("privpref-keys-{name}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        d
    }

    #[test]
    fn keygen_writes_a_private_secret_and_never_replaces_it() {
        let d = tmp("keygen");
        let (key, secret, public) = keygen(&d).unwrap();
        assert_eq!(fs::metadata(&secret).unwrap().permissions().mode() & 0o777, 0o600);
        assert_eq!(fs::metadata(&d).unwrap().permissions().mode() & 0o777, 0o700);
        assert_eq!(load_signing_key(&secret).unwrap().id(), key.id());
        assert_eq!(load_trusted_key(&public).unwrap(), key.trusted_key());
        let before = fs::read(&secret).unwrap();
        assert!(keygen(&d).is_err());
        assert_eq!(fs::read(&secret).unwrap(), before);
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn loose_permissions_are_refused() {
        let d = tmp("perms");
        let (_, secret, _) = keygen(&d).unwrap();
        fs::set_permissions(&secret, fs::Permissions::from_mode(0o644)).unwrap();
        let e = load_signing_key(&secret).unwrap_err().to_string();
        assert!(e.contains("mode 0644") && e.contains("chmod 600"), "{e}");
        fs::set_permissions(&secret, fs::Permissions::from_mode(0o600)).unwrap();
        fs::set_permissions(&d, fs::Permissions::from_mode(0o777)).unwrap();
        let e = load_signing_key(&secret).unwrap_err().to_string();
        assert!(e.contains("directory") && e.contains("go-w"), "{e}");
        let public = d.join(PUBLIC);
        let e = load_trusted_key(&public).unwrap_err().to_string();
        assert!(e.contains("trusted key's directory"), "{e}");
        fs::set_permissions(&d, fs::Permissions::from_mode(0o700)).unwrap();
        assert!(load_signing_key(&secret).is_ok());
        fs::set_permissions(&public, fs::Permissions::from_mode(0o666)).unwrap();
        let e = load_trusted_key(&public).unwrap_err().to_string();
        assert!(e.contains("mode 0666") && e.contains("go-w"), "{e}");
        fs::remove_dir_all(&d).unwrap();
    }

    #[test]
    fn exclusive_creation_keeps_the_first_file() {
        let d = tmp("excl");
        fs::create_dir_all(&d).unwrap();
        let p = d.join("f");
        assert!(create_exclusive(&p, "first", 0o600).unwrap());
        assert!(!create_exclusive(&p, "second", 0o600).unwrap());
        assert_eq!(fs::read_to_string(&p).unwrap(), "first");
        assert_eq!(fs::read_dir(&d).unwrap().count(), 1, "no temporary file left");
        fs::remove_dir_all(&d).unwrap();
    }
}
