//! The Ethereum clients the gateway is checked against: viem and ethers.js (node modules that
//! `tests/eth/setup-node.sh` installs) and web3.py (the venv of `tests/eth/setup-python.sh`);
//! "skipped" when a setup fails outside CI. Uses `run` and `installed` from python_peer.rs,
//! which the test includes beside this file as `mod python_peer`.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Once, OnceLock};

use serde_json::Value;

use super::python_peer::{installed, run, CHILD_TIMEOUT, SETUP_TIMEOUT};

/// Where the client scripts live.
pub fn eth_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/eth"))
}

/// The installed node_modules (viem, ethers); `None` (after saying "skipped") when the setup
/// failed outside CI. With `CI` set, a failed setup panics.
pub fn node_modules() -> Option<PathBuf> {
    static MODULES: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    static SAID: Once = Once::new();
    installed(
        MODULES.get_or_init(|| setup("setup-node.sh", |modules| modules.join("viem").is_dir())),
        &SAID,
        "the gateway tests with viem and ethers.js",
    )
}

/// The venv's python (web3.py); `None` (after saying "skipped") when the setup failed
/// outside CI. With `CI` set, a failed setup panics.
pub fn python() -> Option<PathBuf> {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    static SAID: Once = Once::new();
    installed(
        PYTHON.get_or_init(|| setup("setup-python.sh", Path::is_file)),
        &SAID,
        "the gateway tests with web3.py",
    )
}

/// Runs a setup script; its last line is what it installed, which `check` looks at.
fn setup(script: &str, check: impl Fn(&Path) -> bool) -> Result<PathBuf, String> {
    let path = eth_dir().join(script);
    let finished = run(Command::new("bash").arg(&path), SETUP_TIMEOUT)
        .map_err(|e| format!("cannot run bash {}: {e}", path.display()))?;
    if !finished.success() {
        return Err(finished.describe(&format!("bash tests/eth/{script}")));
    }
    let installed = PathBuf::from(finished.stdout.lines().last().unwrap_or_default());
    if !check(&installed) {
        return Err(finished.describe(&format!("{script}'s last line is not what it installs")));
    }
    Ok(installed)
}

/// An Ethereum client.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Client {
    Viem,
    Ethers,
    Web3Py,
}

impl Client {
    pub const ALL: [Client; 3] = [Client::Viem, Client::Ethers, Client::Web3Py];

    /// Runs the client's script on `url` for `scenario`: its one JSON line (`ok`, `value`,
    /// or `status`, `code`, `text`). `None` when the client is not installed (skipped).
    pub fn run(self, url: &str, scenario: &str) -> Option<Value> {
        let mut command = match self {
            Client::Viem | Client::Ethers => {
                let modules = node_modules()?;
                let script = if self == Client::Viem {
                    "viem_client.cjs"
                } else {
                    "ethers_client.cjs"
                };
                let mut command = Command::new("node");
                command.arg(eth_dir().join(script)).env("NODE_PATH", modules);
                command
            }
            Client::Web3Py => {
                let mut command = Command::new(python()?);
                command.arg(eth_dir().join("web3_client.py"));
                command
            }
        };
        command.args([url, scenario]);
        let finished = run(&mut command, CHILD_TIMEOUT).expect("run the client");
        assert!(
            finished.success(),
            "{}",
            finished.describe(&format!("{self:?} {scenario}"))
        );
        let line = finished.stdout.lines().last().unwrap_or_default();
        Some(serde_json::from_str(line).unwrap_or_else(|e| panic!("{self:?}: {e}: {}", finished.stdout)))
    }
}
