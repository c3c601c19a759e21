//! Bounded fuzzing on stable Rust, from a fixed seed: the `.npy` reader and the CLI's argument
//! handling must never panic, hang or print more than one line for an error.
//!
//! * **npy headers** ([`header::preamble`], [`header::parse`]): valid headers mutated byte by
//!   byte (flips, insertions, deletions, truncation, digit runs), and random bytes;
//! * **npy files**: the same mutations applied to whole files (header and payload), read by
//!   every reader of [`npy`], including the memory-mapped ones (which must agree with the
//!   copying reader);
//! * **provenance records** ([`SignedRecord::from_json`] and its verification): a signed
//!   side-car mutated byte by byte and token by token must parse to an error or to a record,
//!   and a mutated record that still verifies against the trusted key must state exactly what
//!   the original stated (a mutation can change the formatting, never a signed value);
//! * **the CLI**: random argument lists drawn from every subcommand's flags (except the
//!   long-running `demo` and `experiment`, which have their own tests) with hostile values
//!   (`nan`, `-0`, `1e308`, `18446744073709551616`, empty strings, paths to corrupt files), each run
//!   as a process with a time limit.
//!
//! The budget is `FUZZ_SECONDS` seconds per target (default 3), so CI time stays bounded;
//! `FUZZ_SECONDS=300 cargo test --release --test cli fuzz_inputs -- --nocapture` runs longer and
//! prints how many inputs each target saw.

use crate::{common, support};
use common::write_npy_raw;
use privpref::data::npy::{self, header};
use privpref::data::Features;
use privpref::privacy::record::{ProvenanceRecord, SignedRecord, SigningKey, Verification};
use rand::{Rng, RngExt, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::process::Stdio;
use std::time::{Duration, Instant};
use support::TempDir;

fn budget() -> Duration {
    let s: f64 = std::env::var("FUZZ_SECONDS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3.0);
    Duration::from_secs_f64(s)
}

/// Valid files to mutate: float64 and float32 matrices (C and Fortran order), uint8/int64/bool
/// labels, a 3-D array, a version-2.0 header.
fn seeds() -> Vec<Vec<u8>> {
    let dir = TempDir::new("fuzz-seeds");
    let mut out = Vec::new();
    let p = dir.path("a.npy");
    npy::write_f64(&p, &[1.0, -2.0, 3.5, 0.0, 1e-300, 7.0], &[3, 2]).unwrap();
    out.push(std::fs::read(&p).unwrap());
    npy::write_u8(&p, &[0, 1, 1, 0]).unwrap();
    out.push(std::fs::read(&p).unwrap());
    npy::write_u8_shape(&p, &[0, 1, 2, 2, 1, 0], &[2, 3]).unwrap();
    out.push(std::fs::read(&p).unwrap());
    npy::write_f64(&p, &[0.5; 12], &[2, 3, 2]).unwrap();
    out.push(std::fs::read(&p).unwrap());
    let mut raw = |descr: &str, shape: &[usize], payload: &[u8]| {
        write_npy_raw(&p, descr, false, shape, payload);
        out.push(std::fs::read(&p).unwrap());
    };
    raw("<f4", &[2, 2], &[0u8; 16]);
    let ones: Vec<u8> = [1i64, 0, 1].iter().flat_map(|v| v.to_le_bytes()).collect();
    raw("<i8", &[3], &ones);
    raw("|b1", &[4], &[0, 1, 1, 0]);
    raw(">f8", &[1, 1], &1.5f64.to_be_bytes());
    // Fortran order (read as a copy, never mapped).
    let cols: Vec<u8> = [1.0f64, -2.0, 3.0, 0.5, 4.0, -1.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    write_npy_raw(&p, "<f8", true, &[2, 3], &cols);
    out.push(std::fs::read(&p).unwrap());
    let mut v2 = b"\x93NUMPY\x02\x00".to_vec();
    let h = "{'descr': '<f8', 'fortran_order': True, 'shape': (1, 1), }    \n";
    v2.extend_from_slice(&(h.len() as u32).to_le_bytes());
    v2.extend_from_slice(h.as_bytes());
    v2.extend_from_slice(&2.0f64.to_le_bytes());
    out.push(v2);
    out
}

/// One random mutation of `b`.
fn mutate<R: Rng + ?Sized>(b: &[u8], rng: &mut R) -> Vec<u8> {
    let mut v = b.to_vec();
    for _ in 0..rng.random_range(1..4) {
        let len = v.len().max(1);
        match rng.random_range(0..8) {
            0 => {
                let i = rng.random_range(0..len);
                if i < v.len() {
                    v[i] ^= 1 << rng.random_range(0..8);
                }
            }
            1 => {
                let i = rng.random_range(0..len);
                v.insert(i.min(v.len()), rng.random());
            }
            2 if !v.is_empty() => {
                let i = rng.random_range(0..v.len());
                v.remove(i);
            }
            3 => v.truncate(rng.random_range(0..len)),
            4 => {
                // A run of digits (huge dimensions).
                let i = rng.random_range(0..len).min(v.len());
                let run: Vec<u8> = (0..rng.random_range(1..30))
                    .map(|_| b'0' + rng.random_range(0..10u8))
                    .collect();
                v.splice(i..i, run);
            }
            5 => {
                let i = rng.random_range(0..len).min(v.len());
                let tok: &[u8] = [
                    &b"'shape'"[..],
                    b"(",
                    b")",
                    b",",
                    b"True",
                    b"'<c16'",
                    b"{",
                    b"}",
                    b"\\",
                    b"'",
                    b"-",
                ][rng.random_range(0..11)];
                v.splice(i..i, tok.iter().copied());
            }
            6 => v.extend((0..rng.random_range(1..64)).map(|_| rng.random::<u8>())),
            _ => {
                // The header length field.
                if v.len() > 9 {
                    v[8] = rng.random();
                    v[9] = rng.random();
                }
            }
        }
    }
    v
}

/// A digest of every value's bits (reads every value): the precision and a wrapping sum.
fn sum_bits(f: Features<'_>) -> (usize, u64) {
    match f {
        Features::F64(v) => (8, v.iter().fold(0u64, |a, x| a.wrapping_add(x.to_bits()))),
        Features::F32(v) => (4, v.iter().fold(0u64, |a, x| a.wrapping_add(u64::from(x.to_bits())))),
    }
}

fn one_line(e: &str) -> bool {
    !e.is_empty() && !e.contains('\n')
}

#[test]
fn npy_header_parser_never_panics() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(11);
    let seeds = seeds();
    let start = Instant::now();
    let mut count = 0usize;
    let mut bad = Vec::new();
    while start.elapsed() < budget() || count < 2000 {
        let input = if rng.random_range(0..10) == 0 {
            (0..rng.random_range(0..200)).map(|_| rng.random::<u8>()).collect()
        } else {
            mutate(&seeds[rng.random_range(0..seeds.len())], &mut rng)
        };
        count += 1;
        let r = catch_unwind(|| {
            let (len, pre) = header::preamble(&input)?;
            let end = pre.saturating_add(len).min(input.len());
            header::parse(&input[pre.min(end)..end], end as u64)
        });
        match r {
            Err(_) => bad.push(format!("panic on {input:?}")),
            Ok(Err(e)) if !one_line(&e) => bad.push(format!("multi-line error {e:?}")),
            _ => {}
        }
        if bad.len() > 5 {
            break;
        }
    }
    eprintln!("npy header: {count} inputs");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn provenance_record_parser_never_panics_or_accepts_a_forgery() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(13);
    let key = SigningKey::generate().unwrap();
    let trusted = [key.trusted_key()];
    let labels = privpref::mechanism::RandomizedResponse::new(1.0)
        .unwrap()
        .privatize(&[0, 1, 1, 0, 1], &mut privpref::privacy::NoiseRng::seeded(3))
        .unwrap();
    let file = b"labels file bytes".to_vec();
    let seeds: Vec<SignedRecord> = vec![
        ProvenanceRecord::new("y.npy", &file, labels.provenance(), 5, "privpref fuzz")
            .unwrap()
            .sign(&key),
        ProvenanceRecord::new("y.npy", &file, labels.provenance(), 5, "privpref fuzz")
            .unwrap()
            .sign(&SigningKey::generate().unwrap()),
    ];
    let texts: Vec<Vec<u8>> = seeds.iter().map(|r| r.to_json().into_bytes()).collect();
    let tokens: [&[u8]; 12] = [
        b"\"eps\": 0.1,",
        b"\"csprng\"",
        b"\"simulation\"",
        b"null",
        b"1e308",
        b"-0",
        b"\"krr\"",
        b"\"k\": 2,",
        b"{",
        b"}",
        b"\\u0000",
        b"\"signature\": null,",
    ];
    let start = Instant::now();
    let (mut count, mut parsed, mut verified) = (0usize, 0usize, 0usize);
    let mut bad = Vec::new();
    while start.elapsed() < budget() || count < 2000 {
        let i = rng.random_range(0..texts.len());
        let mut input = mutate(&texts[i], &mut rng);
        if rng.random_range(0..3) == 0 {
            let at = rng.random_range(0..=input.len());
            input.splice(at..at, tokens[rng.random_range(0..tokens.len())].iter().copied());
        }
        count += 1;
        let text = String::from_utf8_lossy(&input).into_owned();
        let r = catch_unwind(|| {
            let rec = SignedRecord::from_json(&text)?;
            let out = rec.verify(&file, &trusted);
            Ok::<_, privpref::Error>((rec, out))
        });
        match r {
            Err(_) => bad.push(format!("panic on {text:?}")),
            Ok(Err(e)) if !one_line(&e.to_string()) => bad.push(format!("multi-line error {e:?}")),
            Ok(Ok((rec, out))) => {
                parsed += 1;
                match out {
                    Ok((_, Verification::Verified(_))) => {
                        verified += 1;
                        if rec.record() != seeds[i].record() {
                            bad.push(format!("a changed record verified: {text}"));
                        }
                    }
                    Ok((p, _)) if p.guarantee().holds_for_real_data() => {
                        bad.push(format!("an unverified record holds for real data: {text}"));
                    }
                    Err(e) if !one_line(&e.to_string()) => bad.push(format!("multi-line error {e:?}")),
                    _ => {}
                }
            }
            _ => {}
        }
        if bad.len() > 5 {
            break;
        }
    }
    eprintln!("provenance records: {count} inputs, {parsed} parsed, {verified} verified");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn npy_readers_never_panic() {
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(12);
    let seeds = seeds();
    let dir = TempDir::new("fuzz-files");
    let p = dir.path("f.npy");
    let start = Instant::now();
    let mut count = 0usize;
    let mut bad = Vec::new();
    while start.elapsed() < budget() || count < 300 {
        let input = mutate(&seeds[rng.random_range(0..seeds.len())], &mut rng);
        std::fs::write(&p, &input).unwrap();
        count += 1;
        let r = catch_unwind(AssertUnwindSafe(|| {
            let mut errs = Vec::new();
            let mut keep = |r: Result<(), privpref::Error>| {
                if let Err(e) = r {
                    errs.push(e.to_string());
                }
            };
            keep(npy::read_matrix(&p).map(|_| ()));
            keep(npy::read_matrix_keep(&p).map(|_| ()));
            keep(npy::read_vector(&p).map(|_| ()));
            keep(npy::read_labels(&p, 2).map(|_| ()));
            keep(npy::read_ids(&p, "clusters").map(|_| ()));
            keep(npy::read_array3(&p).map(|_| ()));
            keep(npy::read_group_labels(&p, 3).map(|_| ()));
            // The mapped readers: every value read (a truncated map would fault here), and
            // `load_matrix` agrees with the copying reader, value for value or message for
            // message.
            let mapped = npy::MappedMatrix::open(&p).map(|m| sum_bits(m.features()));
            keep(mapped.map(|_| ()));
            let loaded = npy::load_matrix(&p).map(|m| sum_bits(m.features()));
            let read = npy::read_matrix_keep(&p).map(|(m, _, _)| match &m {
                npy::Matrix::F64(v) => sum_bits(Features::F64(v)),
                npy::Matrix::F32(v) => sum_bits(Features::F32(v)),
            });
            let agree = match (&loaded, &read) {
                (Ok(a), Ok(b)) => a == b,
                (Err(a), Err(b)) => a.to_string() == b.to_string(),
                _ => false,
            };
            keep(loaded.map(|_| ()));
            (errs, agree)
        }));
        match r {
            Err(_) => bad.push(format!("panic on {input:?}")),
            Ok((errs, agree)) => {
                for e in errs {
                    if !one_line(&e) {
                        bad.push(format!("multi-line error {e:?}"));
                    }
                }
                if !agree {
                    bad.push(format!("load_matrix and read_matrix_keep disagree on {input:?}"));
                }
            }
        }
        if bad.len() > 5 {
            break;
        }
    }
    eprintln!("npy files: {count} inputs, 7 readers each");
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

/// Runs the binary with `args`; `None` when it had to be killed after `limit`.
fn run_limited(args: &[String], limit: Duration) -> Option<(Option<i32>, String, String)> {
    let mut child = crate::support::command()
        .args(args)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn privpref");
    let start = Instant::now();
    loop {
        if let Some(status) = child.try_wait().expect("wait") {
            let o = child.wait_with_output().expect("output");
            let _ = status;
            return Some((
                o.status.code(),
                String::from_utf8_lossy(&o.stdout).into_owned(),
                String::from_utf8_lossy(&o.stderr).into_owned(),
            ));
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn cli_arguments_never_panic_or_print_more_than_one_error_line() {
    let dir = TempDir::new("fuzz-cli");
    // Inputs the arguments can point at: valid data, and corrupt files.
    let (n, d) = (12, 3);
    let x: Vec<f64> = (0..n * d).map(|i| ((i * 7 % 11) as f64 - 5.0) / 3.0).collect();
    npy::write_f64(dir.path("x.npy"), &x, &[n, d]).unwrap();
    npy::write_u8(dir.path("y.npy"), &(0..n).map(|i| (i % 2) as u8).collect::<Vec<_>>()).unwrap();
    npy::write_f64(dir.path("v.npy"), &[0.1, -0.2, 0.1], &[d]).unwrap();
    npy::write_f64(dir.path("states.npy"), &vec![0.5; 4 * 2 * d], &[4, 2, d]).unwrap();
    std::fs::write(dir.path("bad.npy"), b"\x93NUMPY\x01\x00\x10\x00{'descr': '<f8'").unwrap();
    let files: Vec<String> = ["x.npy", "y.npy", "v.npy", "states.npy", "bad.npy", "missing.npy"]
        .iter()
        .map(|f| dir.arg(f))
        .collect();
    let flags: [&[&str]; 6] = [
        &[
            "--x",
            "--y",
            "--loss",
            "--eps",
            "--k",
            "--top",
            "--constraint",
            "--radius",
            "--ridge",
            "--linear-term",
            "--weights",
            "--theta0",
            "--solver",
            "--tol",
            "--tol-abs",
            "--max-iter",
            "--threads",
            "--seed",
            "--memory",
            "--polish-iters",
            "--batch",
            "--epochs",
            "--step",
            "--shuffle",
            "--average",
            "--central",
            "--mechanism",
            "--delta",
            "--feature-bound",
            "--beta",
            "--kkt-tol",
            "--output-radius",
            "--output-eps",
            "--output-delta",
            "--eta",
            "--alpha",
            "--accuracy",
            "--allow-unguaranteed",
            "--label-mechanism",
            "--top-k",
            "--prior",
            "--clusters",
            "--prior-eps",
            "--stages",
            "--stage-fractions",
            "--temperature",
            "--reuse",
            "--sigma-rule",
            "--sensitivity",
            "--lipschitz",
            "--no-debias",
            "--trusted-key",
        ],
        &["--y", "--mechanism", "--k", "--eps", "--seed", "--signing-key"],
        &[
            "--x",
            "--eps",
            "--delta",
            "--feature-bound",
            "--relation",
            "--eigen-floor",
            "--no-repair",
            "--seed",
        ],
        &[
            "--theta",
            "--states",
            "--covariance",
            "--x",
            "--lambda",
            "--confidence-radius",
            "--eta",
            "--radius-multiplier",
            "--lambda-multiplier",
            "--set",
            "--radius",
            "--reference-actions",
            "--reference-vector",
            "--weights",
            "--greedy",
            "--tol",
            "--strict-gap",
            "--max-passes",
            "--threads",
        ],
        &[
            "--noise-multiplier",
            "--sampling-rate",
            "--steps",
            "--delta",
            "--neighbours",
            "--conversion",
            "--orders",
        ],
        &[
            "--epsilon",
            "--sampling-rate",
            "--steps",
            "--delta",
            "--neighbours",
            "--conversion",
            "--orders",
        ],
    ];
    let commands = ["fit", "privatize", "covariance", "policy", "account", "calibrate"];
    let values = [
        "0",
        "1",
        "-1",
        "-0",
        "2",
        "0.5",
        "1e-300",
        "1e308",
        "nan",
        "inf",
        "-inf",
        "",
        " ",
        "3",
        "18446744073709551616",
        "4294967296",
        "1e-5",
        "mle",
        "mle-rr",
        "debiased-rr",
        "probit",
        "pl-top1",
        "softmax",
        "theta-b",
        "ball",
        "sum-zero",
        "none",
        "newton",
        "lbfgs",
        "newton-cg",
        "sgd",
        "auto",
        "const:0.1",
        "theory",
        "invt:nan",
        "polyak",
        "krr",
        "rr-prior",
        "normal",
        "objpert",
        "private-mle",
        "0.6,0.4",
        "a,b",
        "add-remove",
        "1,2,3",
    ];
    // A valid invocation of each command, which the fuzzer then mutates (so most inputs get
    // past the required arguments to the checks behind them).
    let (xa, ya, va, sa) = (files[0].clone(), files[1].clone(), files[2].clone(), files[3].clone());
    let s = |v: &[&str]| v.iter().map(|a| a.to_string()).collect::<Vec<String>>();
    let accountant = ["--sampling-rate", "0.01", "--steps", "100", "--delta", "1e-5"];
    let bases: [Vec<String>; 6] = [
        [
            s(&["--x"]),
            vec![xa.clone()],
            s(&["--y"]),
            vec![ya.clone()],
            s(&["--loss", "mle", "--radius", "2"]),
        ]
        .concat(),
        [s(&["--y"]), vec![ya.clone()], s(&["--eps", "1"])].concat(),
        [
            s(&["--x"]),
            vec![xa.clone()],
            s(&["--eps", "1", "--delta", "1e-5", "--feature-bound", "10"]),
        ]
        .concat(),
        [s(&["--theta"]), vec![va], s(&["--states"]), vec![sa], s(&["--greedy"])].concat(),
        [s(&["--noise-multiplier", "1"]), s(&accountant)].concat(),
        [s(&["--epsilon", "1"]), s(&accountant)].concat(),
    ];
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(13);
    let start = Instant::now();
    let (mut count, mut exits) = (0usize, [0usize; 4]);
    let mut bad = Vec::new();
    let out = dir.arg("out.json");
    while start.elapsed() < budget() || count < 60 {
        let c = rng.random_range(0..commands.len());
        let mut args = vec![commands[c].to_string()];
        let mut base = bases[c].clone();
        // Mutate the valid invocation: replace a value, drop an argument.
        for _ in 0..rng.random_range(0..3) {
            if base.is_empty() {
                break;
            }
            let i = rng.random_range(0..base.len());
            if rng.random() && !base[i].starts_with("--") {
                base[i] = values[rng.random_range(0..values.len())].to_string();
            } else if rng.random_range(0..4) == 0 {
                base.remove(i);
            }
        }
        args.extend(base);
        for _ in 0..rng.random_range(0..5) {
            let f = flags[c][rng.random_range(0..flags[c].len())];
            args.push(f.to_string());
            if rng.random_range(0..5) != 0 {
                let v = if rng.random_range(0..3) == 0 {
                    files[rng.random_range(0..files.len())].clone()
                } else {
                    values[rng.random_range(0..values.len())].to_string()
                };
                args.push(v);
            }
        }
        if rng.random() {
            args.extend(["--out".to_string(), out.clone()]);
        }
        count += 1;
        match run_limited(&args, Duration::from_secs(30)) {
            None => bad.push(format!("no answer within 30 s: privpref {}", args.join(" "))),
            Some((code, _stdout, stderr)) => {
                if stderr.contains("panicked") || stderr.contains("internal error") || stderr.contains("RUST_BACKTRACE")
                {
                    bad.push(format!("panic: privpref {} — {stderr}", args.join(" ")));
                }
                match code {
                    Some(k @ 0..=3) => exits[k as usize] += 1,
                    other => bad.push(format!("exit {other:?}: privpref {}", args.join(" "))),
                }
                if code != Some(0) {
                    let errors: Vec<&str> = stderr
                        .lines()
                        .filter(|l| !l.starts_with("privpref: warning:") && !l.starts_with("privpref: note:"))
                        .collect();
                    if errors.len() != 1 {
                        bad.push(format!(
                            "exit {code:?} with {} error lines: privpref {} — {stderr:?}",
                            errors.len(),
                            args.join(" ")
                        ));
                    }
                }
            }
        }
        if bad.len() > 5 {
            break;
        }
    }
    eprintln!(
        "CLI: {count} invocations (exit 0: {}, 1: {}, 2: {}, 3: {})",
        exits[0], exits[1], exits[2], exits[3]
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}
