//! Interop with a JSON-RPC implementation written elsewhere: python-lsp-jsonrpc
//! (`pylsp_jsonrpc`, Content-Length framing over streams), as the peer in both directions.
//!
//! - `python_client_calls_rpcwire_server`: `tests/interop/py_client.py` runs the
//!   `spec_server` example as its child and checks its answers through pylsp_jsonrpc's
//!   `Endpoint` (subtract, sum, get_data, echo, notifications, -32601, -32602);
//!   `python_client_calls_rpcwire_peer_over_stdio` (`tokio` feature) does the same with the
//!   server serving through `Peer` over the stdio transport (`spec_server --peer`).
//! - `rpcwire_client_calls_python_server` (`tokio` feature): the `stdio_client` example
//!   runs `tests/interop/py_server.py` as its child and makes 10,000 `subtract` calls.
//!
//! The Python packages are pinned in `tests/interop/requirements.txt` and installed into a
//! venv in the target directory by `tests/interop/setup.sh` (run once per test binary).
//! When that fails (no Python, no network), the tests fail if `CI` is set and otherwise say
//! "skipped" on stderr and pass. Every child process is killed after a timeout.
#![cfg(unix)]

#[path = "support/example_binary.rs"]
mod example_binary;
#[path = "support/python_peer.rs"]
mod python_peer;

use std::collections::HashMap;
use std::process::Command;

use example_binary::example_binary;
use python_peer::{interop_dir, python, run, Finished, CHILD_TIMEOUT};

/// The `key=value` fields of the first stdout line starting with `prefix`.
fn summary<'a>(stdout: &'a str, prefix: &str, finished: &Finished) -> HashMap<&'a str, &'a str> {
    let line = stdout
        .lines()
        .find(|line| line.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting {prefix:?}\n{}", finished.describe("output")));
    line[prefix.len()..]
        .split_whitespace()
        .filter_map(|field| field.split_once('='))
        .collect()
}

fn number<T: std::str::FromStr>(fields: &HashMap<&str, &str>, key: &str) -> T {
    fields
        .get(key)
        .and_then(|value| value.parse().ok())
        .unwrap_or_else(|| panic!("no number {key}=… in the summary: {fields:?}"))
}

#[test]
fn python_client_calls_rpcwire_server() {
    python_client_calls(&[]);
}

/// The same server through `rpcwire::transport::Peer` over the stdio transport.
#[cfg(feature = "tokio")]
#[test]
fn python_client_calls_rpcwire_peer_over_stdio() {
    python_client_calls(&["--peer"]);
}

fn python_client_calls(server_args: &[&str]) {
    let Some(python) = python() else { return };
    let server = example_binary("spec_server");
    let finished = run(
        Command::new(&python)
            .arg(interop_dir().join("py_client.py"))
            .arg(&server)
            .args(["--framing", "content-length"])
            .args(server_args),
        CHILD_TIMEOUT,
    )
    .expect("run py_client.py");
    assert!(finished.success(), "{}", finished.describe("py_client.py"));

    let fields = summary(&finished.stdout, "py_client: ok ", &finished);
    assert_eq!(number::<u64>(&fields, "subtract"), 1000, "{fields:?}");
    assert_eq!(number::<u64>(&fields, "subtract_pipelined"), 500, "{fields:?}");
    let requests: u64 = number(&fields, "requests");
    assert!(requests > 1000, "{fields:?}");
    assert_eq!(
        number::<u64>(&fields, "answers"),
        requests,
        "one answer per request"
    );
    for checked in [
        "sum",
        "get_data",
        "echo",
        "notifications",
        "method_not_found",
        "invalid_params",
    ] {
        assert!(number::<u64>(&fields, checked) > 0, "{checked}: {fields:?}");
    }
    assert_eq!(fields.get("server_exit"), Some(&"0"), "{fields:?}");
}

/// `stdio_client` is a `tokio`-feature example (`required-features`).
#[cfg(feature = "tokio")]
#[test]
fn rpcwire_client_calls_python_server() {
    let Some(python) = python() else { return };
    let client = example_binary("stdio_client");
    let finished = run(
        Command::new(&client)
            .arg("--")
            .arg(&python)
            .arg(interop_dir().join("py_server.py")),
        CHILD_TIMEOUT,
    )
    .expect("run stdio_client");
    assert!(finished.success(), "{}", finished.describe("stdio_client"));

    let fields = summary(&finished.stdout, "stdio_client:", &finished);
    assert_eq!(number::<u64>(&fields, "calls"), 10_000, "{fields:?}");
    assert_eq!(number::<u64>(&fields, "errors"), 0, "{fields:?}");
    let calls_per_s: f64 = number(&fields, "calls_per_s");
    assert!(calls_per_s.is_finite() && calls_per_s > 0.0, "{fields:?}");
    let (p50, p99): (f64, f64) = (number(&fields, "p50_us"), number(&fields, "p99_us"));
    assert!(p50 > 0.0 && p50 <= p99 && p99.is_finite(), "{fields:?}");
}
