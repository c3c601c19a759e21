//! Writes BTL preference data as `.npy` files for `privpref fit`: `DIR/x.npy` (`n × d` feature
//! differences) and `DIR/y.npy` (labels, `uint8`). The data are those of `examples/large_fit`:
//! `θ*` of norm 1 on the sum-zero plane from `simulation_rng(1)`, the pairs from
//! `simulation_rng(2)`.
//!
//! Usage: `cargo run --release -p privpref-cli --example btl_npy -- N D DIR [f32] [fortran]`.
//! `f32` stores the features as `float32` (rounded from the `float64` draws); `fortran` stores
//! them in column-major order (a file `privpref fit` cannot map and reads a copy of). The data
//! start at a multiple of 64 bytes, as NumPy writes them.

use privpref::data::npy::{self, header};
use privpref::mechanism::simulation_rng;
use privpref::sim::{btl_pairs, theta_star};
use std::io::Write;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: btl_npy N D DIR [f32] [fortran]";
    let (n, d, dir) = match &args[..] {
        [n, d, dir, ..] => (n.parse::<usize>()?, d.parse::<usize>()?, std::path::PathBuf::from(dir)),
        _ => return Err(usage.into()),
    };
    let f32_data = args[3..].iter().any(|a| a == "f32");
    let fortran = args[3..].iter().any(|a| a == "fortran");
    if let Some(a) = args[3..].iter().find(|a| !matches!(a.as_str(), "f32" | "fortran")) {
        return Err(format!("unknown option `{a}`; {usage}").into());
    }
    std::fs::create_dir_all(&dir)?;
    let theta = theta_star(d, 1.0, true, &mut simulation_rng(1))?;
    let p = btl_pairs(n, &theta, &mut simulation_rng(2))?;
    npy::write_u8(dir.join("y.npy"), &p.y)?;

    let dtype = header::Dtype {
        kind: header::Kind::Float,
        size: if f32_data { 4 } else { 8 },
        big_endian: false,
    };
    let mut head = header::format(dtype, &[n as u64, d as u64]);
    if fortran {
        // "True " has the length of "False": the header keeps its padded length.
        let (from, to) = (b"'fortran_order': False", b"'fortran_order': True ");
        let at = head
            .windows(from.len())
            .position(|w| w == from)
            .ok_or("no fortran_order in the header")?;
        head[at..at + to.len()].copy_from_slice(to);
    }
    let mut w = std::io::BufWriter::new(std::fs::File::create(dir.join("x.npy"))?);
    w.write_all(&head)?;
    // Element (i, j) of the row-major data; column by column for Fortran order.
    let order: Box<dyn Iterator<Item = usize>> = if fortran {
        Box::new((0..d).flat_map(|j| (0..n).map(move |i| i * d + j)))
    } else {
        Box::new(0..n * d)
    };
    for k in order {
        if f32_data {
            w.write_all(&(p.x[k] as f32).to_le_bytes())?;
        } else {
            w.write_all(&p.x[k].to_le_bytes())?;
        }
    }
    w.flush()?;
    eprintln!(
        "wrote {} ({n} × {d}, {}{}) and {}",
        dir.join("x.npy").display(),
        if f32_data { "float32" } else { "float64" },
        if fortran { ", Fortran order" } else { "" },
        dir.join("y.npy").display()
    );
    Ok(())
}
