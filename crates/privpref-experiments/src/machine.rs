//! Machine facts for the headers of recorded results (benchmarks, experiment reports).

/// The CPU model name from `/proc/cpuinfo` (`"unknown CPU"` elsewhere).
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

/// Logical CPUs available to this process (0 if unknown).
pub fn logical_cpus() -> usize {
    std::thread::available_parallelism().map(|p| p.get()).unwrap_or(0)
}

/// The current date and time, UTC, as `YYYY-MM-DD HH:MM UTC` (from `date -u`; `"unknown"` if it
/// cannot run).
pub fn utc_date() -> String {
    command_line("date", &["-u", "+%Y-%m-%d %H:%M UTC"])
}

/// The kernel and architecture (`uname -srm`).
pub fn uname() -> String {
    command_line("uname", &["-srm"])
}

fn command_line(cmd: &str, args: &[&str]) -> String {
    std::process::Command::new(cmd)
        .args(args)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|s| !s.is_empty())
        .unwrap_or_else(|| "unknown".into())
}
