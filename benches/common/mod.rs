//! Helpers shared by the benches that write `bench-results/*.md`.

/// Mean time (ns) criterion recorded for the benchmark id `id` (`group/function[/param]`).
pub fn mean_ns(id: &str) -> Option<f64> {
    let dir = std::env::var("CARGO_TARGET_DIR").unwrap_or_else(|_| "target".into());
    let s = std::fs::read_to_string(format!("{dir}/criterion/{id}/new/estimates.json")).ok()?;
    let i = s.find("\"mean\"")?;
    let j = s[i..].find("\"point_estimate\":")? + i + "\"point_estimate\":".len();
    let end = s[j..].find([',', '}'])? + j;
    s[j..end].trim().parse().ok()
}

/// The CPU model name from `/proc/cpuinfo`.
pub fn cpu_name() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .map(|l| l.split(':').nth(1).unwrap_or("").trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into())
}

/// Logical CPUs.
pub fn logical_cpus() -> usize {
    std::thread::available_parallelism().map(|p| p.get()).unwrap_or(0)
}

/// The current date and time, UTC.
pub fn utc_date() -> String {
    std::process::Command::new("date")
        .args(["-u", "+%Y-%m-%d %H:%M UTC"])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}

/// Writes `bench-results/{name}` (relative to the crate root, where `cargo bench` runs).
pub fn write_result(name: &str, text: &str) {
    let _ = std::fs::create_dir_all("bench-results");
    let path = format!("bench-results/{name}");
    if std::fs::write(&path, text).is_ok() {
        eprintln!("wrote {path}");
    }
}
