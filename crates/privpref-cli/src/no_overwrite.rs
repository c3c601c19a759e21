//! No output of a command may be one of its inputs: `fit --x x.npy --out x.npy` would replace
//! the features with the JSON. Before any work, every output path that already exists is
//! compared with every input by file identity (device and inode on Unix, so a hard link, a
//! symbolic link or another spelling of the same path is caught; the canonical path elsewhere),
//! and two outputs of one command must be different files too.

use privpref::Error;
use std::path::{Path, PathBuf};

/// The identity of an existing file, or `None` when `path` does not exist (then it is no input).
#[cfg(unix)]
fn identity(path: &Path) -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

#[cfg(not(unix))]
fn identity(path: &Path) -> Option<PathBuf> {
    std::fs::canonicalize(path).ok()
}

/// The absolute, lexically normalised form of a path that may not exist yet (for two outputs
/// that are both new files).
fn spelled(path: &Path) -> PathBuf {
    let abs = std::env::current_dir()
        .map(|d| d.join(path))
        .unwrap_or_else(|_| path.to_path_buf());
    let mut out = PathBuf::new();
    for c in abs.components() {
        match c {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            c => out.push(c),
        }
    }
    out
}

/// The inputs and outputs of one command, each named by its option (`--x`, `--out`).
#[derive(Default)]
pub struct Files {
    inputs: Vec<(&'static str, PathBuf)>,
    outputs: Vec<(&'static str, PathBuf)>,
}

impl Files {
    /// Records an input file (ignored when `None`).
    pub fn input(mut self, option: &'static str, path: Option<&Path>) -> Self {
        if let Some(p) = path {
            self.inputs.push((option, p.to_path_buf()));
        }
        self
    }

    /// Records an output file (ignored when `None`).
    pub fn output(mut self, option: &'static str, path: Option<PathBuf>) -> Self {
        if let Some(p) = path {
            self.outputs.push((option, p));
        }
        self
    }

    /// `Ok` when no output is an input or another output; otherwise a one-line error naming both.
    pub fn check(&self) -> Result<(), Error> {
        let inputs: Vec<_> = self.inputs.iter().map(|(name, p)| (name, identity(p))).collect();
        let outputs: Vec<_> = self.outputs.iter().map(|(name, p)| (name, p, identity(p))).collect();
        for (i, (out_name, out, id)) in outputs.iter().enumerate() {
            if let Some((in_name, _)) = inputs.iter().find(|(_, input)| id.is_some() && input == id) {
                return Err(refusal(out_name, out, &format!("the input {in_name}")));
            }
            for (other_name, other, other_id) in &outputs[..i] {
                let same = match (id, other_id) {
                    (Some(a), Some(b)) => a == b,
                    _ => spelled(out) == spelled(other),
                };
                if same {
                    return Err(refusal(out_name, out, &format!("the output {other_name}")));
                }
            }
        }
        Ok(())
    }
}

fn refusal(name: &'static str, path: &Path, what: &str) -> Error {
    Error::param(
        name.trim_start_matches("--"),
        format!(
            "{} is also {what}: an output never replaces an input or another output",
            path.display()
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dir() -> PathBuf {
        let d = std::env::temp_dir().join(format!("privpref-no-overwrite-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn an_output_that_is_an_input_is_refused_by_any_spelling() {
        let d = dir();
        let x = d.join("x.npy");
        std::fs::write(&x, b"features").unwrap();
        let same = [
            x.clone(),
            d.join(".").join("x.npy"),
            d.join("sub").join("..").join("x.npy"),
        ];
        std::fs::create_dir_all(d.join("sub")).unwrap();
        for out in same {
            let e = Files::default()
                .input("--x", Some(&x))
                .output("--out", Some(out))
                .check()
                .unwrap_err();
            assert!(e.to_string().contains("is also the input --x"), "{e}");
        }
        #[cfg(unix)]
        {
            let link = d.join("link.npy");
            let hard = d.join("hard.npy");
            let _ = std::fs::remove_file(&link);
            let _ = std::fs::remove_file(&hard);
            std::os::unix::fs::symlink(&x, &link).unwrap();
            std::fs::hard_link(&x, &hard).unwrap();
            for out in [link, hard] {
                assert!(Files::default()
                    .input("--x", Some(&x))
                    .output("--out", Some(out))
                    .check()
                    .is_err());
            }
        }
        // A different file, or one that does not exist yet, is fine.
        let other = d.join("fit.json");
        assert!(Files::default()
            .input("--x", Some(&x))
            .output("--out", Some(other.clone()))
            .check()
            .is_ok());
        std::fs::write(&other, b"old result").unwrap();
        assert!(Files::default()
            .input("--x", Some(&x))
            .output("--out", Some(other))
            .check()
            .is_ok());
        assert_eq!(std::fs::read(&x).unwrap(), b"features");
    }

    #[test]
    fn two_outputs_may_not_be_one_file_even_before_either_exists() {
        let d = dir();
        let a = d.join("new-result.json");
        let e = Files::default()
            .output("--out", Some(a.clone()))
            .output("--actions-out", Some(d.join(".").join("new-result.json")))
            .check()
            .unwrap_err();
        assert!(e.to_string().contains("is also the output --out"), "{e}");
    }
}
