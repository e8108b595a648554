//! Locates an example's binary for the tests that run it as a child process
//! (`#[path]`-included by the `tests/example_*.rs` tests).

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// The binary of `examples/<name>.rs`.
///
/// `cargo test` builds the examples next to the test binaries (target/<profile>/examples),
/// but not when it runs only some tests (`--test NAME`, `--tests` as cargo-llvm-cov runs
/// it), which would leave a missing or stale binary. So this asks cargo once per example to
/// build it with the same cargo, target directory, profile and features (a quick no-op when
/// it is up to date).
pub fn example_binary(name: &str) -> PathBuf {
    static BINARIES: OnceLock<Mutex<HashMap<String, PathBuf>>> = OnceLock::new();
    // Held while building: one cargo at a time, and each example is built once.
    let mut binaries = BINARIES
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(binary) = binaries.get(name) {
        return binary.clone();
    }
    let test_binary = std::env::current_exe().expect("test binary path");
    let profile_dir = test_binary
        .parent()
        .and_then(|deps| deps.parent())
        .expect("target/<profile>");
    let binary = profile_dir
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    {
        let mut build = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
        // Without the package variables cargo set for this test or bench: a build script
        // that watches them (ring's) would otherwise see them change between this build and
        // a plain `cargo` command, and rebuild (ring, rustls, jsonrpsee: over a minute).
        for (variable, _) in std::env::vars_os() {
            let text = variable.to_string_lossy();
            if text.starts_with("CARGO_PKG_")
                || [
                    "CARGO_MANIFEST_DIR",
                    "CARGO_MANIFEST_PATH",
                    "CARGO_CRATE_NAME",
                    "CARGO_PRIMARY_PACKAGE",
                ]
                .contains(&text.as_ref())
            {
                build.env_remove(&variable);
            }
        }
        build
            .args(["build", "--example", name, "--manifest-path"])
            .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml"))
            .arg("--target-dir")
            .arg(profile_dir.parent().expect("target dir"));
        if profile_dir.ends_with("release") {
            build.arg("--release");
        }
        let features: Vec<&str> = [
            ("tokio", cfg!(feature = "tokio")),
            ("http", cfg!(feature = "http")),
            ("metrics", cfg!(feature = "metrics")),
            ("mcp", cfg!(feature = "mcp")),
            ("redis", cfg!(feature = "redis")),
            ("auth", cfg!(feature = "auth")),
        ]
        .into_iter()
        .filter_map(|(name, on)| on.then_some(name))
        .collect();
        if !features.is_empty() {
            build.args(["--features", &features.join(",")]);
        }
        let status = build
            .status()
            .unwrap_or_else(|e| panic!("run cargo build --example {name}: {e}"));
        assert!(status.success(), "cargo build --example {name} failed");
    }
    assert!(binary.exists(), "{} is missing", binary.display());
    binaries.insert(name.to_owned(), binary.clone());
    binary
}
