//! The PLD accountant against `dp_accounting` and the RDP accountant, the σ it saves for
//! user-wise DP-SGD, and the time of one ε evaluation: the numbers of
//! `bench-results/accounting.md`.
//!
//! `cargo run --release --example pld_accounting`

use privpref::privacy::pld::PldAccountant;
use privpref::privacy::rdp::{Accountant, Accounting, Neighbours};
use std::time::Instant;

fn rdp(n: Neighbours) -> Accountant {
    let mut a = Accountant::default();
    a.neighbours = n;
    a
}

fn pld(n: Neighbours) -> Accountant {
    let mut a = rdp(n);
    a.accounting = Accounting::Pld;
    a
}

fn main() -> privpref::Result<()> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/pld_reference.json");
    let reference: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(path).expect("reference")).expect("json");
    println!(
        "| relation | q | σ | T | δ | ε PLD (ours) | ε dp_accounting | Δε | ε RDP | RDP/PLD | time of one ε (ours) |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for p in reference["points"].as_array().expect("points") {
        let g = |k: &str| p[k].as_f64().expect("number");
        let (q, s, t, d) = (g("q"), g("sigma"), p["steps"].as_u64().expect("steps"), g("delta"));
        let name = p["neighbours"].as_str().expect("name");
        let n = Neighbours::parse(name)?;
        let started = Instant::now();
        let ours = PldAccountant::new(n).epsilon(q, s, t, d)?.epsilon;
        let secs = started.elapsed().as_secs_f64();
        // RDP for the same pair: add/remove, or the antipodal pair by quadrature.
        let rdp_rel = if n == Neighbours::AddRemove {
            Neighbours::AddRemove
        } else {
            Neighbours::ReplaceNumeric
        };
        let r = rdp(rdp_rel).epsilon(q, s, t, d)?.epsilon;
        let theirs = g("epsilon");
        println!(
            "| {name} | {q} | {s} | {t} | {d:e} | {ours:.4} | {theirs:.4} | {:.1e} | {r:.4} | {:.2} | {:.2} s |",
            ours - theirs,
            r / ours,
            secs
        );
    }
    // The floating-point term at the headline point (module docs of `privacy::pld`).
    let pld_ar = PldAccountant::new(Neighbours::AddRemove).distribution(0.001, 0.8, 10_000)?;
    for (name, d) in ["remove", "add"].iter().zip(pld_ar.directions()) {
        println!(
            "\nq = 0.001, σ = 0.8, T = 10 000, {name}: {} grid points, mass at +∞ {:.2e}, FFT error bound (ℓ₂) {:.2e}, ε(1e-5) {:.5}",
            d.masses().len(),
            d.infinity_mass(),
            d.fp_error(),
            d.epsilon(1e-5)
        );
    }
    println!();
    println!("σ for user-wise DP-SGD, q = 0.05, T = 400, δ = 1e-5:");
    println!();
    println!("| ε | relation | σ RDP | σ PLD | PLD/RDP | time of the PLD calibration |");
    println!("|---|---|---|---|---|---|");
    let (q, t, d) = (0.05, 400u64, 1e-5);
    for eps in [3.0, 8.0] {
        for (label, n_rdp, n_pld) in [
            ("add-remove", Neighbours::AddRemove, Neighbours::AddRemove),
            (
                "replace: RDP proven bound vs PLD antipodal pair",
                Neighbours::Replace,
                Neighbours::Replace,
            ),
            (
                "replace: RDP antipodal pair vs PLD antipodal pair",
                Neighbours::ReplaceNumeric,
                Neighbours::ReplaceNumeric,
            ),
        ] {
            let sr = rdp(n_rdp).calibrate_sigma(q, t, eps, d)?.noise_multiplier;
            let started = Instant::now();
            let sp = pld(n_pld).calibrate_sigma(q, t, eps, d)?.noise_multiplier;
            let secs = started.elapsed().as_secs_f64();
            println!("| {eps} | {label} | {sr:.4} | {sp:.4} | {:.3} | {secs:.1} s |", sp / sr);
        }
    }
    Ok(())
}
