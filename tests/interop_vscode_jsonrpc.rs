//! vscode-jsonrpc — the JSON-RPC library VS Code's language clients are built on — against
//! `examples/spec_server --peer`, started as an editor starts a language server (a child
//! process on stdin/stdout, Content-Length framing): cancellation with a CancellationToken,
//! and a flood of concurrent requests against a small handler limit.
#![cfg(feature = "tokio")]

#[path = "support/example_binary.rs"]
mod example_binary;
#[path = "support/node_peer.rs"]
mod node_peer;
#[path = "support/python_peer.rs"]
mod python_peer;

use std::process::Command;

use python_peer::{interop_dir, run, CHILD_TIMEOUT};
use serde_json::Value;

/// Runs `lsp_client.js` with `args` against spec_server with `server_args`; its report.
fn lsp_client(mode: &[&str], server_args: &[&str]) -> Option<Value> {
    let modules = node_peer::node_modules()?;
    let server = example_binary::example_binary("spec_server");
    let mut command = Command::new("node");
    command
        .env("NODE_PATH", &modules)
        .arg(interop_dir().join("node/lsp_client.js"))
        .args(mode)
        .arg(&server)
        .args(["--framing", "content-length", "--peer"])
        .args(server_args);
    let finished = run(&mut command, CHILD_TIMEOUT).expect("node runs");
    assert!(finished.success(), "{}", finished.describe("node lsp_client.js"));
    let line = finished.stdout.lines().last().unwrap_or_default();
    Some(serde_json::from_str(line).unwrap_or_else(|e| panic!("report {line:?}: {e}")))
}

#[test]
fn a_cancelled_sleep_is_answered_request_cancelled() {
    let Some(report) = lsp_client(&["cancel"], &["--cancel", "lsp"]) else {
        return;
    };
    assert_eq!(report["cancelled"]["code"], -32800, "{report}");
    // Cancelled after 100 ms: answered long before the 10 s sleep would have ended.
    assert!(report["elapsed_ms"].as_u64().unwrap() < 5_000, "{report}");
    assert_eq!(report["after"]["result"], 1, "the connection serves on: {report}");
    assert_eq!(report["errors"], Value::Array(vec![]), "{report}");
    assert_eq!(report["exit_code"], 0, "{report}");
}

#[test]
fn without_a_cancel_protocol_the_sleep_runs_to_its_end() {
    // The same client against a server that does not listen for $/cancelRequest: the
    // request is answered with its result, after the whole sleep (shortened: 10 s).
    let Some(report) = lsp_client(&["cancel"], &["--cancel", "none"]) else {
        return;
    };
    assert_eq!(report["cancelled"]["result"], 10_000, "{report}");
}

#[test]
fn a_flood_gets_one_answer_per_request() {
    let Some(report) = lsp_client(&["flood", "5000"], &["--max-concurrent", "8"]) else {
        return;
    };
    assert_eq!(report["settled"], 5000, "{report}");
    let by_kind = report["by_kind"].as_object().expect("by kind");
    let answered: u64 = by_kind.values().map(|n| n.as_u64().unwrap()).sum();
    assert_eq!(answered, 5000, "{report}");
    for kind in by_kind.keys() {
        assert!(
            kind == "result 20" || kind == "error -32003",
            "unexpected answer {kind}: {report}"
        );
    }
    // 8 running and 1,024 waiting at most: the rest were turned away, at once.
    assert!(by_kind.get("error -32003").is_some(), "{report}");
    assert!(by_kind["result 20"].as_u64().unwrap() >= 8, "{report}");
    // Duplicate or unmatched responses would be logged by vscode-jsonrpc.
    assert_eq!(report["errors"], Value::Array(vec![]), "{report}");
    let peak_kib = report["server_peak_rss_kib"].as_u64().expect("peak RSS read");
    assert!(peak_kib < 128 * 1024, "server peak RSS {peak_kib} KiB: {report}");
    assert_eq!(report["exit_code"], 0, "{report}");
}
