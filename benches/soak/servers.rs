//! The servers the soak runs, each its own process started as a user starts it, the
//! connections that drive each, and what each came to at the end.

use std::net::SocketAddr;
use std::path::Path;
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::ledger::{Counts, Ledger};
use crate::listening_child::{start_listening, Listening};
use crate::memory::RssTrack;
use crate::stdio_client::StdioFraming;
use crate::traffic::{Traffic, MAX_MESSAGE};
use crate::{http_client, stdio_client, ws_client};

/// HTTP/1.1 connections to `http_server`.
pub const HTTP_CONNECTIONS: usize = 4;

/// WebSocket connections to `http_server`.
pub const WEBSOCKET_CONNECTIONS: usize = 2;

/// Messages per HTTPS connection before the soak closes it and opens another (a new TLS
/// handshake, resumed or not).
pub const TLS_RECONNECT_EVERY: u64 = 500;

/// The longest a stdio server may take to exit once its stdin is closed.
const EXIT_LIMIT: Duration = Duration::from_secs(5);

/// How the soak talks to a server.
#[derive(Clone, Copy, Debug)]
pub enum Transport {
    /// Over its stdin and stdout, in this framing.
    Stdio(StdioFraming),
    /// Over TCP: [`HTTP_CONNECTIONS`] HTTP/1.1 and [`WEBSOCKET_CONNECTIONS`] WebSocket.
    Network,
    /// Over TLS: [`HTTP_CONNECTIONS`] HTTP/1.1 connections, each closed and opened again
    /// every [`TLS_RECONNECT_EVERY`] messages.
    Tls,
}

/// A server to run: which example, with which arguments, spoken to how.
#[derive(Clone, Debug)]
pub struct ServerPlan {
    /// The server's name in the reports.
    pub name: String,
    /// The example (`examples/NAME.rs`).
    pub example: &'static str,
    /// Its command-line arguments.
    pub args: Vec<String>,
    /// How the soak talks to it.
    pub transport: Transport,
}

/// The six servers: `spec_server`'s blocking `serve` loop and its `Peer`, each in both
/// framings, `http_server` over HTTP and WebSocket, and `http_server` serving HTTPS to
/// clients that reconnect; all with a 64 KiB limit.
pub fn plan() -> Vec<ServerPlan> {
    let limit = MAX_MESSAGE.to_string();
    let mut plans = Vec::new();
    for peer in [false, true] {
        for framing in [StdioFraming::Ndjson, StdioFraming::ContentLength] {
            let mut args = vec!["--framing".to_owned(), framing.flag().to_owned()];
            if peer {
                args.push("--peer".to_owned());
            }
            args.extend(["--max-frame".to_owned(), limit.clone()]);
            let loop_name = if peer { "Peer" } else { "serve" };
            plans.push(ServerPlan {
                name: format!("spec_server {} ({loop_name})", framing.flag()),
                example: "spec_server",
                args,
                transport: Transport::Stdio(framing),
            });
        }
    }
    plans.push(ServerPlan {
        name: "http_server (HTTP/1.1 + WebSocket)".to_owned(),
        example: "http_server",
        args: ["--listen", "127.0.0.1:0", "--max-body", &limit]
            .map(str::to_owned)
            .to_vec(),
        transport: Transport::Network,
    });
    let certificates = crate::tls::certificates();
    plans.push(ServerPlan {
        name: "http_server (HTTPS, reconnecting)".to_owned(),
        example: "http_server",
        args: vec![
            "--listen".to_owned(),
            "127.0.0.1:0".to_owned(),
            "--max-body".to_owned(),
            limit.clone(),
            "--tls-cert".to_owned(),
            certificates.cert.display().to_string(),
            "--tls-key".to_owned(),
            certificates.key.display().to_string(),
        ],
        transport: Transport::Tls,
    });
    plans
}

/// The server's process.
enum Process {
    /// A stdio server (killed when dropped).
    Stdio(tokio::process::Child),
    /// A listening server (killed when dropped).
    Listening(Listening),
}

impl Process {
    /// How it exited, if it has.
    fn exited(&mut self) -> Option<String> {
        let status = match self {
            Process::Stdio(child) => child.try_wait(),
            Process::Listening(listening) => listening.child.try_wait(),
        };
        match status {
            Ok(Some(status)) => Some(status.to_string()),
            Ok(None) => None,
            Err(error) => Some(format!("unknown ({error})")),
        }
    }
}

/// One connection driving a server.
struct Driver {
    /// "stdio", "http" or "websocket".
    protocol: &'static str,
    ledger: Arc<Ledger>,
    task: JoinHandle<()>,
}

/// A server running under the soak.
pub struct Running {
    plan: ServerPlan,
    /// The command line as run (the binary relative to the repository).
    command: String,
    pid: u32,
    process: Process,
    drivers: Vec<Driver>,
    rss: RssTrack,
    /// Set when the process turned out to have exited during the run.
    exited_early: Option<String>,
}

/// What a server came to.
pub struct Outcome {
    /// The server's name.
    pub name: String,
    /// The command line.
    pub command: String,
    /// The connections, e.g. "1 stdio" or "4 http + 2 websocket".
    pub connections: String,
    /// All its connections' counts.
    pub counts: Counts,
    /// The counts by protocol (one entry for a stdio server).
    pub by_protocol: Vec<(&'static str, Counts)>,
    /// Its resident memory over the run.
    pub rss: RssTrack,
    /// How it ended.
    pub exit: String,
    /// What went wrong, in words.
    pub notes: Vec<String>,
}

impl Running {
    /// Starts the server of `plan` from `binary` and its connections (the `index`th server,
    /// for the traffic's seeds), which send until `stop`. Panics if it does not start.
    pub fn start(index: usize, plan: ServerPlan, binary: &Path, stop: &watch::Receiver<bool>) -> Running {
        let command = command_line(binary, &plan.args);
        let (process, drivers) = match plan.transport {
            Transport::Stdio(framing) => start_stdio(index, binary, &plan, framing, stop),
            Transport::Network => start_network(index, binary, &plan, false, stop),
            Transport::Tls => start_network(index, binary, &plan, true, stop),
        };
        let pid = match &process {
            Process::Stdio(child) => child.id(),
            Process::Listening(listening) => Some(listening.child.id()),
        }
        .unwrap_or_else(|| panic!("{} exited at once", plan.name));
        Running {
            plan,
            command,
            pid,
            process,
            drivers,
            rss: RssTrack::default(),
            exited_early: None,
        }
    }

    /// The server's name.
    pub fn name(&self) -> &str {
        &self.plan.name
    }

    /// Samples its resident memory (`warmed_up`: the warm-up is over), and notes when it
    /// has exited, `at` into the run.
    pub fn sample(&mut self, warmed_up: bool, at: Duration) {
        if self.exited_early.is_some() {
            return;
        }
        let alive = self.rss.sample(self.pid, warmed_up);
        if let Some(status) = self
            .process
            .exited()
            .or_else(|| (!alive).then(|| "gone".to_owned()))
        {
            self.exited_early = Some(format!("exited during the run, {} s in: {status}", at.as_secs()));
        }
    }

    /// Messages sent so far on all its connections.
    pub fn messages_sent(&self) -> u64 {
        self.drivers.iter().map(|d| d.ledger.messages_sent()).sum()
    }

    /// Waits (until `deadline`) for its connections to drain and close, then for a stdio
    /// server to exit; stops what does not, and sums up.
    pub async fn finish(mut self, deadline: Instant) -> Outcome {
        let mut notes = Vec::new();
        for driver in &mut self.drivers {
            if tokio::time::timeout_at(deadline, &mut driver.task).await.is_err() {
                driver.task.abort();
                notes.push(format!("a {} connection did not finish in time", driver.protocol));
            }
        }
        let exit = self.exit_status().await;
        let mut counts = Counts::default();
        let mut by_protocol: Vec<(&'static str, Counts)> = Vec::new();
        for driver in &self.drivers {
            let (connection, connection_notes) = driver.ledger.finish();
            counts.add(&connection);
            notes.extend(connection_notes);
            match by_protocol
                .iter_mut()
                .find(|(protocol, _)| *protocol == driver.protocol)
            {
                Some((_, sum)) => sum.add(&connection),
                None => by_protocol.push((driver.protocol, connection)),
            }
        }
        Outcome {
            name: self.plan.name.clone(),
            command: self.command.clone(),
            connections: self.describe_connections(),
            counts,
            by_protocol,
            rss: self.rss.clone(),
            exit,
            notes,
        }
    }

    /// How the process ended: on its own at the end of its input (stdio), stopped by the
    /// soak (a listening server, or a stdio server that did not exit), or earlier.
    async fn exit_status(&mut self) -> String {
        if let Some(early) = &self.exited_early {
            return early.clone();
        }
        match &mut self.process {
            Process::Stdio(child) => match tokio::time::timeout(EXIT_LIMIT, child.wait()).await {
                Ok(Ok(status)) => format!("exited at the end of its input: {status}"),
                Ok(Err(error)) => format!("unknown ({error})"),
                Err(_) => {
                    let _ = child.kill().await;
                    format!(
                        "killed: still running {} s after its input ended",
                        EXIT_LIMIT.as_secs()
                    )
                }
            },
            Process::Listening(listening) => match listening.child.try_wait() {
                Ok(Some(status)) => format!("exited on its own: {status}"),
                _ => "still serving at the end; stopped by the soak".to_owned(),
            },
        }
    }

    /// "1 stdio", "4 http + 2 websocket".
    fn describe_connections(&self) -> String {
        let mut counted: Vec<(&str, usize)> = Vec::new();
        for driver in &self.drivers {
            match counted
                .iter_mut()
                .find(|(protocol, _)| *protocol == driver.protocol)
            {
                Some((_, n)) => *n += 1,
                None => counted.push((driver.protocol, 1)),
            }
        }
        let parts: Vec<String> = counted
            .iter()
            .map(|(protocol, n)| format!("{n} {protocol}"))
            .collect();
        parts.join(" + ")
    }
}

/// Starts a stdio server and the one connection over its pipes.
fn start_stdio(
    index: usize,
    binary: &Path,
    plan: &ServerPlan,
    framing: StdioFraming,
    stop: &watch::Receiver<bool>,
) -> (Process, Vec<Driver>) {
    let mut child = tokio::process::Command::new(binary)
        .args(&plan.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true)
        .spawn()
        .unwrap_or_else(|error| panic!("start {}: {error}", binary.display()));
    let input = child.stdin.take().expect("a piped stdin");
    let output = child.stdout.take().expect("a piped stdout");
    let name = format!("{} stdio", plan.name);
    let ledger = Arc::new(Ledger::new(&name));
    let traffic = Traffic::new(&format!("s{index}"), seed(index, 0));
    let task = tokio::spawn(stdio_client::drive(
        input,
        output,
        framing,
        ledger.clone(),
        traffic,
        stop.clone(),
    ));
    let driver = Driver {
        protocol: "stdio",
        ledger,
        task,
    };
    (Process::Stdio(child), vec![driver])
}

/// Starts a listening server (waiting for its `listening on` line) and its HTTP and
/// WebSocket connections, or (`tls`) its HTTPS connections, which reconnect.
fn start_network(
    index: usize,
    binary: &Path,
    plan: &ServerPlan,
    tls: bool,
    stop: &watch::Receiver<bool>,
) -> (Process, Vec<Driver>) {
    let args: Vec<&str> = plan.args.iter().map(String::as_str).collect();
    let listening = start_listening(binary, &args);
    let address: SocketAddr = listening
        .address
        .parse()
        .unwrap_or_else(|error| panic!("{}: listening on {:?}: {error}", plan.name, listening.address));
    let mut drivers = Vec::new();
    let reconnect = tls.then(|| http_client::Reconnect {
        tls: crate::tls::certificates().client.clone(),
        every: TLS_RECONNECT_EVERY,
    });
    let websockets = if tls { 0 } else { WEBSOCKET_CONNECTIONS };
    for connection in 0..HTTP_CONNECTIONS + websockets {
        let websocket = connection >= HTTP_CONNECTIONS;
        let protocol = match (websocket, tls) {
            (true, _) => "websocket",
            (false, true) => "https",
            (false, false) => "http",
        };
        let ledger = Arc::new(Ledger::new(&format!("{} {protocol} #{connection}", plan.name)));
        let traffic = Traffic::new(&format!("s{index}c{connection}"), seed(index, connection));
        let task = if websocket {
            tokio::spawn(ws_client::drive(address, ledger.clone(), traffic, stop.clone()))
        } else {
            tokio::spawn(http_client::drive(
                address,
                reconnect.clone(),
                ledger.clone(),
                traffic,
                stop.clone(),
            ))
        };
        drivers.push(Driver {
            protocol,
            ledger,
            task,
        });
    }
    (Process::Listening(listening), drivers)
}

/// The traffic seed of `server`'s `connection`.
fn seed(server: usize, connection: usize) -> u64 {
    0x5eed_0000 + (server as u64) * 1000 + connection as u64
}

/// `binary` (relative to the repository when inside it) and `args`, as typed in a shell.
fn command_line(binary: &Path, args: &[String]) -> String {
    let shown = binary
        .strip_prefix(env!("CARGO_MANIFEST_DIR"))
        .unwrap_or(binary)
        .display()
        .to_string();
    std::iter::once(shown)
        .chain(args.iter().cloned())
        .collect::<Vec<_>>()
        .join(" ")
}
