//! The machine and the build the report ran on.

use std::path::{Path, PathBuf};

pub(crate) fn machine() -> String {
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_owned())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_owned());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("{model}, {cores} cores")
}

pub(crate) fn command(program: &str, args: &[&str]) -> Option<String> {
    let out = std::process::Command::new(program).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_owned())
}

pub(crate) fn git_head() -> Option<String> {
    let dir = env!("CARGO_MANIFEST_DIR");
    let head = command("git", &["-C", dir, "rev-parse", "--short", "HEAD"])?;
    let dirty = command(
        "git",
        &[
            "-C",
            dir,
            "status",
            "--porcelain",
            "--",
            "src",
            "crates",
            "Cargo.toml",
        ],
    )
    .is_some_and(|s| !s.is_empty());
    Some(if dirty {
        format!("{head} + uncommitted changes")
    } else {
        head
    })
}

pub(crate) fn load_average() -> String {
    std::fs::read_to_string("/proc/loadavg")
        .map(|s| s.split_whitespace().take(3).collect::<Vec<_>>().join(" "))
        .unwrap_or_default()
}

pub(crate) fn simd_note() -> String {
    #[cfg(target_arch = "x86_64")]
    let runtime = if std::arch::is_x86_feature_detected!("avx2") {
        "AVX2 available at run time"
    } else {
        "no AVX2 at run time"
    };
    #[cfg(not(target_arch = "x86_64"))]
    let runtime = "non-x86_64";
    let compiled = if cfg!(target_feature = "avx2") {
        "compiled with AVX2 enabled (all crates use it)"
    } else {
        "compiled for the baseline target (no -C target-cpu): rpcwire and simd-json pick AVX2 at run \
         time, sonic-rs uses its compile-time SSE2 kernels"
    };
    format!("{runtime}; {compiled}")
}

pub(crate) fn now_utc() -> String {
    command("date", &["-u", "+%Y-%m-%dT%H:%M:%SZ"]).unwrap_or_default()
}

pub(crate) fn reports_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("perf-reports")
}
