//! Output: perf-reports/latest.md.

use crate::common::instructions::{self as counts, Instructions};
use crate::common::peer_stage::PeerRun;
use crate::common::peers::{self, RPCWIRE};
use crate::common::stages::StageResult;
use std::fmt::Write as _;

use crate::transports::{TransportRun, CPU_METHOD};
use crate::{config::*, measure::*, pipeline::*, render_json::*, render_text::*, targets::*};

pub(crate) struct Report<'a> {
    pub(crate) config: &'a Config,
    pub(crate) results: &'a [WorkloadResult],
    pub(crate) targets: &'a [Target],
    pub(crate) threads: &'a [ThreadRun],
    pub(crate) stages: &'a [StageResult],
    pub(crate) correlation: &'a [CorrelationRun],
    pub(crate) peer: &'a [PeerRun],
    pub(crate) transports: &'a [TransportRun],
    pub(crate) gateway: &'a [crate::gateway::GatewayRun],
    pub(crate) tls: &'a [crate::tls::TlsRun],
    pub(crate) mcp: &'a [crate::mcp::McpRun],
    pub(crate) mcp_memory: &'a [crate::mcp::SessionMemory],
    pub(crate) overload: &'a [crate::overload::OverloadRun],
    pub(crate) structural: &'a [crate::structural::StructuralRun],
    pub(crate) soak: Option<&'a crate::soak::Soak>,
    pub(crate) instructions: Option<&'a Instructions>,
    pub(crate) probes: &'a [(&'static str, Vec<bool>)],
    pub(crate) machine: &'a str,
    pub(crate) generated_at: &'a str,
    pub(crate) git_head: Option<&'a str>,
    pub(crate) rustc: Option<&'a str>,
    pub(crate) simd: &'a str,
    pub(crate) load: (&'a str, &'a str),
    pub(crate) timer_ns: u64,
    pub(crate) latency_method: &'a str,
    pub(crate) seconds: f64,
    pub(crate) jitter: Option<&'a JitterFloor>,
}

impl Report<'_> {
    /// The Performance table of README.md: the median matrix, the speed-ups and the
    /// verdicts of this run, nothing typed by hand.
    pub(crate) fn readme_section(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(
            s,
            "Median ns per message from `perf-reports/latest.md` ({} run, {}, git {}, {}). \
             ◆ marks the fastest peer; W4 is one batch of 100 requests, W6 the mean over its four \
             layouts, ETH the mean over the \
             Ethereum corpus stream.\n",
            if self.config.quick { "quick" } else { "full" },
            self.machine,
            self.git_head.unwrap_or("?"),
            self.generated_at
        );
        s.push_str(&matrix(self.results, true));
        let _ = write!(s, "| **rpcwire speed-up vs fastest peer** |");
        for w in self.results {
            let _ = write!(s, " **{:.2}×** |", w.speedup());
        }
        if !self.stages.is_empty() {
            let _ = writeln!(s, "\n\nPipeline stages, same run:\n");
            s.push_str(&stages_table(self.stages));
        }
        if !self.peer.is_empty() {
            let _ = writeln!(
                s,
                "\nRound trips between two in-process peers over an in-memory duplex, same run:\n"
            );
            s.push_str(&peer_table(self.peer));
        }
        if !self.transports.is_empty() {
            let _ = writeln!(
                s,
                "\n\nHTTP and WebSocket servers under one load generator, same run (server CPU per \
                 request is the server process's CPU time ÷ requests answered, the median of {} \
                 interleaved rounds; the floor is the bare library answering a fixed body or text):\n",
                self.transports[0].rounds.len()
            );
            s.push_str(&transports_table(self.transports));
        }
        if !self.mcp.is_empty() {
            let _ = writeln!(
                s,
                "\n\nMCP servers, one `tools/call` of `add` at a time or 64 in flight, same run (server CPU \
                 per call is the server process's CPU time ÷ calls answered, the median of {} rounds):\n",
                self.mcp[0].rounds.len()
            );
            s.push_str(&crate::mcp::mcp_table(self.mcp, self.mcp_memory));
        }
        if !self.gateway.is_empty() {
            let _ = writeln!(
                s,
                "\n\nForwarding through a gateway to the same upstream, one load generator, same run \
                 (added latency over calling the upstream straight; CPU per request is the gateway \
                 process's, the median of {} interleaved rounds):\n",
                self.gateway[0].rounds.len()
            );
            s.push_str(&crate::gateway::render::gateway_table(self.gateway));
        }
        if !self.tls.is_empty() {
            let _ = writeln!(
                s,
                "\n\nTLS, same run: rpcwire's HTTPS server beside hyper + tokio-rustls, and gateways to an \
                 https upstream beside hyper + hyper-rustls (CPU per request the server's or the \
                 gateway's process, the median of {} interleaved rounds; `opened per 10k`: TCP \
                 connections opened while measuring, each a handshake):\n",
                self.tls[0].rounds.len()
            );
            s.push_str(&tls_table(self.tls));
        }
        if !self.overload.is_empty() {
            let _ = writeln!(
                s,
                "\n\nA flood of concurrent requests against `spec_server --peer --max-concurrent {}`, \
                 same run (each answered once: the result, or the overload error at once):\n",
                self.overload[0].max_concurrent
            );
            s.push_str(&crate::overload::overload_table(self.overload));
        }
        let _ = writeln!(s, "\n\n| target | measured | verdict |\n| --- | --- | --- |");
        for t in self.targets {
            let _ = writeln!(s, "| {} | {} | {} |", t.target, t.measured, yes_no(t.met));
        }
        s
    }

    pub(crate) fn markdown(&self) -> String {
        let mut s = String::new();
        let _ = writeln!(s, "# rpcwire performance report\n");
        let _ = writeln!(
            s,
            "Generated by `cargo bench --bench report{}{}` — do not edit by hand; every number and \
             every verdict below is computed by `benches/report.rs` in the same run.\n",
            if cfg!(feature = "http") {
                " --features http"
            } else if cfg!(feature = "tokio") {
                " --features tokio"
            } else {
                ""
            },
            if self.config.quick { " -- --quick" } else { "" }
        );
        let _ = writeln!(s, "| | |\n| --- | --- |");
        let _ = writeln!(s, "| machine | {} |", self.machine);
        let _ = writeln!(s, "| generated | {} ({:.0} s) |", self.generated_at, self.seconds);
        let _ = writeln!(
            s,
            "| mode | {} ({} batches of ~{} ms per workload × parser, median reported; histograms {} ms) |",
            if self.config.quick { "quick" } else { "full" },
            self.config.batches,
            self.config.batch.as_millis(),
            self.config.histogram.as_millis()
        );
        let _ = writeln!(s, "| git | {} |", self.git_head.unwrap_or("?"));
        let _ = writeln!(s, "| rustc | {} |", self.rustc.unwrap_or("?"));
        let _ = writeln!(s, "| SIMD | {} |", self.simd);
        let _ = writeln!(
            s,
            "| allocator | mimalloc, wrapped by a per-thread allocation counter |"
        );
        let _ = writeln!(
            s,
            "| load average before / after | {} / {} |\n",
            self.load.0, self.load.1
        );
        let busy = |load: &str| {
            load.split_whitespace()
                .next()
                .and_then(|l| l.parse::<f64>().ok())
                .is_some_and(|l| l > 1.5)
        };
        if busy(self.load.0) || busy(self.load.1) {
            let _ = writeln!(
                s,
                "> **Note:** the 1-minute load average was above 1.5 on this 2-core machine: other \
                 processes competed for the CPU and the numbers, tails above all, are noisier than \
                 usual. Batches of all parsers are interleaved, so medians stay comparable.\n"
            );
        }

        let _ = writeln!(s, "## Targets (issues 3 and 4)\n");
        let _ = writeln!(s, "| target | measured | verdict |\n| --- | --- | --- |");
        for t in self.targets {
            let _ = writeln!(s, "| {} | {} | {} |", t.target, t.measured, yes_no(t.met));
        }
        let _ = writeln!(s);
        if self.instructions.is_some() && self.targets.iter().any(|t| t.met == Some(false)) {
            let _ = writeln!(
                s,
                "Where the instructions and the time go, for the targets not met: \
                 [Where the time goes](#where-the-time-goes).\n"
            );
        }
        if let Some(j) = self.jitter {
            let _ = writeln!(
                s,
                "The machine's own latency floor: a fixed loop of plain arithmetic sized like {} \
                 ({:.0} ns), timed exactly like the parsers, gives p50 {} ns, p99 {} ns, p99.9 {} ns, \
                 max {} ns ({} samples). A parser's tail cannot be measured below this.\n",
                j.sized_like, j.work_ns, j.p50_ns, j.p99_ns, j.p999_ns, j.max_ns, j.samples
            );
        }

        if !self.stages.is_empty() {
            let _ = writeln!(s, "## Pipeline stages\n");
            let _ = writeln!(
                s,
                "Each stage beside a baseline doing the same work with the peers' tools, both \
                 verified to answer alike before timing. `router W1 subtract`: W1-shaped requests \
                 (`subtract`, positional params, 256 different ids) answered end to end — parse, \
                 route, serde decode, handler, encode into a reused buffer. `… stream`: the whole \
                 serving loop (`rpcwire::serve::Connection`: 64 KiB reads into a pooled buffer, \
                 frames split off, parse, route, decode, encode, frame); W1 streams answer \
                 `eth_getBalance` by decoding its params into `(String, String)` as issue 5 asks \
                 (those two `String`s are the 2 allocations per message), ETH streams echo the \
                 params of every corpus request. ns/msg is the median of \
                 the batches; msg/s per thread count is each thread's own state running flat out; \
                 latency is per message, timed one by one.\n"
            );
            s.push_str(&stages_table(self.stages));
            let _ = writeln!(s);
        }
        if !self.correlation.is_empty() {
            let _ = writeln!(s, "## Correlation table\n");
            let _ = writeln!(
                s,
                "`rpcwire::correlate::CorrelationTable` (capacity 1,024), shared by all threads: each \
                 call is `start` (slot + generated id), `complete` by that id, and the caller taking \
                 the value (which frees the slot). Wall-clock time ÷ calls, median of {THREAD_ROUNDS} \
                 rounds.\n"
            );
            s.push_str(&correlation_table(self.correlation));
            let _ = writeln!(s);
        }
        if !self.peer.is_empty() {
            let _ = writeln!(
                s,
                "## Peer round trip
"
            );
            let _ = writeln!(
                s,
                "Two `rpcwire::transport::Peer`s in one process over `tokio::io::duplex` ({} KiB \
                 per direction), on a 2-worker Tokio runtime: the client's callers each send a \
                 `subtract` call and wait for its answer (decoded and checked) before the next; the \
                 server answers through its `Router`. Latency is per call, from sending to the \
                 decoded result. The median of {THREAD_ROUNDS} rounds by calls/s.\n",
                PEER_DUPLEX_KIB
            );
            s.push_str(&peer_table(self.peer));
            let _ = writeln!(s);
        }

        if !self.transports.is_empty() {
            let _ = writeln!(s, "## Transports (HTTP and WebSocket)\n");
            let _ = writeln!(
                s,
                "Each server runs in a child process of this bench on one Tokio thread \
                 (current-thread runtime); the load generator is one Tokio thread in this process \
                 with N connections, each sending `{}` and waiting for (and checking) the answer \
                 before the next — HTTP/1.1 keep-alive POSTs, or WebSocket text frames after one \
                 upgrade; the clients are minimal hand-written ones, the same for every server. \
                 Connections are opened before a warm-up; then the run is measured. Latency is per \
                 request at the load generator. Server CPU per request: {CPU_METHOD}, between the \
                 start and the end of the measured run, ÷ requests answered in it. Every row is \
                 measured in {} rounds, interleaved (each configuration once, then again), and \
                 the table shows the round with the median CPU per request; the last column has \
                 every round's figure, a measure of how much this machine moved during the run. \
                 The floors: a bare hyper HTTP/1 connection reading each request's body (as any \
                 JSON-RPC server must) and answering a fixed body; bare WebSocket servers \
                 (after a hyper upgrade, as a server sharing its port with HTTP does) answering a \
                 fixed text, on fastwebsockets (the crate rpcwire uses, its defaults) and on \
                 tokio-tungstenite (with an 8 KiB read size).\n",
                crate::transports::REQUEST,
                self.transports[0].rounds.len()
            );
            s.push_str(&transports_table(self.transports));
            let _ = writeln!(s);
        }
        if !self.mcp.is_empty() {
            let _ = writeln!(s, "## MCP\n");
            let _ = writeln!(
                s,
                "Three MCP servers with the same tool, `add {{a, b}}` → the sum as text, each a child \
                 process: rpcwire's `McpServer` and rmcp 3.11's (the Rust SDK, its `#[tool_router]` \
                 macros) on one Tokio thread, the official TypeScript SDK's (1.32.2, Node 22), and \
                 the floor: blocking line reads (stdio) or hyper's HTTP/1 connection reading each \
                 body (HTTP), the request's id copied into a fixed answer, no JSON parsed and no MCP \
                 — the least any server must do; and `floor-pipes`, the stdio side of a gateway with \
                 a child per session: one Tokio thread writing a call line to a child's stdin and \
                 reading its answer line, with a child (the gateway's, `rpcwire-stdio`) and a pipe \
                 pair per call in flight (where the stdio floor reads the 64 calls of one wake-up \
                 from one pipe). One \
                 load generator for all, in this process: over stdio it writes `tools/call` lines to the \
                 child's stdin, N in flight (one more for each answer read); over Streamable HTTP each of \
                 N keep-alive connections is a client with its own session (`initialize`, \
                 `notifications/initialized`) that sends a call and reads its whole answer (JSON or an \
                 SSE stream, resumed with `Last-Event-ID` if it ends early) before the next. Each answer is checked for the sum. Server CPU per call: {CPU_METHOD}, over \
                 the measured run, ÷ calls answered in it; the median of {} interleaved rounds, every \
                 round in the last column. The `gateway` rows put a Streamable HTTP gateway in \
                 front of rpcwire's stdio server (this bench binary, `--mcp-server rpcwire-stdio`) \
                 with the same load: rpcwire's `McpGateway` and supergateway `--stateful` start a \
                 child per session, mcp-proxy one child for all; the CPU is the gateway process's \
                 own, its children's apart. The second table is each HTTP server's resident memory \
                 before and after {} sessions were opened and left idle ({} for a gateway, its \
                 children's memory apart).\n",
                self.mcp[0].rounds.len(),
                self.mcp_memory.first().map_or(0, |m| m.sessions),
                self.mcp_memory.iter().find(|m| m.server.ends_with("gateway") || m.server == "mcp-proxy").map_or(0, |m| m.sessions)
            );
            s.push_str(&crate::mcp::mcp_table(self.mcp, self.mcp_memory));
            let _ = writeln!(s);
        }
        if !self.gateway.is_empty() {
            let _ = writeln!(s, "## Gateway\n");
            let _ = writeln!(
                s,
                "The transports section's load generator sends W1 (the upstream answers it with a \
                 fixed result) and every single request of the Ethereum corpus (the upstream, \
                 rpcwire's `HttpServer`, answers each with the corpus's recorded answer: results up \
                 to 275 KB) over HTTP/1.1 keep-alive at 1 and 64 requests in flight, straight to the \
                 upstream and through three gateways in front of it, each a child process on one \
                 thread: rpcwire's (`proxy::Gateway` behind `HttpServer`, the router's fallback: the \
                 client's frame sent on with the gateway's id, the upstream's answer frame passed \
                 back with the client's id), the \
                 usual way (hyper, each body parsed into a `serde_json::Value`, the id set, \
                 serialized, and the answer the same way back), and the floor (hyper forwarding \
                 the bodies without reading them, on hyper's pooled client). Added latency is the \
                 gateway's p50/p99 minus going straight's; CPU per request is the gateway \
                 process's ({CPU_METHOD}), the upstream's for the straight rows. Every \
                 configuration is measured in {} rounds, interleaved, and the round with the median \
                 CPU per request is the one shown. BATCH is one batch of 1,000 of the corpus's \
                 small calls (requests under 512 bytes, answers under 1 KiB) at 1 in flight, straight, through rpcwire's \
                 gateway (whose upstream takes batches of 1,000: the batch goes up as one) and \
                 through the floor; its rows count batches, not calls.\n",
                self.gateway[0].rounds.len()
            );
            s.push_str(&crate::gateway::render::gateway_table(self.gateway));
            let _ = writeln!(s);
        }
        if !self.tls.is_empty() {
            let _ = writeln!(s, "## TLS\n");
            let _ = writeln!(
                s,
                "Certificates made at the start of the run (a fresh authority, rustls with ring \
                 everywhere). Server side: the transports section's request over HTTP/1.1 on TLS \
                 connections kept open (handshakes before the window), to rpcwire's `HttpServer` \
                 with `with_tls` and to the floor (hyper's HTTP/1 connection after tokio-rustls's \
                 acceptor, the same certificate, the body read and a fixed answer), CPU per \
                 request the server process's. Gateway side: W1 over plain HTTP to a gateway whose \
                 upstream is rpcwire's TLS server answering it: rpcwire's gateway over HTTP/1.1 \
                 and over HTTP/2 (ALPN), the floors (hyper's pooled client with hyper-rustls, \
                 forwarding the bodies as they are, HTTP/1.1 and HTTP/2 only), and rpcwire's \
                 gateway to the same upstream over plain HTTP; CPU per request the gateway \
                 process's. `opened per 10k` counts the TCP connections the machine opened during \
                 the window per 10,000 requests (each a TLS handshake; 0 when every connection is \
                 reused); `upstream conns` the gateway's connections to its upstream at the end. \
                 The median of {} interleaved rounds.\n",
                self.tls[0].rounds.len()
            );
            s.push_str(&tls_table(self.tls));
            let _ = writeln!(s);
        }
        if !self.overload.is_empty() {
            let r = &self.overload[0];
            let _ = writeln!(s, "## Overload\n");
            let _ = writeln!(
                s,
                "`examples/spec_server --framing ndjson --peer --max-concurrent {}`, started as its \
                 own process, gets {} `sleep` requests (`[{}]`: answered after {} ms) written at once \
                 over its stdin by an rpcwire `Peer`. With {} handlers running and the backlog full \
                 (its default, 1,024 requests), each further request is answered at once with the \
                 overload error (-32003, `server overloaded`, with its id). Answers/s is the requests \
                 ÷ the time from the flood's start to the last answer; \"other\" counts anything \
                 but the result or the overload error (another error, a closed connection, a call \
                 that timed out): it must be 0. The server's peak RSS is its VmHWM read from \
                 /proc after the last answer. {} rounds, each against a fresh server; the median \
                 by answers/s is shown.\n",
                r.max_concurrent,
                r.requests,
                r.sleep_ms,
                r.sleep_ms,
                r.max_concurrent,
                r.rounds.len()
            );
            s.push_str(&crate::overload::overload_table(self.overload));
            let _ = writeln!(s);
        }
        if let Some(soak) = self.soak {
            let _ = writeln!(s, "## Soak\n");
            let _ = writeln!(
                s,
                "From `perf-reports/soak.json`, written by `cargo bench --bench soak --features http` \
                 ({} s run of {}, git {}; the full page is `perf-reports/soak.md`): every example \
                 server as its own process — `spec_server` in both framings, through `serve()` and \
                 through `--peer`, and `http_server` from 4 HTTP and 2 WebSocket connections — under a \
                 mix of requests, notifications, batches, invalid JSON, invalid requests, truncated \
                 messages and messages over the limit, at most 32 answers due per connection. Every \
                 request must be answered once with its id. RSS is sampled once a second; after a \
                 warm-up of {} s, \"growth (medians)\" compares the medians of the first and the last \
                 tenth of the samples, \"growth (fitted)\" is the rise of the least-squares line \
                 through all of them in percent of where it starts; the aim is on the fitted figure \
                 (half-minute medians swing by ±15% under this traffic without going anywhere, so \
                 two tenths mostly measure that swing). \"growth (fitted, second half)\" is the same \
                 line through the second half of the run only, for information: memory that climbs \
                 in steps to the high-water marks of its buffers and then stays shows a rise over \
                 the whole run and none over its second half; a leak rises over both.\n",
                soak.seconds, soak.date, soak.git_head, soak.warmup_seconds
            );
            s.push_str(&soak.table());
            let _ = writeln!(s);
        }

        let _ = writeln!(s, "## Median ns per message\n");
        let _ = writeln!(
            s,
            "◆ marks the fastest peer of each workload. One message is one JSON-RPC message, \
             except W4 (one batch of 100 requests), W6 (the mean over its four layouts) and ETH \
             (the mean over the stream's messages).\n"
        );
        s.push_str(&matrix(self.results, true));
        let _ = write!(s, "| **rpcwire speed-up vs fastest peer** |");
        for w in self.results {
            let _ = write!(s, " **{:.2}×** |", w.speedup());
        }
        let _ = writeln!(s, "\n\n![speed-up of rpcwire over each peer](speedup.svg)\n");
        let _ = writeln!(s, "![latency percentiles](latency.svg)\n");

        let _ = writeln!(s, "## Per workload\n");
        for w in self.results {
            let _ = writeln!(s, "### {} — {}\n", w.name, w.about);
            let _ = writeln!(
                s,
                "| parser | ns/msg | spread (min–max batch) | MB/s | msg/s | allocs/msg | p50 ns | p99 ns | p99.9 ns | max ns | rpcwire speed-up |"
            );
            let _ = writeln!(
                s,
                "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
            );
            let base = w.rpcwire().ns_per_msg;
            for m in &w.results {
                let lat = |f: fn(&Latency) -> u64| {
                    m.latency.as_ref().map_or("–".to_owned(), |l| f(l).to_string())
                };
                let min = m.batch_ns.iter().copied().fold(f64::INFINITY, f64::min);
                let max = m.batch_ns.iter().copied().fold(0.0, f64::max);
                let name = if m.parser == w.fastest_peer {
                    format!("{} ◆", m.parser)
                } else {
                    m.parser.to_owned()
                };
                let _ = writeln!(
                    s,
                    "| {name} | {} | {}–{} | {:.0} | {} | {} | {} | {} | {} | {} | {:.2}× |",
                    fmt_ns(m.ns_per_msg),
                    fmt_ns(min),
                    fmt_ns(max),
                    m.mb_per_s,
                    fmt_count(m.msg_per_s),
                    fmt_allocs(m.allocs_per_msg),
                    lat(|l| l.p50_ns),
                    lat(|l| l.p99_ns),
                    lat(|l| l.p999_ns),
                    lat(|l| l.max_ns),
                    m.ns_per_msg / base
                );
            }
            let _ = writeln!(s);
            if !w.rpcwire_allocating.is_empty() {
                let _ = writeln!(
                    s,
                    "rpcwire allocates on {} of the {} messages (after warm-up); the first ones:\n",
                    w.rpcwire_allocating.len(),
                    w.messages
                );
                for (index, allocations, prefix) in w.rpcwire_allocating.iter().take(5) {
                    let _ = writeln!(s, "- message {index}: {allocations} allocation(s): `{prefix}…`");
                }
                let _ = writeln!(s);
            }
        }

        let _ = writeln!(s, "## Multi-thread throughput (W1)\n");
        let _ = writeln!(
            s,
            "Each thread parses W1 in a loop with its own parser state; {THREAD_ROUNDS} rounds of \
             {} ms alternating parsers and thread counts, median reported.\n",
            self.config.threads.as_millis() / THREAD_ROUNDS as u128
        );
        let _ = writeln!(
            s,
            "| parser | threads | msg/s | per-thread scaling |\n| --- | ---: | ---: | ---: |"
        );
        for t in self.threads {
            let _ = writeln!(
                s,
                "| {} | {} | {} | {:.2} |",
                t.parser,
                t.threads,
                fmt_count(t.msg_per_s),
                t.scaling
            );
        }
        let _ = writeln!(s);

        let _ = writeln!(s, "## Instructions per message (callgrind)\n");
        match self.instructions {
            Some(i) => {
                let _ = writeln!(
                    s,
                    "From `perf-reports/instructions.json` ({}, git {}), written by \
                     `benches/instructions.sh` (callgrind, `(Ir(1001 runs) − Ir(1 run)) / 1000` \
                     inside the parse loop).\n",
                    i.generated_at, i.git_head
                );
                let _ = writeln!(
                    s,
                    "| workload | parser | instructions/msg |\n| --- | --- | ---: |"
                );
                for c in &i.counts {
                    let _ = writeln!(s, "| {} | {} | {:.0} |", c.workload, c.parser, c.instructions);
                }
            }
            None => {
                let _ = writeln!(s, "Not measured yet: run `benches/instructions.sh`.");
            }
        }
        let _ = writeln!(s);
        if let Some(i) = self.instructions {
            let timings: Vec<counts::Timing<'_>> = self
                .results
                .iter()
                .map(|w| counts::Timing {
                    workload: w.name,
                    fastest_peer: w.fastest_peer,
                    ns: w.results.iter().map(|m| (m.parser, m.ns_per_msg)).collect(),
                })
                .collect();
            counts::where_the_time_goes(&mut s, i, &timings, RPCWIRE);
        }
        if !self.structural.is_empty() {
            s.push_str(&crate::structural::structural_section(self.structural));
        }

        let _ = writeln!(s, "## Strictness of each parser\n");
        let _ = writeln!(
            s,
            "Invalid inputs each parser is given (as in the timed runs: same checks, same code); \
             \"rejects\" means the parse failed or the harness's JSON-RPC checks (`jsonrpc` is \
             \"2.0\", a method or exactly one of result/error) refused it. A fast peer that \
             accepts invalid input is skipping work rpcwire does.\n"
        );
        let _ = write!(s, "| parser |");
        for (name, _, _) in peers::PROBES.iter() {
            let _ = write!(s, " {name} |");
        }
        let _ = write!(s, "\n| --- |");
        for _ in peers::PROBES.iter() {
            let _ = write!(s, " :---: |");
        }
        s.push('\n');
        for (parser, rejected) in self.probes {
            let _ = write!(s, "| {parser} |");
            for r in rejected {
                let _ = write!(s, " {} |", if *r { "rejects" } else { "**accepts**" });
            }
            s.push('\n');
        }
        let _ = writeln!(s);

        let _ = writeln!(s, "## Method\n");
        let _ = writeln!(
            s,
            "- Workloads are built in `benches/common/workloads.rs`; every parser gets the same \
             bytes. Before timing, every parser must return rpcwire's digest (method, id) for every \
             message of the workload, or the run aborts.\n\
             - Parsers (`benches/common/peers.rs`); each checks `\"jsonrpc\" == \"2.0\"` and extracts \
             the id, the method and a handle to params/result/error:"
        );
        if let Some(w) = self.results.first() {
            for m in &w.results {
                let _ = writeln!(s, "  - `{}`: {}", m.parser, m.about);
            }
        }
        let _ = writeln!(
            s,
            "- ns/msg: warm-up ({} ms, which also sizes the batches), then {} timed batches of \
             ~{} ms; the median batch's ns per message. MB/s and msg/s derive from it.\n\
             - allocs/msg: heap allocations (alloc, alloc_zeroed, realloc) on the measuring thread \
             during the timed batches ÷ messages.\n\
             - Latency: {}\n\
             - Instruction counts: `benches/instructions.sh`.",
            self.config.warmup.as_millis(),
            self.config.batches,
            self.config.batch.as_millis(),
            self.latency_method
        );
        s
    }

    pub(crate) fn json(&self) -> JsonReport {
        JsonReport {
            machine: self.machine.to_owned(),
            workloads: self
                .results
                .iter()
                .map(|w| JsonWorkload {
                    name: w.name,
                    bytes: w.bytes,
                    messages: w.messages,
                    total_bytes: w.total_bytes,
                    about: w.about.clone(),
                    fastest_peer: w.fastest_peer,
                    speedup_vs_fastest_peer: round(w.speedup(), 3),
                    rpcwire_allocating_messages: w
                        .rpcwire_allocating
                        .iter()
                        .map(|(index, allocations, prefix)| JsonAllocating {
                            index: *index,
                            allocations: *allocations,
                            prefix: prefix.clone(),
                        })
                        .collect(),
                    results: w
                        .results
                        .iter()
                        .map(|m| JsonResult {
                            parser: m.parser,
                            ns_per_msg: round(m.ns_per_msg, 1),
                            mb_per_s: round(m.mb_per_s, 1),
                            allocs_per_msg: round(m.allocs_per_msg, 4),
                            p50_ns: m.latency.as_ref().map(|l| l.p50_ns),
                            p99_ns: m.latency.as_ref().map(|l| l.p99_ns),
                            p999_ns: m.latency.as_ref().map(|l| l.p999_ns),
                            max_ns: m.latency.as_ref().map(|l| l.max_ns),
                            msg_per_s: round(m.msg_per_s, 0),
                            ns_per_msg_min: round(
                                m.batch_ns.iter().copied().fold(f64::INFINITY, f64::min),
                                1,
                            ),
                            ns_per_msg_max: round(m.batch_ns.iter().copied().fold(0.0, f64::max), 1),
                            batches: m.batch_ns.len(),
                            latency_messages_per_sample: m.latency.as_ref().map(|l| l.messages_per_sample),
                            latency_samples: m.latency.as_ref().map(|l| l.samples),
                            speedup_of_rpcwire: round(m.ns_per_msg / w.rpcwire().ns_per_msg, 3),
                            about: m.about,
                        })
                        .collect(),
                })
                .collect(),
            generated_at: self.generated_at.to_owned(),
            mode: if self.config.quick { "quick" } else { "full" },
            git_head: self.git_head.map(str::to_owned),
            rustc: self.rustc.map(str::to_owned),
            simd: self.simd.to_owned(),
            load_average_before: self.load.0.to_owned(),
            load_average_after: self.load.1.to_owned(),
            timer_overhead_ns: self.timer_ns,
            latency_method: self.latency_method.to_owned(),
            jitter_floor: self.jitter.cloned(),
            targets: self.targets.to_vec(),
            threads: self.threads.to_vec(),
            stages: self.stages.to_vec(),
            correlation_table: self.correlation.to_vec(),
            peer_round_trip: self.peer.to_vec(),
            transports: self.transports.to_vec(),
            gateway: self.gateway.to_vec(),
            tls: self.tls.to_vec(),
            mcp: self.mcp.to_vec(),
            mcp_idle_sessions: self.mcp_memory.to_vec(),
            overload: self.overload.to_vec(),
            structural_pass: self.structural.to_vec(),
            soak: self.soak.cloned(),
            instructions_per_msg: self
                .instructions
                .map(|i| {
                    i.counts
                        .iter()
                        .map(|c| InstructionJson {
                            workload: c.workload.clone(),
                            parser: c.parser.clone(),
                            instructions_per_msg: c.instructions,
                            branches_per_msg: c.branches,
                            mispredicted_per_msg: c.mispredicted,
                        })
                        .collect()
                })
                .unwrap_or_default(),
            strictness_probes: self
                .probes
                .iter()
                .map(|(parser, rejected)| JsonProbe {
                    parser,
                    rejected: peers::PROBES
                        .iter()
                        .zip(rejected)
                        .filter(|(_, r)| **r)
                        .map(|(p, _)| p.0)
                        .collect(),
                    accepted: peers::PROBES
                        .iter()
                        .zip(rejected)
                        .filter(|(_, r)| !**r)
                        .map(|(p, _)| p.0)
                        .collect(),
                })
                .collect(),
        }
    }
}

/// The transports table: one row per server × transport × connection count.
fn transports_table(runs: &[TransportRun]) -> String {
    let mut s = String::from(
        "| transport | server | connections | req/s | p50 µs | p99 µs | p99.9 µs | server CPU µs/req | what serves | CPU µs/req, each round |\n\
         | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n",
    );
    for r in runs {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.0} | {:.1} | {:.1} | {:.1} | {:.2} | {} | {} |",
            r.transport,
            r.server,
            r.connections,
            r.req_per_s,
            r.p50_us,
            r.p99_us,
            r.p999_us,
            r.server_cpu_us_per_req,
            r.implementation,
            rounds(&r.rounds)
        );
    }
    s
}

/// Every round's CPU µs per request, in the order given, for a table's last column.
pub(crate) fn rounds(cpu: &[f64]) -> String {
    cpu.iter()
        .map(|cpu| format!("{cpu:.2}"))
        .collect::<Vec<_>>()
        .join(" · ")
}

/// The TLS table: one row per side × subject × connections or requests in flight.
fn tls_table(runs: &[crate::tls::TlsRun]) -> String {
    let mut s = String::from(
        "| side | subject | conns / in flight | req/s | p50 µs | p99 µs | CPU µs/req | opened per 10k | upstream conns | what | CPU µs/req of each round |\n\
         | --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |\n",
    );
    for r in runs {
        let _ = writeln!(
            s,
            "| {} | {} | {} | {:.0} | {:.1} | {:.1} | {:.2} | {:.2} | {} | {} | {} |",
            r.side,
            r.subject,
            r.in_flight,
            r.req_per_s,
            r.p50_us,
            r.p99_us,
            r.cpu_us_per_req,
            r.opened_per_10k,
            r.upstream_connections.map_or("–".to_owned(), |n| n.to_string()),
            r.what,
            rounds(&r.rounds)
        );
    }
    s
}
