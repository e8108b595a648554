//! The official MCP conformance suite's client scenarios (npm
//! `@modelcontextprotocol/conformance` 0.1.16 and 0.2.0-alpha.12, `client --suite all`)
//! with `examples/mcp_client` as the client, started as the suite starts any client: every
//! scenario passes — OAuth (discovery, registration, PKCE, scopes, issuer checks, client
//! credentials, enterprise and workload grants, DPoP), the HTTP header scenarios, JSON Schema
//! preservation, skills.
//!
//! The suite's test servers listen on every interface: the suite runs in a network
//! namespace of its own with only loopback (`unshare -n`) where that is allowed (root).
#![cfg(all(unix, feature = "auth"))]

#[path = "support/example_binary.rs"]
mod example_binary;
#[path = "support/mcp_peers.rs"]
mod mcp_peers;
#[path = "support/python_peer.rs"]
mod python_peer;

use std::process::Command;
use std::time::Duration;

use example_binary::example_binary;
use python_peer::run;

/// The client metadata document the suite's CIMD scenario expects a client to name itself by
/// (its authorization server never fetches it).
const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// Whether this process may make a network namespace with only loopback in it.
fn loopback_only_available() -> bool {
    Command::new("unshare")
        .args(["-n", "sh", "-c", "ip link set lo up"])
        .output()
        .is_ok_and(|output| output.status.success())
}

/// Each scenario's name, and its passed and failed checks.
type Scenarios = Vec<(String, u32, u32)>;

/// Runs `client --suite all` of `package` with the example client: its scenarios, from the
/// suite's summary, and the suite's output.
fn client_suite(package: &str) -> Option<(Scenarios, String)> {
    let modules = mcp_peers::node_modules()?;
    let client = example_binary("mcp_client");
    let results = std::env::temp_dir().join(format!(
        "rpcwire-client-suite-{}-{}",
        std::process::id(),
        package.replace('/', "_")
    ));
    let command_line = format!("{} --client-metadata-url {CLIENT_METADATA_URL}", client.display());
    let suite = [
        mcp_peers::node(&modules).display().to_string(),
        modules.join(package).join("dist/index.js").display().to_string(),
        "client".into(),
        "--suite".into(),
        "all".into(),
        "--command".into(),
        command_line,
        "-o".into(),
        results.display().to_string(),
    ];
    let mut command = if loopback_only_available() {
        let mut command = Command::new("unshare");
        command.args(["-n", "sh", "-c", r#"ip link set lo up && exec "$@""#, "sh"]);
        command
    } else {
        eprintln!("no network namespace here (not root): the suite's servers listen on every interface");
        let mut command = Command::new("env");
        command.arg("--");
        command
    };
    let finished = run(command.args(&suite), Duration::from_secs(300)).expect("run the conformance suite");
    let _ = std::fs::remove_dir_all(&results);
    let output = format!("{}\n{}", finished.stdout, finished.stderr);
    let summary = output
        .split("=== SUITE SUMMARY ===")
        .nth(1)
        .unwrap_or_else(|| panic!("no suite summary:\n{output}"));
    // `✓ name: 18 passed, 0 failed`
    let scenarios = summary
        .lines()
        .filter_map(|line| {
            let line = line.trim().trim_start_matches(['✓', '✗']).trim();
            let (name, counts) = line.split_once(": ")?;
            let numbers: Vec<u32> = counts
                .split(|c: char| !c.is_ascii_digit())
                .filter(|part| !part.is_empty())
                .filter_map(|part| part.parse().ok())
                .collect();
            (counts.contains("passed") && numbers.len() == 2)
                .then(|| (name.to_owned(), numbers[0], numbers[1]))
        })
        .collect();
    Some((scenarios, output))
}

/// Every one of `expected` scenarios passed with at least one passed check and none failed.
fn assert_every_scenario_passes(package: &str, expected: usize) {
    let Some((scenarios, output)) = client_suite(package) else {
        return;
    };
    let failed: Vec<&(String, u32, u32)> = scenarios.iter().filter(|(_, _, failed)| *failed > 0).collect();
    assert!(failed.is_empty(), "failed scenarios {failed:?}:\n{output}");
    assert_eq!(scenarios.len(), expected, "{output}");
    let empty: Vec<&str> = scenarios
        .iter()
        .filter(|(_, passed, _)| *passed == 0)
        .map(|(name, _, _)| name.as_str())
        .collect();
    assert!(
        empty.is_empty(),
        "scenarios with no passed check {empty:?}:\n{output}"
    );
    let checks: u32 = scenarios.iter().map(|(_, passed, _)| passed).sum();
    eprintln!(
        "{package}: {} scenarios, {checks} checks passed, 0 failed",
        scenarios.len()
    );
}

#[test]
fn every_client_scenario_of_the_released_suite_passes() {
    assert_every_scenario_passes("@modelcontextprotocol/conformance", 26);
}

#[test]
fn every_client_scenario_of_the_next_suite_passes() {
    assert_every_scenario_passes("conformance-next", 48);
}
