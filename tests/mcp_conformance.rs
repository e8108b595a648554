//! The official MCP conformance suite (npm `@modelcontextprotocol/conformance`, an MCP
//! client built on the TypeScript SDK) against `examples/mcp_server --http`, started as a
//! user starts it: every server scenario of 0.1.16 (`--suite all`, the pending ones
//! included), and of 0.2.0-alpha.12 for revisions 2025-11-25 and 2026-07-28 (the stateless
//! one, served on the same endpoint). Each scenario of the earlier revisions opens its own
//! session; the DNS-rebinding scenario sends a foreign Host and Origin.
#![cfg(all(unix, feature = "mcp", feature = "http"))]

#[path = "support/example_binary.rs"]
mod example_binary;
#[path = "support/listening_child.rs"]
mod listening_child;
#[path = "support/mcp_peers.rs"]
mod mcp_peers;
#[path = "support/python_peer.rs"]
mod python_peer;

use std::process::Command;
use std::time::Duration;

use example_binary::example_binary;
use listening_child::start_listening;
use python_peer::run;

/// What one run of the suite said: each scenario with its passed and failed checks.
struct Summary {
    scenarios: Vec<(String, u32, u32)>,
    /// Every check's status, from the suite's `checks.json` files.
    statuses: Vec<String>,
    output: String,
}

/// Runs the suite's server scenarios (`package`: its directory in node_modules) against a
/// fresh `mcp_server --http`, with `extra` arguments.
fn run_suite(package: &str, extra: &[&str]) -> Option<Summary> {
    run_suite_against("mcp_server", &["--http", "127.0.0.1:0"], package, extra)
}

/// Runs the suite's server scenarios against the example `server` started with `args`.
fn run_suite_against(server: &str, args: &[&str], package: &str, extra: &[&str]) -> Option<Summary> {
    let modules = mcp_peers::node_modules()?;
    let server = start_listening(&example_binary(server), args);
    let url = server.address.clone();
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );
    // Each run its own directory: runs of one package go on at once in this process.
    static RUNS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let run_number = RUNS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let results = std::env::temp_dir().join(format!(
        "rpcwire-conformance-{}-{run_number}-{}",
        std::process::id(),
        package.replace('/', "_")
    ));
    let finished = run(
        Command::new(mcp_peers::node(&modules))
            .arg(modules.join(package).join("dist/index.js"))
            .args(["server", "--url", &url, "--suite", "all", "-o"])
            .arg(&results)
            .args(extra),
        Duration::from_secs(600),
    )
    .expect("run the conformance suite");
    let mut statuses = Vec::new();
    for scenario in std::fs::read_dir(&results).into_iter().flatten().flatten() {
        let Ok(text) = std::fs::read_to_string(scenario.path().join("checks.json")) else {
            continue;
        };
        let checks: serde_json::Value = serde_json::from_str(&text).expect("checks.json is JSON");
        for check in checks.as_array().into_iter().flatten() {
            statuses.push(check["status"].as_str().unwrap_or("?").to_owned());
        }
    }
    let _ = std::fs::remove_dir_all(&results);
    let output = format!("{}\n{}", finished.stdout, finished.stderr);
    let mut scenarios = Vec::new();
    let summary = output
        .split("=== SUMMARY ===")
        .nth(1)
        .unwrap_or_else(|| panic!("no summary:\n{output}"));
    for line in summary.lines() {
        // "✓ tools-list: 1 passed, 0 failed" (or ✗)
        let Some(rest) = line.strip_prefix("✓ ").or_else(|| line.strip_prefix("✗ ")) else {
            continue;
        };
        let (name, counts) = rest.split_once(": ").expect("name: counts");
        let numbers: Vec<u32> = counts
            .split(|c: char| !c.is_ascii_digit())
            .filter(|part| !part.is_empty())
            .map(|part| part.parse().unwrap())
            .collect();
        scenarios.push((name.to_owned(), numbers[0], numbers[1]));
    }
    drop(server);
    Some(Summary {
        scenarios,
        statuses,
        output,
    })
}

fn assert_all_pass(summary: &Summary, expected_scenarios: usize) {
    let failed: Vec<&(String, u32, u32)> = summary
        .scenarios
        .iter()
        .filter(|(_, _, failed)| *failed > 0)
        .collect();
    assert!(
        failed.is_empty(),
        "failed scenarios {failed:?}:\n{}",
        summary.output
    );
    assert_eq!(summary.scenarios.len(), expected_scenarios, "{}", summary.output);
    assert!(
        summary.scenarios.iter().all(|(_, passed, _)| *passed > 0),
        "a scenario with no passed check:\n{}",
        summary.output
    );
}

#[test]
fn every_server_scenario_of_the_suite_passes() {
    let Some(summary) = run_suite("@modelcontextprotocol/conformance", &[]) else {
        return;
    };
    assert_all_pass(&summary, 32);
    for needed in [
        "dns-rebinding-protection",
        "tools-call-with-progress",
        "tools-call-sampling",
        "server-sse-polling",
    ] {
        assert!(
            summary.scenarios.iter().any(|(name, _, _)| name == needed),
            "{needed} ran"
        );
    }
}

/// Through `examples/mcp_gateway` in front of `examples/mcp_server` over stdio, a child per
/// session (or one for all, `--shared`): every scenario of 0.1.16 passes, the DNS-rebinding
/// one included. The suite's own reference server is not published on npm (it lives in the
/// suite's repository), so rpcwire's server, which passes every scenario on its own, stands
/// in for it.
fn all_pass_through_the_gateway(extra: &[&str]) {
    let stdio_server = example_binary("mcp_server");
    let command = format!("exec '{}'", stdio_server.display());
    let mut args = vec!["--stdio", &command, "--listen", "127.0.0.1:0"];
    args.extend_from_slice(extra);
    let Some(summary) = run_suite_against("mcp_gateway", &args, "@modelcontextprotocol/conformance", &[])
    else {
        return;
    };
    assert_all_pass_through_a_gateway(&summary, 32);
    for needed in [
        "dns-rebinding-protection",
        "tools-call-with-progress",
        "tools-call-sampling",
        "tools-call-elicitation",
        "tools-call-with-logging",
    ] {
        assert!(
            summary
                .scenarios
                .iter()
                .any(|(name, passed, _)| name == needed && *passed > 0),
            "{needed} passed"
        );
    }
}

/// A run through a gateway: every one of `expected` scenarios passes, with a passed check
/// but the SSE-polling one (only INFO checks when the answer is JSON: a stdio server cannot
/// close the HTTP stream itself), and no check warns, fails or is skipped.
fn assert_all_pass_through_a_gateway(summary: &Summary, expected: usize) {
    let failed: Vec<&(String, u32, u32)> = summary
        .scenarios
        .iter()
        .filter(|(_, _, failed)| *failed > 0)
        .collect();
    assert!(
        failed.is_empty(),
        "failed scenarios {failed:?}:\n{}",
        summary.output
    );
    assert_eq!(summary.scenarios.len(), expected, "{}", summary.output);
    for (name, passed, _) in &summary.scenarios {
        assert!(
            *passed > 0 || name == "server-sse-polling",
            "{name} has no passed check:\n{}",
            summary.output
        );
    }
    assert_no_doubtful_check(summary);
}

/// No check warns, fails or is skipped (and the checks were read).
fn assert_no_doubtful_check(summary: &Summary) {
    assert!(!summary.statuses.is_empty(), "checks.json read");
    let doubtful: Vec<&String> = summary
        .statuses
        .iter()
        .filter(|status| !matches!(status.as_str(), "SUCCESS" | "INFO"))
        .collect();
    assert!(
        doubtful.is_empty(),
        "no warning, failure or skip: {doubtful:?}\n{}",
        summary.output
    );
}

#[test]
fn every_server_scenario_passes_through_the_gateway() {
    all_pass_through_the_gateway(&[]);
}

#[test]
fn every_server_scenario_passes_through_the_gateway_with_a_shared_child() {
    all_pass_through_the_gateway(&["--shared"]);
}

#[test]
fn every_2025_11_25_scenario_of_the_next_suite_passes() {
    let Some(summary) = run_suite("conformance-next", &["--spec-version", "2025-11-25"]) else {
        return;
    };
    assert_all_pass(&summary, 33);
    assert!(summary
        .scenarios
        .iter()
        .any(|(name, _, _)| name == "server-session-lifecycle"));
}

#[test]
fn every_2026_07_28_scenario_of_the_next_suite_passes() {
    let Some(summary) = run_suite("conformance-next", &["--spec-version", "2026-07-28"]) else {
        return;
    };
    assert_all_pass(&summary, 40);
    for needed in [
        "server-stateless",
        "caching",
        "http-header-validation",
        "http-custom-header-server-validation",
        "input-required-result-tampered-state",
        "input-required-result-non-tool-request",
    ] {
        assert!(
            summary.scenarios.iter().any(|(name, _, _)| name == needed),
            "{needed} ran"
        );
    }
    assert_no_doubtful_check(&summary);
}

/// Through `examples/mcp_gateway` in front of `examples/mcp_server` over stdio, the next
/// suite's scenarios of `version`: for 2026-07-28 the stateless revision forwarded (headers
/// checked at the gateway, the servers' input-required results, caching hints and errors
/// passed on), for 2025-11-25 the session lifecycle.
fn next_suite_through_the_gateway(version: &str, expected: usize) -> Option<Summary> {
    let stdio_server = example_binary("mcp_server");
    let command = format!("exec '{}'", stdio_server.display());
    let args = ["--stdio", command.as_str(), "--listen", "127.0.0.1:0"];
    let summary = run_suite_against(
        "mcp_gateway",
        &args,
        "conformance-next",
        &["--spec-version", version],
    )?;
    assert_all_pass_through_a_gateway(&summary, expected);
    Some(summary)
}

#[test]
fn every_2026_07_28_scenario_of_the_next_suite_passes_through_the_gateway() {
    if let Some(summary) = next_suite_through_the_gateway("2026-07-28", 40) {
        for needed in [
            "server-stateless",
            "http-custom-header-server-validation",
            "input-required-result-tampered-state",
        ] {
            assert!(
                summary.scenarios.iter().any(|(name, _, _)| name == needed),
                "{needed} ran"
            );
        }
    }
}

#[test]
fn every_2025_11_25_scenario_of_the_next_suite_passes_through_the_gateway() {
    next_suite_through_the_gateway("2025-11-25", 33);
}
