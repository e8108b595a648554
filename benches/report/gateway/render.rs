//! The gateway section's tables in the report's Markdown: the main one (a row per workload,
//! requests in flight and way of forwarding) and, below it, the fleet's, the chain cache's,
//! the hedging and the subscription rows.

use std::fmt::Write as _;

/// The gateway table: one row per workload × requests in flight × way of forwarding.
pub(crate) fn gateway_table(runs: &[crate::gateway::GatewayRun]) -> String {
    let mut s = String::from(
        "| workload | in flight | forwarding | req/s | added p50 µs | added p99 µs | CPU µs/req | what forwards | CPU µs/req of each round |\n\
         | --- | ---: | --- | ---: | ---: | ---: | ---: | --- | --- |\n",
    );
    for r in runs
        .iter()
        .filter(|r| r.workload != "HEDGE" && r.workload != "SUBS")
    {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.0} | {:.1} | {:.1} | {:.2} | {} | {} |",
            r.workload,
            r.in_flight,
            r.implementation,
            r.req_per_s,
            r.added_p50_us,
            r.added_p99_us,
            r.cpu_us_per_req,
            r.what,
            crate::render_markdown::rounds(&r.rounds)
        );
    }
    s.push_str(&fleet_table(runs));
    s.push_str(&chain_table(runs));
    s.push_str(&hedge_table(runs));
    s.push_str(&subscription_table(runs));
    s
}

/// The subscription rows: empty when they were not measured.
fn subscription_table(runs: &[crate::gateway::GatewayRun]) -> String {
    let subs: Vec<_> = runs.iter().filter(|r| r.workload == "SUBS").collect();
    if subs.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "\nThe subscription rows: WebSocket clients each subscribed once to `newHeads` on a node \
         (tokio-tungstenite, pushing a 1.2 KB head to every subscription every 1, 10 or 100 ms \
         for 1, 100 or 1,000 subscribers), straight and through rpcwire's gateway \
         (`Gateway::with_subscriptions`: one connection to the node, each client's subscription \
         its own there, notifications rewritten to the gateway's ids): notifications delivered \
         a second, and CPU per delivered notification of the process serving the clients (the \
         node's straight, the gateway's through it) and, through the gateway, of the node.\n\n\
         | subscribers | serving the clients | notifications/s | CPU µs per notification | the node's CPU µs per notification |\n\
         | ---: | --- | ---: | ---: | ---: |\n",
    );
    for r in subs {
        let node = r.upstream_cpu_us_per_req.unwrap_or(r.cpu_us_per_req);
        let _ = writeln!(
            s,
            "| {} | {} | {:.0} | {:.2} | {node:.2} |",
            r.in_flight, r.implementation, r.req_per_s, r.cpu_us_per_req
        );
    }
    s
}

/// The hedging rows: empty when they were not measured.
fn hedge_table(runs: &[crate::gateway::GatewayRun]) -> String {
    let hedged: Vec<_> = runs.iter().filter(|r| r.workload == "HEDGE").collect();
    if hedged.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "\nThe hedging rows: W1 (its method marked safe) through rpcwire's gateway over two upstreams \
         in turn, one of which answers every fifth call 200 ms late, without hedging and with two \
         hedges, beside the same gateway over the fast upstream alone (the median round by p99; \
         its p99 against the fast upstream's alone is the issue's aim, at most 1.2×).\n\n\
         | in flight | forwarding | req/s | p50 µs | p99 µs | p99 × fast only | CPU µs/req | what forwards |\n\
         | ---: | --- | ---: | ---: | ---: | ---: | ---: | --- |\n",
    );
    for r in &hedged {
        let fast = hedged
            .iter()
            .find(|o| o.implementation == "fast-only" && o.in_flight == r.in_flight)
            .map_or("–".to_owned(), |o| format!("{:.2}", r.p99_us / o.p99_us));
        let _ = writeln!(
            s,
            "| {} | {} | {:.0} | {:.1} | {:.1} | {fast} | {:.2} | {} |",
            r.in_flight, r.implementation, r.req_per_s, r.p50_us, r.p99_us, r.cpu_us_per_req, r.what
        );
    }
    s
}

/// The chain subject beside rpcwire's gateway: empty when it was not measured.
fn chain_table(runs: &[crate::gateway::GatewayRun]) -> String {
    let chain: Vec<_> = runs.iter().filter(|r| r.cache_hit_rate.is_some()).collect();
    if chain.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "\nThe chain rows: rpcwire's gateway with a `HeadTracker` polling the upstream's latest and \
         finalized block every second (`eth_blockNumber`, `eth_getBlockByNumber(\"finalized\")`: \
         the corpus's chain is final up to its head, 0x36) and a `FinalityCache` with its defaults, \
         the corpus replayed round and round: the share of requests answered from the cache \
         (its hits over the requests of the window, read from the gateway before and after it), \
         the gateway's CPU per request against rpcwire's without a cache, and the upstream's CPU \
         per request against what it spends going straight. What is never kept — errors, `null`s, \
         writes, `pending`, methods the cache does not know (`debug_traceTransaction`, `txpool_*`, \
         `testing_buildBlockV1`, …) — goes upstream every time.\n\n\
         | workload | in flight | req/s | added p50 µs | CPU µs/req | × rpcwire's | answered from the cache | upstream CPU µs/req | straight's |\n\
         | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for r in chain {
        let other = |implementation: &str| {
            runs.iter()
                .find(|o| {
                    o.implementation == implementation
                        && o.workload == r.workload
                        && o.in_flight == r.in_flight
                })
                .map(|o| o.cpu_us_per_req)
        };
        let rpcwire =
            other("rpcwire").map_or("–".to_owned(), |cpu| format!("{:.2}", r.cpu_us_per_req / cpu));
        let straight = other("straight").map_or("–".to_owned(), |cpu| format!("{cpu:.2}"));
        let _ = writeln!(
            s,
            "| {} | {} | {:.0} | {:.1} | {:.2} | {rpcwire} | {:.1}% | {} | {straight} |",
            r.workload,
            r.in_flight,
            r.req_per_s,
            r.added_p50_us,
            r.cpu_us_per_req,
            r.cache_hit_rate.unwrap_or_default() * 100.0,
            r.upstream_cpu_us_per_req
                .map_or("–".to_owned(), |cpu| format!("{cpu:.2}")),
        );
    }
    s
}

/// The fleet subjects beside rpcwire's gateway (`redis` feature): empty when none was
/// measured.
fn fleet_table(runs: &[crate::gateway::GatewayRun]) -> String {
    let fleet: Vec<_> = runs.iter().filter(|r| r.redis_cpu_us_per_req.is_some()).collect();
    if fleet.is_empty() {
        return String::new();
    }
    let mut s = String::from(
        "\nThe fleet rows (`redis` feature: rpcwire's gateway behind `proxy::fleet::FleetLayer`, \
         every request with its API key, the rate limit shared in a `redis-server` of the run's \
         own, loopback, without persistence, at a rate nothing reaches — with `LimitConfig`'s \
         defaults, a key of such a rate is charged in Redis after the fact, every 5 ms, not asked \
         about per request; `fleet` caches a method \
         no workload sends, so that each request is looked up, misses and is forwarded, \
         `fleet-cached` every method the workload sends, answered from Redis after the first but \
         errors, which are not cached): the gateway's CPU against rpcwire's; Redis's \
         CPU per request (the `redis-server` process, read like the gateways'); round trips per \
         request as Redis's reads of what its clients sent (`total_reads_processed`; calls in \
         flight together on the gateway's one connection are read together, so under one at 64 in \
         flight); scripts run (`EVALSHA`/`EVAL` calls) and commands (`total_commands_processed`, \
         which counts the commands a script runs inside Redis too) per request; all read with \
         `INFO` just before and after the measured window, the `INFO` itself taken off; and the \
         upstream's CPU per request (what the cache spares it). Both fleet gateways' heartbeats \
         (one script a second each) are counted in.\n\n\
         | workload | in flight | forwarding | req/s | added p50 µs | CPU µs/req | × rpcwire's | Redis CPU µs/req | Redis round trips/req | scripts/req | commands/req | upstream CPU µs/req |\n\
         | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |\n",
    );
    for r in fleet {
        let rpcwire = runs
            .iter()
            .find(|o| o.implementation == "rpcwire" && o.workload == r.workload && o.in_flight == r.in_flight)
            .map_or("–".to_owned(), |o| {
                format!("{:.2}", r.cpu_us_per_req / o.cpu_us_per_req)
            });
        let figure =
            |value: Option<f64>, places: usize| value.map_or("–".to_owned(), |v| format!("{v:.places$}"));
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.0} | {:.1} | {:.2} | {rpcwire} | {} | {} | {} | {} | {} |",
            r.workload,
            r.in_flight,
            r.implementation,
            r.req_per_s,
            r.added_p50_us,
            r.cpu_us_per_req,
            figure(r.redis_cpu_us_per_req, 2),
            figure(r.redis_round_trips_per_req, 3),
            figure(r.redis_scripts_per_req, 3),
            figure(r.redis_commands_per_req, 2),
            figure(r.upstream_cpu_us_per_req, 2),
        );
    }
    s
}
