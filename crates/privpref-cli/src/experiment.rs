//! `privpref experiment NAME`: one command per paper experiment (see
//! `privpref_experiments::paper`), with a progress bar on stderr, writing Markdown, CSV and SVG
//! files into `--out-dir` (default `bench-results`).

use clap::Args;
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use privpref::{Error, Result};
use privpref_experiments::machine;
use privpref_experiments::paper::{PaperExperiment, PaperOptions};
use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Instant;

#[derive(Args)]
pub struct ExperimentArgs {
    /// fig1 (Chowdhury, Zhou & Natarajan 2024, Figure 1) | rates (rate predictions with CIs) |
    /// robust (Zhou, Wu & Orabona 2025, CTL/LTC) | dpo (Zhou, Wu & Orabona 2025, DPO reduction) |
    /// all.
    name: String,
    /// Repetitions (default: each experiment's own; fig1 and rates 100, robust 20, dpo 20).
    #[arg(long)]
    reps: Option<usize>,
    /// Base seed.
    #[arg(long, default_value_t = 2025)]
    seed: u64,
    /// Output directory.
    #[arg(long, default_value = "bench-results")]
    out_dir: PathBuf,
    /// Worker threads, 1 to 256 (default: all cores).
    #[arg(long)]
    threads: Option<usize>,
}

pub fn run(a: ExperimentArgs) -> Result<()> {
    let list: Vec<PaperExperiment> = if a.name == "all" {
        PaperExperiment::ALL.to_vec()
    } else {
        vec![PaperExperiment::parse(&a.name)?]
    };
    if a.reps == Some(0) {
        return Err(Error::param("reps", "must be at least 1"));
    }
    let pool = crate::pool(a.threads)?;
    std::fs::create_dir_all(&a.out_dir).map_err(|e| Error::Io {
        path: a.out_dir.display().to_string(),
        message: e.to_string(),
    })?;
    for exp in list {
        let reps = a.reps.map_or(String::new(), |r| format!(" --reps {r}"));
        let opts = PaperOptions {
            reps: a.reps,
            seed: a.seed,
            header: format!(
                "Machine: {} ({} logical CPUs, {} worker threads). Date: {}. Command: `privpref experiment {}{reps} --seed {}`.",
                machine::cpu_name(),
                machine::logical_cpus(),
                pool.current_num_threads(),
                machine::utc_date(),
                exp.name(),
                a.seed
            ),
        };
        let target = if std::io::stderr().is_terminal() {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        let bar = ProgressBar::with_draw_target(Some(exp.jobs(&opts)), target);
        bar.set_style(
            ProgressStyle::with_template("{msg} [{elapsed_precise}] {wide_bar} {pos}/{len} eta {eta}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        bar.set_message(exp.name());
        let t0 = Instant::now();
        let files = pool.install(|| exp.run(&opts, &|| bar.inc(1)));
        bar.finish_and_clear();
        let secs = t0.elapsed().as_secs_f64();
        for (name, text) in files? {
            let text = if name.ends_with(".md") {
                format!(
                    "{text}
Wall time of the whole experiment: {secs:.1} s.\n"
                )
            } else {
                text
            };
            let path = a.out_dir.join(&name);
            super::atomic::write_bytes(&path, text.as_bytes())?;
            eprintln!("privpref: wrote {}", path.display());
        }
        eprintln!("privpref: experiment {} took {secs:.1} s", exp.name());
    }
    Ok(())
}
