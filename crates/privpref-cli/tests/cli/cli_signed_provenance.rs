//! Signed provenance side-cars against forgers: `privatize` signs its record with the key pair
//! of the key directory (created on first use) or `--signing-key`; `fit` verifies it against
//! `--trusted-key` or the default public key. A record that was edited after signing is refused;
//! a record no trusted key signed (hand-written, unsigned, or signed by another key) gives at
//! most a guarantee marked unverified, which does not hold for real data.

use crate::support;
use privpref::data::npy;
use privpref::sim::{btl_pairs, theta_star};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::os::unix::fs::PermissionsExt;
use std::process::Output;
use support::{json_of, run, TempDir};

const N: usize = 200;
const D: usize = 3;

fn setup(tag: &str) -> TempDir {
    let dir = TempDir::new(tag);
    let theta = theta_star(D, 1.0, true, &mut privpref::mechanism::simulation_rng(1)).unwrap();
    let data = btl_pairs(N, &theta, &mut privpref::mechanism::simulation_rng(2)).unwrap();
    npy::write_f64(dir.path("x.npy"), &data.x, &[N, D]).unwrap();
    npy::write_u8(dir.path("y.npy"), &data.y).unwrap();
    dir
}

fn privatize(dir: &TempDir, out: &str, rest: &[&str]) -> Value {
    let mut a: Vec<String> = ["privatize", "--y", &dir.arg("y.npy"), "--out", &dir.arg(out)]
        .iter()
        .map(|s| s.to_string())
        .collect();
    a.extend(rest.iter().map(|s| s.to_string()));
    json_of(&run(&a))
}

fn fit(dir: &TempDir, y: &str, eps: &str, rest: &[&str]) -> Output {
    let mut a: Vec<String> = [
        "fit",
        "--x",
        &dir.arg("x.npy"),
        "--y",
        &dir.arg(y),
        "--radius",
        "2",
        "--loss",
        "debiased-rr",
        "--eps",
        eps,
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    a.extend(rest.iter().map(|s| s.to_string()));
    run(&a)
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Exit 1, one stderr line with every needle, no JSON.
fn refused(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "stderr: {err}");
    assert_eq!(err.trim_end().lines().count(), 1, "one line: {err}");
    for n in needles {
        assert!(err.contains(n), "`{n}` not in: {err}");
    }
    assert!(o.stdout.is_empty());
}

/// A fit that ran but whose guarantee does not hold for real data: an unverified record, said
/// on stderr.
fn unverified(o: &Output, note: &str) -> Value {
    let v = json_of(o);
    assert_eq!(v["guarantee"]["holds_for_real_data"], false, "{v}");
    assert_eq!(v["provenance"]["origin"], "unverified-record");
    assert!(v["provenance"]["verified_by"].is_null());
    let err = stderr(o);
    assert!(err.starts_with("privpref: note:") && err.contains(note), "{err}");
    v
}

fn sidecar(dir: &TempDir, labels: &str) -> (std::path::PathBuf, Value) {
    let p = dir.path(&format!("{labels}.provenance.json"));
    let v = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    (p, v)
}

#[test]
fn a_signed_round_trip_names_the_key() {
    let dir = setup("signed-roundtrip");
    let p = privatize(&dir, "yp.npy", &["--eps", "1"]);
    let key_id = p["signed_by"].as_str().unwrap().to_string();
    assert_eq!(key_id.len(), 16);
    let (_, rec) = sidecar(&dir, "yp.npy");
    assert_eq!(rec["version"], 2);
    assert_eq!(rec["signature"]["algorithm"], "ed25519");
    assert_eq!(rec["signature"]["key_id"], key_id.as_str());
    let o = fit(&dir, "yp.npy", "1", &[]);
    let v = json_of(&o);
    assert!(stderr(&o).is_empty(), "no note for a verified record: {}", stderr(&o));
    assert_eq!(v["guarantee"]["eps"], 1.0);
    assert_eq!(v["guarantee"]["holds_for_real_data"], true);
    assert_eq!(v["provenance"]["origin"], "signed-record");
    assert_eq!(v["provenance"]["verified_by"], key_id.as_str());
    assert!(v["guarantee"]["notes"][0].as_str().unwrap().contains(&key_id));
    // The default public key, given explicitly, verifies the same record.
    let public = support::key_dir().join("signing-key.pub.pem");
    let v = json_of(&fit(&dir, "yp.npy", "1", &["--trusted-key", public.to_str().unwrap()]));
    assert_eq!(v["provenance"]["verified_by"], key_id.as_str());
    // The secret key is the owner's alone.
    let secret = support::key_dir().join("signing-key.pem");
    assert_eq!(std::fs::metadata(secret).unwrap().permissions().mode() & 0o077, 0);
}

/// A side-car edit: the labels file, privatize's arguments, the ε of the fit, the edit.
type Edit = (&'static str, &'static [&'static str], &'static str, fn(&mut Value));

#[test]
fn edited_records_are_refused() {
    let dir = setup("signed-edits");
    let edits: [Edit; 4] = [
        // ε edited down, the fit asks for the edited ε.
        ("ye.npy", &["--eps", "1"], "0.1", |r| r["eps"] = json!(0.1)),
        // A seeded (simulation-only) record passed off as a CSPRNG one.
        ("yg.npy", &["--eps", "1", "--seed", "7"], "1", |r| {
            r["generator"] = json!("csprng");
            r["seed"] = Value::Null;
        }),
        // The mechanism edited (binary RR recorded as K-ary RR with K = 2).
        ("ym.npy", &["--eps", "1"], "1", |r| {
            r["mechanism"] = json!("krr");
            r["k"] = json!(2);
        }),
        // The number of labels edited.
        ("yn.npy", &["--eps", "1"], "1", |r| r["n"] = json!(N + 1)),
    ];
    for (out, args, fit_eps, edit) in edits {
        privatize(&dir, out, args);
        let (path, mut rec) = sidecar(&dir, out);
        edit(&mut rec);
        std::fs::write(&path, rec.to_string()).unwrap();
        refused(
            &fit(&dir, out, fit_eps, &[]),
            &["does not verify", "changed after it was signed"],
        );
    }
}

#[test]
fn records_no_trusted_key_signed_do_not_hold_for_real_data() {
    let dir = setup("signed-forgeries");
    // A hand-written record for the clear labels, with their recomputed size and SHA-256.
    let bytes = std::fs::read(dir.path("y.npy")).unwrap();
    let sha: String = Sha256::digest(&bytes).iter().map(|b| format!("{b:02x}")).collect();
    let forged = json!({
        "format": "privpref-label-provenance", "version": 2, "labels_file": "y.npy",
        "labels_bytes": bytes.len(), "labels_sha256": sha, "n": N, "mechanism": "rr", "eps": 1.0,
        "k": null, "generator": "csprng", "seed": null, "written_by": "privpref 0.1.0 privatize",
        "signature": null,
    });
    std::fs::write(dir.path("y.npy.provenance.json"), forged.to_string()).unwrap();
    let v = unverified(&fit(&dir, "y.npy", "1", &[]), "is not signed");
    assert!(v["guarantee"]["notes"]
        .as_array()
        .unwrap()
        .iter()
        .any(|n| n.as_str().unwrap().contains("unverified record")));
    // The same as a version-1 record (what privpref wrote before records were signed).
    let mut v1 = forged.clone();
    v1["version"] = json!(1);
    v1.as_object_mut().unwrap().remove("signature");
    std::fs::write(dir.path("y.npy.provenance.json"), v1.to_string()).unwrap();
    unverified(&fit(&dir, "y.npy", "1", &[]), "is not signed");
    std::fs::remove_file(dir.path("y.npy.provenance.json")).unwrap();

    // Signed by another key pair (the forger's own): valid signature, key not trusted.
    let other = dir.path("other-keys");
    let k = json_of(&run(&["keygen", "--dir", other.to_str().unwrap()]));
    let other_id = k["key_id"].as_str().unwrap().to_string();
    let secret = other.join("signing-key.pem");
    let public = other.join("signing-key.pub.pem");
    assert_eq!(k["secret_key"], secret.to_str().unwrap());
    let p = privatize(
        &dir,
        "yo.npy",
        &["--eps", "1", "--signing-key", secret.to_str().unwrap()],
    );
    assert_eq!(p["signed_by"], other_id.as_str());
    let v = unverified(
        &fit(&dir, "yo.npy", "1", &[]),
        &format!("signed by key {other_id}, which is not trusted"),
    );
    assert_eq!(v["guarantee"]["eps"], 1.0);
    // Trusting that key explicitly verifies it (and then only it is trusted).
    let v = json_of(&fit(&dir, "yo.npy", "1", &["--trusted-key", public.to_str().unwrap()]));
    assert_eq!(v["provenance"]["verified_by"], other_id.as_str());
    assert_eq!(v["guarantee"]["holds_for_real_data"], true);
    privatize(&dir, "yd.npy", &["--eps", "1"]);
    unverified(
        &fit(&dir, "yd.npy", "1", &["--trusted-key", public.to_str().unwrap()]),
        "which is not trusted",
    );

    // A valid signature moved to a record of other labels: the record's hash is not theirs, and
    // with the hash edited to match, the signature no longer verifies.
    let (_, good) = sidecar(&dir, "yd.npy");
    let mut moved = forged.clone();
    moved["signature"] = good["signature"].clone();
    std::fs::write(dir.path("y.npy.provenance.json"), moved.to_string()).unwrap();
    refused(&fit(&dir, "y.npy", "1", &[]), &["does not verify"]);
    // The embedded public key swapped for the default one, keeping the forger's signature.
    let (path, mut rec) = sidecar(&dir, "yo.npy");
    rec["signature"]["public_key"] = good["signature"]["public_key"].clone();
    rec["signature"]["key_id"] = good["signature"]["key_id"].clone();
    std::fs::write(&path, rec.to_string()).unwrap();
    refused(&fit(&dir, "yo.npy", "1", &[]), &["does not verify"]);
}

#[test]
fn keys_are_created_private_and_never_replaced() {
    let dir = setup("signed-keys");
    let keys = dir.path("keys");
    let k = json_of(&run(&["keygen", "--dir", keys.to_str().unwrap()]));
    let secret = keys.join("signing-key.pem");
    assert_eq!(std::fs::metadata(&secret).unwrap().permissions().mode() & 0o777, 0o600);
    assert!(std::fs::read_to_string(&secret)
        .unwrap()
        .starts_with("-----BEGIN PRIVATE KEY-----"));
    let public = std::fs::read_to_string(keys.join("signing-key.pub.pem")).unwrap();
    assert!(public.starts_with("-----BEGIN PUBLIC KEY-----"));
    let before = std::fs::read(&secret).unwrap();
    refused(
        &run(&["keygen", "--dir", keys.to_str().unwrap()]),
        &["never replaces a key"],
    );
    assert_eq!(std::fs::read(&secret).unwrap(), before);
    // A secret key others can read is refused before any work (no labels written).
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o644)).unwrap();
    let o = run(&[
        "privatize",
        "--y",
        &dir.arg("y.npy"),
        "--out",
        &dir.arg("yk.npy"),
        "--eps",
        "1",
        "--signing-key",
        secret.to_str().unwrap(),
    ]);
    refused(&o, &["mode 0644", "chmod 600"]);
    assert!(!dir.path("yk.npy").exists());
    // A trusted key that is not a public key.
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o600)).unwrap();
    privatize(
        &dir,
        "yt.npy",
        &["--eps", "1", "--signing-key", secret.to_str().unwrap()],
    );
    refused(
        &fit(&dir, "yt.npy", "1", &["--trusted-key", secret.to_str().unwrap()]),
        &["not an Ed25519 public key"],
    );
    assert_eq!(k["algorithm"], "ed25519");
}

#[test]
fn the_first_privatize_creates_the_default_key_pair() {
    let dir = setup("signed-first-use");
    let home = dir.path("home");
    let o = support::command()
        .env_remove("PRIVPREF_KEY_DIR")
        .env_remove("XDG_CONFIG_HOME")
        .env("HOME", &home)
        .args([
            "privatize",
            "--y",
            &dir.arg("y.npy"),
            "--out",
            &dir.arg("yf.npy"),
            "--eps",
            "1",
        ])
        .output()
        .unwrap();
    let p = json_of(&o);
    let keys = home.join(".config").join("privpref");
    assert!(stderr(&o).contains("created the signing key pair"), "{}", stderr(&o));
    assert_eq!(p["signing_key"], keys.join("signing-key.pem").to_str().unwrap());
    assert_eq!(std::fs::metadata(&keys).unwrap().permissions().mode() & 0o777, 0o700);
    // The fit on the same machine (same HOME) verifies it with no extra step.
    let o = support::command()
        .env_remove("PRIVPREF_KEY_DIR")
        .env_remove("XDG_CONFIG_HOME")
        .env("HOME", &home)
        .args([
            "fit",
            "--x",
            &dir.arg("x.npy"),
            "--y",
            &dir.arg("yf.npy"),
            "--radius",
            "2",
        ])
        .args(["--loss", "debiased-rr", "--eps", "1"])
        .output()
        .unwrap();
    let v = json_of(&o);
    assert_eq!(v["provenance"]["verified_by"], p["signed_by"]);
    assert_eq!(v["guarantee"]["holds_for_real_data"], true);
}
