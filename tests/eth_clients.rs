//! `examples/gateway` in front of an Ethereum node, driven by the clients applications use —
//! viem and ethers.js (npm, pinned) and web3.py (PyPI, pinned) — each run the same way going
//! direct and through the gateway: what the client ends with must be the same, and the
//! provider's key (in the upstream's URL path, as providers have it) must appear in nothing
//! the client sees.
//!
//! Rate limits: the node refuses every request with `429`, `Retry-After: 1` and a -32005 body
//! for a while; the gateway pauses it and answers `429` with `Retry-After` itself, so that
//! each client backs off and retries as it does going direct (before, it got HTTP 200 and
//! -32011, which no client retries).
#![cfg(feature = "http")]

#[path = "support/eth_node.rs"]
mod eth_node;
#[path = "support/eth_peers.rs"]
mod eth_peers;
#[path = "support/example_binary.rs"]
mod example_binary;
#[path = "support/listening_child.rs"]
mod listening_child;
#[path = "support/python_peer.rs"]
mod python_peer;

use std::time::Duration;

use eth_node::{EthNode, BLOCK_NUMBER};
use eth_peers::Client;
use example_binary::example_binary;
use listening_child::{start_listening, Listening};
use serde_json::Value;

const KEY: &str = "SECRET-KEY-7f3a9c41d2";

/// The node's URL with the key in its path, as a provider gives it.
fn keyed(node: &EthNode) -> String {
    format!("{}/v3/{KEY}", node.base)
}

fn gateway(upstream: &str) -> Listening {
    start_listening(
        &example_binary("gateway"),
        &["--listen", "127.0.0.1:0", "--upstream", upstream],
    )
}

/// What a client ended with, to compare: its value, or the HTTP status it failed with.
fn outcome(report: &Value) -> Value {
    match report["ok"].as_bool() {
        Some(true) => report["value"].clone(),
        _ => serde_json::json!({ "failed with status": report["status"] }),
    }
}

#[test]
fn a_rate_limited_provider_is_retried_by_each_client_through_the_gateway_as_going_direct() {
    let node = EthNode::start();
    let front = gateway(&keyed(&node));
    let through = format!("http://{}/", front.address);
    for client in Client::ALL {
        // Refused for 1 s: viem waits the Retry-After (1 s) and web3.py backs off (0.125 s,
        // doubling: 1.875 s by its fifth attempt), then get their answer.
        node.reset();
        node.refuse_for(Duration::from_secs(1));
        let Some(direct) = client.run(&keyed(&node), "block") else {
            return; // not installed: said "skipped"
        };
        let (direct_posts, direct_refused) = node.posts();

        node.reset();
        node.refuse_for(Duration::from_secs(1));
        let gatewayed = client.run(&through, "block").unwrap();
        let (posts, refused) = node.posts();

        assert_eq!(
            outcome(&gatewayed),
            outcome(&direct),
            "{client:?}: {gatewayed} / {direct}"
        );
        assert!(refused >= 1, "{client:?}: the node refused nothing");
        assert!(!gatewayed.to_string().contains(KEY), "{client:?}: {gatewayed}");
        // While the node is paused the gateway answers the client's retries itself.
        assert!(
            posts <= direct_posts,
            "{client:?}: {posts} posts through the gateway, {direct_posts} direct"
        );
        eprintln!(
            "{client:?}: {} — direct {direct_posts} posts ({direct_refused} refused), through the gateway {posts} ({refused} refused)",
            outcome(&gatewayed)
        );
    }
    assert_eq!(
        outcome(&Client::Viem.run(&through, "block").unwrap()),
        Value::from(BLOCK_NUMBER.to_string())
    );
}

#[test]
fn a_provider_over_its_limit_for_good_fails_each_client_with_the_429_it_gets_going_direct() {
    let node = EthNode::start();
    node.refuse_for(Duration::from_secs(600));
    let front = gateway(&keyed(&node));
    let through = format!("http://{}/", front.address);
    for client in Client::ALL {
        let Some(direct) = client.run(&keyed(&node), "block") else {
            return;
        };
        let gatewayed = client.run(&through, "block").unwrap();
        assert_eq!(gatewayed["ok"], false, "{client:?}: {gatewayed}");
        assert_eq!(
            outcome(&gatewayed),
            outcome(&direct),
            "{client:?}: {gatewayed} / {direct}"
        );
        assert_eq!(gatewayed["status"], 429, "{client:?}: {gatewayed}");
        assert!(!gatewayed.to_string().contains(KEY), "{client:?}: {gatewayed}");
    }
}

#[test]
fn each_clients_batch_of_a_thousand_reaches_the_node_as_one_batch_through_the_gateway() {
    let node = EthNode::start();
    let whole = start_listening(
        &example_binary("gateway"),
        &[
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &keyed(&node),
            "--max-batch",
            "1000",
        ],
    );
    let split = gateway(&keyed(&node));
    for client in Client::ALL {
        node.reset();
        let Some(direct) = client.run(&keyed(&node), "batch") else {
            return;
        };
        let (direct_posts, _) = node.posts();
        assert_eq!(
            direct["value"], "1000 × 1000000000000000000",
            "{client:?}: {direct}"
        );

        node.reset();
        let gatewayed = client
            .run(&format!("http://{}/", whole.address), "batch")
            .unwrap();
        assert_eq!(outcome(&gatewayed), outcome(&direct), "{client:?}: {gatewayed}");
        assert_eq!(
            node.posts().0,
            direct_posts,
            "{client:?}: one upstream batch, as going direct"
        );
        assert_eq!(node.requests(), 1000, "{client:?}");

        // Past the upstream's batch limit (100 by default): in batches of 100.
        node.reset();
        let gatewayed = client
            .run(&format!("http://{}/", split.address), "batch")
            .unwrap();
        assert_eq!(outcome(&gatewayed), outcome(&direct), "{client:?}: {gatewayed}");
        assert_eq!(node.posts().0, 10 * direct_posts, "{client:?}");
    }
}

#[test]
fn viems_websocket_transport_watches_blocks_through_the_gateway() {
    let node = eth_node::WsNode::start();
    let front = gateway(&node.url);
    let url = format!("ws://{}/", front.address);
    for scenario in ["heads", "blocks"] {
        // Heads pushed every 100 ms while viem watches (it stops at three): watchBlockNumber,
        // then watchBlocks.
        let pushing = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
        let pusher = {
            let (still, node) = (pushing.clone(), &node);
            /// Stops the pushing when the client's run ends, even by a panic (or the scope
            /// would wait for the pusher for ever).
            struct Stop(std::sync::Arc<std::sync::atomic::AtomicBool>);
            impl Drop for Stop {
                fn drop(&mut self) {
                    self.0.store(false, std::sync::atomic::Ordering::SeqCst);
                }
            }
            std::thread::scope(|scope| {
                let _stop = Stop(pushing.clone());
                let handle = scope.spawn(move || {
                    let mut number = 100;
                    while still.load(std::sync::atomic::Ordering::SeqCst) {
                        number += 1;
                        node.push(number);
                        std::thread::sleep(Duration::from_millis(100));
                    }
                });
                let report = Client::Viem.run(&url, scenario);
                pushing.store(false, std::sync::atomic::Ordering::SeqCst);
                handle.join().unwrap();
                report
            })
        };
        let Some(report) = pusher else {
            return;
        };
        eprintln!("{scenario}: {report}");
        assert_eq!(report["ok"], true, "{report}");
        let heads: Vec<u64> = report["value"]
            .as_str()
            .unwrap()
            .split(',')
            .map(|n| n.parse().unwrap())
            .collect();
        assert_eq!(heads.len(), 3, "{report}");
        assert!(
            heads.windows(2).all(|pair| pair[1] > pair[0]) && heads[0] > 100,
            "{heads:?}"
        );
        // viem unsubscribed: nothing is left at the node.
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while node.subscriptions() > 0 {
            assert!(
                std::time::Instant::now() < deadline,
                "a subscription left at the node"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        assert!(!report.to_string().contains(KEY));
    }
}

#[test]
fn viem_reads_logs_wider_than_the_node_serves_and_final_blocks_once_through_a_chain_aware_gateway() {
    let node = EthNode::start();
    let front = start_listening(
        &example_binary("gateway"),
        &[
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &keyed(&node),
            "--track-heads",
            "100",
            "--finality-cache",
            "--log-chunk",
            &eth_node::MAX_LOG_RANGE.to_string(),
        ],
    );
    let Some(direct) = Client::Viem.run(&keyed(&node), "chain") else {
        return;
    };
    // Going direct, the node refuses the range (viem retries -32005, then gives up).
    assert_eq!(direct["ok"], false, "{direct}");
    assert!(
        direct["text"].as_str().unwrap().contains("max block range"),
        "{direct}"
    );

    node.reset();
    let through = Client::Viem
        .run(&format!("http://{}/", front.address), "chain")
        .unwrap();
    // A log in every hundredth block of the 2,500 below the head, in order.
    let first = (BLOCK_NUMBER - 2499).div_ceil(100) * 100;
    let last = BLOCK_NUMBER / 100 * 100;
    let logs = (last - first) / 100 + 1;
    assert_eq!(
        through["value"],
        format!(
            "{logs} logs from {first} to {last}; block {} read the same twice",
            BLOCK_NUMBER - 100
        ),
        "{through}"
    );
    assert_eq!(node.calls("eth_getLogs"), 3, "2,500 blocks in chunks of 1,000");
    // The block is below the finalized one: its second read came from the gateway's cache.
    let block = format!("eth_getBlockByNumber {:#x}", BLOCK_NUMBER - 100);
    assert_eq!(node.calls(&block), 1);
    assert!(!through.to_string().contains(KEY));
}

#[test]
fn each_client_keeps_getting_answers_through_the_gateway_when_one_of_two_nodes_dies() {
    let dying = EthNode::start();
    let staying = EthNode::start();
    let front = start_listening(
        &example_binary("gateway"),
        &[
            "--listen",
            "127.0.0.1:0",
            "--upstream",
            &keyed(&dying),
            "--upstream",
            &keyed(&staying),
        ],
    );
    let through = format!("http://{}/", front.address);
    for client in Client::ALL {
        let Some(before) = client.run(&through, "block") else {
            return;
        };
        assert_eq!(
            outcome(&before),
            Value::from(BLOCK_NUMBER.to_string()),
            "{client:?}: {before}"
        );
    }
    let answered_by_dying = dying.requests();
    drop(dying);
    // Every client's calls now reach the node that stays: those sent to the dead one never
    // reached it and go on to the other, whatever their method.
    for client in Client::ALL {
        for _ in 0..2 {
            let after = client.run(&through, "block").unwrap();
            assert_eq!(
                outcome(&after),
                Value::from(BLOCK_NUMBER.to_string()),
                "{client:?}: {after}"
            );
            assert!(!after.to_string().contains(KEY), "{client:?}: {after}");
        }
    }
    assert!(answered_by_dying > 0, "both nodes took calls before");
    assert!(staying.requests() >= 6);
}
