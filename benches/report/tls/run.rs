//! Runs the TLS section (`http` feature): certificates, the servers, the rounds.

use std::sync::Arc;
use std::time::Duration;

use super::TlsRun;
use crate::config::Config;
use crate::render_json::round;
use crate::transports::child::ServerProcess;
use crate::transports::load::{self, Exchange, Protocol};

/// Connections (server side) and requests in flight (gateway side) measured.
const IN_FLIGHT: [usize; 2] = [1, 64];

/// Rounds in a full run, interleaved; the median round is kept (as in the other sections).
const ROUNDS: usize = 3;

/// The server side's subjects: (name, server kind, what).
const SERVERS: [(&str, &str, &str); 2] = [
    (
        "rpcwire",
        "tls-server-rpcwire",
        "rpcwire HttpServer::with_tls (rustls 0.23, ring)",
    ),
    (
        "floor",
        "tls-server-floor",
        "hyper 1 http1 after tokio-rustls 0.26, body read, fixed answer",
    ),
];

/// The gateway side's subjects: (name, server kind, upstream over TLS, what).
const GATEWAYS: [(&str, &str, bool, &str); 5] = [
    (
        "rpcwire-http",
        "tls-gw-rpcwire-plain",
        false,
        "rpcwire's gateway, plain HTTP/1.1 upstream",
    ),
    (
        "rpcwire-h1",
        "tls-gw-rpcwire-h1",
        true,
        "rpcwire's gateway, https upstream, HTTP/1.1",
    ),
    (
        "rpcwire-h2",
        "tls-gw-rpcwire-h2",
        true,
        "rpcwire's gateway, https upstream, HTTP/2 (one connection)",
    ),
    (
        "floor-h1",
        "tls-gw-floor-h1",
        true,
        "hyper pooled client + hyper-rustls 0.27, HTTP/1.1, bodies as they are",
    ),
    (
        "floor-h2",
        "tls-gw-floor-h2",
        true,
        "hyper pooled client + hyper-rustls 0.27, HTTP/2 only, bodies as they are",
    ),
];

/// The files of the section's certificates, removed when dropped.
struct Certificates {
    directory: std::path::PathBuf,
    ca: String,
}

impl Certificates {
    fn make() -> Certificates {
        let directory = std::env::temp_dir().join(format!("rpcwire-report-tls-{}", std::process::id()));
        std::fs::create_dir_all(&directory).expect("a directory for the certificates");
        let authority = super::certs::Authority::new("rpcwire report CA");
        let server = authority.server(super::certs::LOCAL);
        std::fs::write(directory.join("ca.pem"), &authority.pem.cert).expect("ca.pem");
        std::fs::write(directory.join("cert.pem"), &server.cert).expect("cert.pem");
        std::fs::write(directory.join("key.pem"), &server.key).expect("key.pem");
        Certificates {
            directory,
            ca: authority.pem.cert.clone(),
        }
    }

    fn path(&self, name: &str) -> String {
        self.directory
            .join(name)
            .to_str()
            .expect("a UTF-8 path")
            .to_owned()
    }
}

impl Drop for Certificates {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.directory);
    }
}

/// TCP connections this machine has opened so far (`ActiveOpens` of /proc/net/snmp).
fn opened() -> u64 {
    let snmp = std::fs::read_to_string("/proc/net/snmp").unwrap_or_default();
    let mut tcp = snmp.lines().filter(|line| line.starts_with("Tcp:"));
    let (Some(names), Some(values)) = (tcp.next(), tcp.next()) else {
        return 0;
    };
    names
        .split_whitespace()
        .zip(values.split_whitespace())
        .find(|(name, _)| *name == "ActiveOpens")
        .and_then(|(_, value)| value.parse().ok())
        .unwrap_or(0)
}

/// The process `pid`'s established TCP connections to `port` (its sockets, from
/// /proc/PID/fd, found in /proc/net/tcp).
fn connections_to(pid: u32, port: u16) -> usize {
    let sockets: std::collections::HashSet<String> = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|fd| {
            let target = std::fs::read_link(fd.path()).ok()?;
            let target = target.to_str()?;
            Some(target.strip_prefix("socket:[")?.strip_suffix(']')?.to_owned())
        })
        .collect();
    let table = std::fs::read_to_string("/proc/net/tcp").unwrap_or_default();
    table
        .lines()
        .skip(1)
        .filter(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            fields.len() > 9
                && fields[3] == "01"
                && sockets.contains(fields[9])
                && fields[2]
                    .rsplit_once(':')
                    .is_some_and(|(_, remote)| u16::from_str_radix(remote, 16) == Ok(port))
        })
        .count()
}

/// Measures the section, `ROUNDS` times interleaved; the median round of each configuration.
pub(crate) fn measure_tls(config: &Config) -> Vec<TlsRun> {
    let (warmup, duration, rounds) = if config.quick {
        (Duration::from_millis(200), Duration::from_millis(800), 1)
    } else {
        (Duration::from_millis(500), Duration::from_millis(2000), ROUNDS)
    };
    let certificates = Certificates::make();
    load::trust(&certificates.ca);
    let (cert, key, ca) = (
        certificates.path("cert.pem"),
        certificates.path("key.pem"),
        certificates.path("ca.pem"),
    );
    let servers: Vec<ServerProcess> = SERVERS
        .iter()
        .map(|(_, kind, _)| ServerProcess::start_with(kind, &[&cert, &key]))
        .collect();
    let plain_upstream = ServerProcess::start_with("gateway-upstream", &[]);
    let tls_upstream = ServerProcess::start_with("tls-upstream", &[&cert, &key]);
    let tls_url = format!("https://{}/", tls_upstream.address);
    let plain_url = format!("http://{}/", plain_upstream.address);
    let gateways: Vec<ServerProcess> = GATEWAYS
        .iter()
        .map(|(_, kind, tls, _)| {
            if *tls {
                ServerProcess::start_with(kind, &[&tls_url, &ca])
            } else {
                ServerProcess::start_with(kind, &[&plain_url])
            }
        })
        .collect();
    let server_exchanges = Arc::new(vec![Exchange::new(
        Protocol::Https,
        crate::transports::REQUEST.as_bytes(),
        br#""result":19"#,
    )]);
    let w1 = crate::common::workloads::W1.as_bytes();
    let gateway_exchanges = Arc::new(vec![Exchange::new(
        Protocol::Http,
        w1,
        format!(r#""result":{}"#, crate::gateway::servers::W1_RESULT).as_bytes(),
    )]);
    // samples[(side, subject index, in flight)] = one run per round.
    let mut samples: Vec<Vec<TlsRun>> = Vec::new();
    for round_number in 1..=rounds {
        let mut slot = 0;
        for in_flight in IN_FLIGHT {
            let server_subjects = SERVERS.iter().zip(&servers).map(|((name, _, what), process)| {
                (
                    "server",
                    *name,
                    *what,
                    process,
                    Protocol::Https,
                    &server_exchanges,
                    None,
                )
            });
            let gateway_subjects = GATEWAYS
                .iter()
                .zip(&gateways)
                .map(|((name, _, tls, what), process)| {
                    let port = if *tls {
                        tls_upstream.address.port()
                    } else {
                        plain_upstream.address.port()
                    };
                    (
                        "gateway",
                        *name,
                        *what,
                        process,
                        Protocol::Http,
                        &gateway_exchanges,
                        Some(port),
                    )
                });
            for (side, name, what, process, protocol, exchanges, upstream_port) in
                server_subjects.chain(gateway_subjects)
            {
                let mut marks = Vec::with_capacity(2);
                let load = load::run(
                    protocol,
                    process.address,
                    in_flight,
                    exchanges,
                    warmup,
                    duration,
                    || marks.push((process.cpu(), opened())),
                );
                let requests = load.requests.max(1) as f64;
                let us = |q: f64| load.histogram.value_at_quantile(q) as f64 / 1e3;
                let run = TlsRun {
                    side,
                    subject: name,
                    in_flight,
                    req_per_s: round(load.requests as f64 / load.seconds, 0),
                    p50_us: round(us(0.5), 1),
                    p99_us: round(us(0.99), 1),
                    cpu_us_per_req: round(
                        marks[1].0.saturating_sub(marks[0].0).as_secs_f64() * 1e6 / requests,
                        2,
                    ),
                    opened_per_10k: round(marks[1].1.saturating_sub(marks[0].1) as f64 * 1e4 / requests, 2),
                    upstream_connections: upstream_port.map(|port| connections_to(process.pid(), port)),
                    requests: load.requests,
                    what,
                    rounds: Vec::new(),
                };
                println!(
                    "tls: round {round_number}/{rounds} {side:<7} {name:<12} {in_flight:>2} in flight: {:>7.0} req/s, \
                     p50 {:>6.1} p99 {:>6.1} µs, CPU {:>6.2} µs/req, {:.2} opened per 10k{}",
                    run.req_per_s,
                    run.p50_us,
                    run.p99_us,
                    run.cpu_us_per_req,
                    run.opened_per_10k,
                    run.upstream_connections
                        .map_or(String::new(), |n| format!(", {n} upstream connection(s)"))
                );
                if samples.len() <= slot {
                    samples.push(Vec::new());
                }
                samples[slot].push(run);
                slot += 1;
            }
        }
    }
    drop(gateways);
    samples
        .into_iter()
        .map(|mut runs| {
            runs.sort_by(|a, b| a.cpu_us_per_req.total_cmp(&b.cpu_us_per_req));
            let all: Vec<f64> = runs.iter().map(|run| run.cpu_us_per_req).collect();
            let mut median = runs.swap_remove(runs.len() / 2);
            median.rounds = all;
            median
        })
        .collect()
}
