//! The Node.js peers of the interop tests: the node_modules `tests/interop/setup-node.sh`
//! installs (vscode-jsonrpc), or "skipped" when the setup fails outside CI. Uses `run` from
//! python_peer.rs, which the test includes beside this file as `mod python_peer`.

use std::path::PathBuf;
use std::process::Command;
use std::sync::{Once, OnceLock};

use super::python_peer::{installed, interop_dir, run, SETUP_TIMEOUT};

/// The node_modules directory for `NODE_PATH`; `None` (after saying "skipped") when the
/// setup failed outside CI. With `CI` set, a failed setup panics.
pub fn node_modules() -> Option<PathBuf> {
    static MODULES: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    static SAID: Once = Once::new();
    installed(
        MODULES.get_or_init(setup),
        &SAID,
        "the interop tests with vscode-jsonrpc",
    )
}

fn setup() -> Result<PathBuf, String> {
    let script = interop_dir().join("setup-node.sh");
    let finished = run(Command::new("bash").arg(&script), SETUP_TIMEOUT)
        .map_err(|e| format!("cannot run bash {}: {e}", script.display()))?;
    if !finished.success() {
        return Err(finished.describe("bash tests/interop/setup-node.sh"));
    }
    let modules = PathBuf::from(finished.stdout.lines().last().unwrap_or_default());
    if !modules.join("vscode-jsonrpc").is_dir() {
        return Err(finished.describe("setup-node.sh's last line is not a node_modules with vscode-jsonrpc"));
    }
    Ok(modules)
}
