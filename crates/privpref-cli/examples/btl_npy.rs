//! Writes BTL preference data as `.npy` files for `privpref fit`: `DIR/x.npy` (`n × d` feature
//! differences) and `DIR/y.npy` (labels, `uint8`). The data are those of `examples/large_fit`:
//! `θ*` of norm 1 on the sum-zero plane from `simulation_rng(1)`, the pairs from
//! `simulation_rng(2)`.
//!
//! Usage: `cargo run --release -p privpref-cli --example btl_npy -- N D DIR [f32] [fortran]`.
//! `f32` stores the features as `float32` (rounded from the `float64` draws); `fortran` stores
//! them in column-major order (a file `privpref fit` cannot map and reads a copy of). The data
//! start at a multiple of 64 bytes, as NumPy writes them.
//!
//! In C order the rows are drawn and written 65 536 at a time, so the memory needed is that of
//! the labels plus one chunk whatever `N` is (files larger than RAM can be written). The
//! generator draws row by row, so the chunks are the same numbers as one draw of `N` rows.

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
    let mut rng = simulation_rng(2);

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
    let put = |w: &mut std::io::BufWriter<std::fs::File>, v: f64| {
        if f32_data {
            w.write_all(&(v as f32).to_le_bytes())
        } else {
            w.write_all(&v.to_le_bytes())
        }
    };
    let y = if fortran {
        // Element (i, j) of the row-major data, column by column: needs all rows at once.
        let p = btl_pairs(n, &theta, &mut rng)?;
        for j in 0..d {
            for i in 0..n {
                put(&mut w, p.x[i * d + j])?;
            }
        }
        p.y
    } else {
        const CHUNK: usize = 1 << 16;
        let mut y = Vec::with_capacity(n);
        let mut done = 0;
        while done < n {
            let p = btl_pairs(CHUNK.min(n - done), &theta, &mut rng)?;
            for &v in &p.x {
                put(&mut w, v)?;
            }
            y.extend_from_slice(&p.y);
            done += p.n;
        }
        y
    };
    w.flush()?;
    npy::write_u8(dir.join("y.npy"), &y)?;
    eprintln!(
        "wrote {} ({n} × {d}, {}{}) and {}",
        dir.join("x.npy").display(),
        if f32_data { "float32" } else { "float64" },
        if fortran { ", Fortran order" } else { "" },
        dir.join("y.npy").display()
    );
    Ok(())
}
