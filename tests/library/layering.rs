//! The library's modules form one-way layers: a module may import (`crate::…`) only from the
//! layers below its own. The order is declared here and in ARCHITECTURE.md; a new top-level
//! module must be placed in it. Tests (`#[cfg(test)]` modules at the end of a file), comments and
//! string literals are not imports.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The layers, lowest first. A module at layer `i` may import from layers `< i` only.
const LAYERS: &[&[&str]] = &[
    &["math", "par"],
    &["error"],
    &["rng"],
    &["data", "feasible"],
    &["loss"],
    &["kernels"],
    &["objective"],
    &["solver"],
    &["privacy"],
    &["mechanism"],
    &["model"],
    &["estimator"],
    &["policy", "sim"],
    &["prelude"],
];

fn layer_of(module: &str) -> Option<usize> {
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The source with comments, string and char literals blanked and a trailing
/// `#[cfg(test)] mod …` dropped.
fn code_only(src: &str) -> String {
    let src = match src.find("#[cfg(test)]\nmod ") {
        Some(i) => &src[..i],
        None => src,
    };
    let b = src.as_bytes();
    let mut out = String::with_capacity(src.len());
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'/' && b.get(i + 1) == Some(&b'/') {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if b[i] == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i + 1 < b.len() && !(b[i] == b'*' && b[i + 1] == b'/') {
                i += 1;
            }
            i += 2;
        } else if b[i] == b'\'' && b.get(i + 1) == Some(&b'"') && b.get(i + 2) == Some(&b'\'') {
            i += 3; // the char literal '"'
        } else if b[i] == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
            out.push_str("\"\"");
        } else {
            let c = src[i..].chars().next().unwrap();
            out.push(c);
            i += c.len_utf8();
        }
    }
    out
}

/// The top-level modules named after `crate::` (including `crate::{a::…, b}` groups).
fn imports(src: &str) -> BTreeSet<String> {
    let code = code_only(src);
    let mut found = BTreeSet::new();
    let ident = |s: &str| -> String {
        s.chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect()
    };
    let mut rest = code.as_str();
    while let Some(i) = rest.find("crate::") {
        let preceded_by_ident = rest[..i]
            .chars()
            .last()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_');
        rest = &rest[i + "crate::".len()..];
        if preceded_by_ident {
            continue;
        }
        if let Some(group) = rest.strip_prefix('{') {
            // Top-level items of the group: split at commas outside nested braces.
            let mut depth = 0usize;
            let mut start = 0;
            for (k, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        found.insert(ident(group[start..k].trim()));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        found.insert(ident(group[start..k].trim()));
                        start = k + 1;
                    }
                    _ => {}
                }
            }
        } else {
            found.insert(ident(rest));
        }
    }
    found.remove("");
    found
}

/// Every import against the declared order in `files` (`path` relative to `src/`, text).
fn violations(files: &[(String, String)]) -> Vec<String> {
    let mut bad = Vec::new();
    for (path, text) in files {
        let module = path.split('/').next().unwrap().trim_end_matches(".rs");
        if module == "lib" || module == "main" {
            continue;
        }
        let Some(own) = layer_of(module) else {
            bad.push(format!("{path}: module `{module}` is not in the declared layers"));
            continue;
        };
        for used in imports(text) {
            if used == module {
                continue;
            }
            match layer_of(&used) {
                // A crate-root item (a macro or a re-export), not a module.
                None => {}
                Some(l) if l < own => {}
                Some(_) => bad.push(format!("{path}: `{module}` imports `{used}`, which is not below it")),
            }
        }
    }
    bad
}

fn rust_files(dir: &Path, root: &Path, out: &mut Vec<(String, String)>) {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir).unwrap().map(|e| e.unwrap().path()).collect();
    entries.sort();
    for p in entries {
        if p.is_dir() {
            rust_files(&p, root, out);
        } else if p.extension().is_some_and(|e| e == "rs") {
            let rel = p.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            out.push((rel, std::fs::read_to_string(&p).unwrap()));
        }
    }
}

#[test]
fn modules_import_only_from_layers_below() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &root, &mut files);
    assert!(
        files.len() > 50,
        "found only {} source files under {}",
        files.len(),
        root.display()
    );
    let bad = violations(&files);
    assert!(
        bad.is_empty(),
        "imports against the declared layers:\n{}",
        bad.join("\n")
    );
}

#[test]
fn every_top_level_module_is_declared() {
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs")).unwrap();
    for line in code_only(&lib).lines() {
        let line = line.trim();
        if let Some(name) = line.strip_prefix("pub mod ").or_else(|| line.strip_prefix("mod ")) {
            let name = name.trim_end_matches(';').trim();
            assert!(
                layer_of(name).is_some(),
                "`{name}` (src/lib.rs) is not in the declared layers"
            );
        }
    }
}

/// The checker itself: each cycle the layering removed is flagged when reintroduced, and
/// comments, strings, tests and path suffixes are not imports.
#[test]
fn the_checker_flags_upward_imports() {
    let f = |p: &str, s: &str| vec![(p.to_string(), s.to_string())];
    let cycles = [
        ("error.rs", "use crate::solver::Termination;"),
        ("loss/mod.rs", "use crate::kernels::simd_math::log1pexp;"),
        ("objective/smooth.rs", "use crate::solver::sgd::{Schedule, StepRule};"),
        ("privacy/rdp.rs", "use crate::mechanism::Guarantee;"),
        ("solver/sgd/mod.rs", "use crate::mechanism::rng::simulation_rng;"),
        ("data/mod.rs", "use crate::{error::Result, loss::Loss};"),
        ("math/mod.rs", "fn f() -> crate::error::Result<()> { Ok(()) }"),
    ];
    for (path, src) in cycles {
        assert_eq!(violations(&f(path, src)).len(), 1, "{path}: {src}");
    }
    let fine = [
        (
            "solver/mod.rs",
            "use crate::{error::Result, objective::{Eval, Objective}};",
        ),
        (
            "error.rs",
            "// use crate::solver::Termination;\nconst S: &str = \"crate::solver\";",
        ),
        (
            "error.rs",
            "pub fn f() {}\n#[cfg(test)]\nmod tests { use crate::solver::Control; }",
        ),
        ("loss/mod.rs", "/* crate::kernels */ use crate::math::simd;"),
        ("estimator/mod.rs", "crate::with_loss!(x);"),
    ];
    for (path, src) in fine {
        assert!(violations(&f(path, src)).is_empty(), "{path}: {src}");
    }
    assert_eq!(
        violations(&f("newthing.rs", "")).len(),
        1,
        "an undeclared module is flagged"
    );
}
