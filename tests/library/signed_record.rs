//! Signed provenance records (`privacy::record`): a record signed by a trusted key verifies and
//! names it; any edit of a signed value is refused; a record no trusted key signed gives a
//! provenance whose guarantee does not hold for real data; the parser is strict; a fit on labels
//! whose record verified carries the guarantee.

use privpref::data::PairwiseView;
use privpref::estimator::{fit_privatized, FitOptions};
use privpref::feasible::FeasibleSet;
use privpref::loss::LossSpec;
use privpref::mechanism::{simulation_rng, KaryRr, RandomizedResponse};
use privpref::privacy::record::{ProvenanceRecord, SignedRecord, SigningKey, TrustedKey, Verification};
use privpref::privacy::{Generator, NoiseRng, Origin, PrivatizedLabels, Provenance, Randomizer};
use privpref::sim::{btl_pairs, theta_star};
use privpref::Error;
use serde_json::{json, Value};

const WRITER: &str = "privpref test";

/// An edit of a record's JSON.
type JsonEdit = Box<dyn FnOnce(&mut Value)>;

/// Labels privatised at `eps` by the library, their "file" (here: the label bytes), and the
/// record signed by `key`.
fn signed(eps: f64, seed: Option<u64>, key: &SigningKey) -> (PrivatizedLabels, Vec<u8>, SignedRecord) {
    let y: Vec<u8> = (0..50).map(|i| (i % 3 == 0) as u8).collect();
    let mut rng = match seed {
        Some(s) => NoiseRng::seeded(s),
        None => NoiseRng::secure().unwrap(),
    };
    let labels = RandomizedResponse::new(eps).unwrap().privatize(&y, &mut rng).unwrap();
    let file = labels.labels().to_vec();
    let rec = ProvenanceRecord::new("y.npy", &file, labels.provenance(), labels.len(), WRITER)
        .unwrap()
        .sign(key);
    (labels, file, rec)
}

fn edited(rec: &SignedRecord, edit: impl FnOnce(&mut Value)) -> String {
    let mut v: Value = serde_json::from_str(&rec.to_json()).unwrap();
    edit(&mut v);
    v.to_string()
}

fn record_error(r: Result<impl std::fmt::Debug, Error>) -> String {
    match r {
        Err(Error::ProvenanceRecord(m)) => m,
        other => panic!("expected a provenance-record error, got {other:?}"),
    }
}

#[test]
fn a_record_signed_by_a_trusted_key_verifies_and_names_it() {
    let key = SigningKey::generate().unwrap();
    let (labels, file, rec) = signed(1.0, None, &key);
    let back = SignedRecord::from_json(&rec.to_json()).unwrap();
    assert_eq!(back, rec, "JSON round trip");
    assert_eq!(back.signer(), Some(key.id()));
    let (p, how) = back.verify(&file, &[key.trusted_key()]).unwrap();
    assert_eq!(how, Verification::Verified(key.id()));
    assert_eq!(
        p.origin(),
        Origin::SignedRecord {
            generator: Generator::Csprng,
            key: key.id()
        }
    );
    assert_eq!(p.randomizer(), labels.provenance().randomizer());
    let g = p.guarantee();
    assert!(g.holds_for_real_data());
    assert_eq!(g.eps, 1.0);
    assert!(
        g.assumptions.notes[0].contains(&key.id().to_string()),
        "{:?}",
        g.assumptions.notes
    );
    // The fit on the labels with the verified provenance carries the guarantee.
    let theta = theta_star(3, 1.0, true, &mut simulation_rng(1)).unwrap();
    let data = btl_pairs(labels.len(), &theta, &mut simulation_rng(2)).unwrap();
    let attached = PrivatizedLabels::new(labels.labels().to_vec(), p).unwrap();
    let view = PairwiseView::new(&data.x, data.n, data.d, attached.labels(), None).unwrap();
    let opts = FitOptions::new(LossSpec::DebiasedRr { eps: 1.0 }, FeasibleSet::theta_b(2.0).unwrap());
    let model = fit_privatized(view, &attached, &opts).unwrap();
    assert!(model.guarantee.unwrap().holds_for_real_data());
    // A seeded record verifies too, and stays simulation-only.
    let (_, file, rec) = signed(1.0, Some(4), &key);
    let (p, _) = rec.verify(&file, &[key.trusted_key()]).unwrap();
    assert!(p.is_simulation_only() && !p.guarantee().holds_for_real_data());
}

#[test]
fn every_edit_of_a_signed_value_is_refused() {
    let key = SigningKey::generate().unwrap();
    let trusted = [key.trusted_key()];
    let (_, file, rec) = signed(1.0, None, &key);
    let (_, _, seeded) = signed(1.0, Some(9), &key);
    let edits: Vec<(&SignedRecord, JsonEdit)> = vec![
        (&rec, Box::new(|v| v["eps"] = json!(0.1))),
        (&rec, Box::new(|v| v["eps"] = json!(1.0000000000000002))),
        (&rec, Box::new(|v| v["n"] = json!(51))),
        (&rec, Box::new(|v| v["labels_file"] = json!("z.npy"))),
        (&rec, Box::new(|v| v["written_by"] = json!("someone"))),
        (
            &rec,
            Box::new(|v| {
                v["mechanism"] = json!("krr");
                v["k"] = json!(2);
            }),
        ),
        (
            &seeded,
            Box::new(|v| {
                v["generator"] = json!("csprng");
                v["seed"] = Value::Null;
            }),
        ),
        (&seeded, Box::new(|v| v["seed"] = json!(10))),
    ];
    for (r, edit) in edits {
        let text = edited(r, edit);
        let parsed = SignedRecord::from_json(&text).unwrap();
        // Checked against its own file bytes would need the hash; the signature fails first
        // whenever the hash is unchanged, and the hash check fails otherwise.
        let m = record_error(parsed.check(&trusted));
        assert!(m.contains("does not verify"), "{m}");
    }
    // The hash edited to match other bytes.
    let other = vec![1u8; 50];
    let text = edited(&rec, |v| {
        let sha: String = privpref::privacy::record::sha256(&other)
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        v["labels_sha256"] = json!(sha);
    });
    let parsed = SignedRecord::from_json(&text).unwrap();
    assert!(record_error(parsed.verify(&other, &trusted)).contains("does not verify"));
    // The right record against other bytes.
    assert!(matches!(
        rec.verify(&other, &trusted),
        Err(Error::ProvenanceMismatch { .. })
    ));
    assert!(rec.verify(&file, &trusted).is_ok());
}

#[test]
fn records_no_trusted_key_signed_are_unverified() {
    let key = SigningKey::generate().unwrap();
    let forger = SigningKey::generate().unwrap();
    let (_, file, rec) = signed(1.0, None, &key);
    // Signed by a key the reader does not trust.
    let (p, how) = rec.verify(&file, &[forger.trusted_key()]).unwrap();
    assert_eq!(how, Verification::UntrustedKey(key.id()));
    assert_eq!(p.origin(), Origin::UnverifiedRecord(Generator::Csprng));
    assert!(!p.guarantee().holds_for_real_data());
    let (p, _) = rec.verify(&file, &[]).unwrap();
    assert!(!p.guarantee().holds_for_real_data());
    // Re-signed by the forger (their public key in the record): valid, untrusted.
    let resigned = rec.record().clone().sign(&forger);
    let (p, how) = resigned.verify(&file, &[key.trusted_key()]).unwrap();
    assert_eq!(how, Verification::UntrustedKey(forger.id()));
    assert!(!p.guarantee().holds_for_real_data());
    // The forger's signature with the trusted public key named: refused.
    let swapped = edited(&resigned, |v| {
        let good: Value = serde_json::from_str(&rec.to_json()).unwrap();
        v["signature"]["public_key"] = good["signature"]["public_key"].clone();
        v["signature"]["key_id"] = good["signature"]["key_id"].clone();
    });
    let parsed = SignedRecord::from_json(&swapped).unwrap();
    assert!(record_error(parsed.check(&[key.trusted_key()])).contains("does not verify"));
    // Unsigned: a hand-written record with the right hash.
    let unsigned = edited(&rec, |v| v["signature"] = Value::Null);
    let (p, how) = SignedRecord::from_json(&unsigned)
        .unwrap()
        .verify(&file, &[key.trusted_key()])
        .unwrap();
    assert_eq!(how, Verification::Unsigned);
    assert!(p.is_unverified_record() && !p.guarantee().holds_for_real_data());
    // `Provenance::from_record`, the library's way to state a record, is unverified too.
    let p = Provenance::from_record(Randomizer::Rr { eps: 1.0 }, Generator::Csprng).unwrap();
    assert!(!p.guarantee().holds_for_real_data());
}

#[test]
fn only_library_privatisations_of_rr_and_krr_are_recorded() {
    let key = SigningKey::generate().unwrap();
    let asserted = Provenance::asserted_by_caller(Randomizer::Rr { eps: 1.0 }).unwrap();
    assert!(matches!(
        ProvenanceRecord::new("y", &[0], &asserted, 1, WRITER),
        Err(Error::InvalidParam { .. })
    ));
    let y = [0u8, 2, 1, 2];
    let krr = KaryRr::new(0.5, 3)
        .unwrap()
        .privatize(&y, &mut NoiseRng::seeded(1))
        .unwrap();
    let rec = ProvenanceRecord::new("c.npy", &[7, 7], krr.provenance(), 4, WRITER)
        .unwrap()
        .sign(&key);
    let (p, _) = SignedRecord::from_json(&rec.to_json())
        .unwrap()
        .verify(&[7, 7], &[key.trusted_key()])
        .unwrap();
    assert_eq!(p.randomizer(), &Randomizer::Krr { eps: 0.5, k: 3 });
}

#[test]
fn the_parser_is_strict() {
    let key = SigningKey::generate().unwrap();
    let (_, _, rec) = signed(1.0, Some(1), &key);
    let cases: Vec<(JsonEdit, &str)> = vec![
        (Box::new(|v| v["extra"] = json!(1)), "unknown field `extra`"),
        (
            Box::new(|v| {
                v.as_object_mut().unwrap().remove("eps");
            }),
            "no `eps`",
        ),
        (Box::new(|v| v["version"] = json!(3)), "`version`"),
        (Box::new(|v| v["format"] = json!("x")), "not a provenance record"),
        (Box::new(|v| v["eps"] = json!(-1.0)), "invalid randomiser"),
        (Box::new(|v| v["eps"] = json!("1")), "`eps` is not a number"),
        (Box::new(|v| v["k"] = json!(2)), "`mechanism`"),
        (Box::new(|v| v["seed"] = Value::Null), "`generator`"),
        (Box::new(|v| v["labels_sha256"] = json!("00")), "`labels_sha256`"),
        (Box::new(|v| v["n"] = json!(-3)), "`n`"),
        (Box::new(|v| v["signature"]["algorithm"] = json!("rsa")), "algorithm"),
        (Box::new(|v| v["signature"]["value"] = json!("zz")), "signature.value"),
        (
            Box::new(|v| v["signature"]["key_id"] = json!("0000000000000000")),
            "key_id",
        ),
        (Box::new(|v| v["signature"]["more"] = json!(0)), "signature.more"),
        (Box::new(|v| v["signature"] = json!([])), "`signature`"),
    ];
    for (edit, needle) in cases {
        let m = record_error(SignedRecord::from_json(&edited(&rec, edit)));
        assert!(m.contains(needle), "`{needle}` not in `{m}`");
        assert!(!m.contains('\n'));
    }
    for text in ["", "[]", "null", "{", "{\"format\": \"privpref-label-provenance\"}"] {
        record_error(SignedRecord::from_json(text));
    }
    // Keys: a public key is not a secret key and the reverse; garbage is neither.
    assert!(SigningKey::from_pem(&key.trusted_key().to_pem()).is_err());
    assert!(TrustedKey::from_pem(&key.to_pem()).is_err());
    assert!(TrustedKey::from_pem("-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----\n").is_err());
}
