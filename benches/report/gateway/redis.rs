//! The gateway section's own Redis (`redis` feature), for the fleet subjects: a
//! `redis-server` on a free loopback port, without persistence, killed and reaped when its
//! guard is dropped (at the end of the section, or when the section panics); its CPU time,
//! and its counters read with `INFO` over a plain connection speaking RESP.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A running `redis-server`; killed and waited for when dropped.
pub(crate) struct RedisServer {
    child: Child,
    pub(crate) address: SocketAddr,
    /// The connection `INFO` is asked on (one for the whole section: a connection closing
    /// would count as a read of Redis's).
    info: BufReader<TcpStream>,
}

/// Redis's counters at one moment (`INFO all`).
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct RedisCounters {
    /// `total_commands_processed`: every command, those a script runs inside Redis included.
    pub(crate) commands: u64,
    /// `total_reads_processed`: the times Redis read what a client sent — its round trips
    /// (commands pipelined on one connection and read together share one).
    pub(crate) reads: u64,
    /// Calls of `EVALSHA` and `EVAL` (commandstats): scripts run, each sent by a client.
    pub(crate) scripts: u64,
}

impl RedisCounters {
    /// What happened between `self` and `later`, the one `INFO` asked in between aside (it
    /// counts once in each counter: asked at both ends, the first's command is counted after
    /// its answer was made and the second's read before).
    pub(crate) fn until(&self, later: &RedisCounters) -> RedisCounters {
        RedisCounters {
            commands: later.commands.saturating_sub(self.commands).saturating_sub(1),
            reads: later.reads.saturating_sub(self.reads).saturating_sub(1),
            scripts: later.scripts.saturating_sub(self.scripts),
        }
    }
}

impl RedisServer {
    /// Finds `redis-server` (`tests/redis/setup.sh`, whose last line is its path) and starts
    /// it on a free loopback port; why not, when it cannot.
    pub(crate) fn start() -> Result<RedisServer, String> {
        let setup = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/redis/setup.sh");
        let output = Command::new("bash")
            .arg(setup)
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()
            .map_err(|e| format!("bash {setup}: {e}"))?;
        if !output.status.success() {
            return Err(format!("bash {setup} failed ({})", output.status));
        }
        let stdout = String::from_utf8_lossy(&output.stdout);
        let program = stdout
            .lines()
            .map(str::trim)
            .rfind(|line| !line.is_empty())
            .ok_or_else(|| format!("bash {setup} printed no path"))?
            .to_owned();
        let mut last = String::new();
        // The port is free when asked, not necessarily when Redis binds it: a few tries.
        for _ in 0..3 {
            match RedisServer::start_on_free_port(&program) {
                Ok(server) => return Ok(server),
                Err(problem) => last = problem,
            }
        }
        Err(last)
    }

    fn start_on_free_port(program: &str) -> Result<RedisServer, String> {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|listener| listener.local_addr())
            .map_err(|e| format!("a free port: {e}"))?
            .port();
        let mut child = Command::new(program)
            .args(["--port", &port.to_string()])
            .args([
                "--save",
                "",
                "--appendonly",
                "no",
                "--bind",
                "127.0.0.1",
                "--daemonize",
                "no",
            ])
            .args(["--loglevel", "warning"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("{program}: {e}"))?;
        let address = SocketAddr::from(([127, 0, 0, 1], port));
        let began = Instant::now();
        let stream = loop {
            if let Ok(Some(status)) = child.try_wait() {
                return Err(format!("{program} on port {port} exited at once ({status})"));
            }
            if let Ok(stream) = TcpStream::connect_timeout(&address, Duration::from_millis(100)) {
                break stream;
            }
            if began.elapsed() > Duration::from_secs(10) {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!(
                    "{program} did not accept connections on port {port} in 10 s"
                ));
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        let _ = stream.set_nodelay(true);
        let mut server = RedisServer {
            child,
            address,
            info: BufReader::new(stream),
        };
        // Answers once loaded (a fresh server without data loads at once).
        server.info_text().map_err(|e| format!("{program}: INFO: {e}"))?;
        Ok(server)
    }

    /// `redis://127.0.0.1:PORT/`.
    pub(crate) fn url(&self) -> String {
        format!("redis://{}/", self.address)
    }

    /// The CPU time (user + system) all of its threads have used so far.
    pub(crate) fn cpu(&self) -> Duration {
        crate::transports::child::cpu_time(self.child.id())
    }

    /// Its counters now.
    pub(crate) fn counters(&mut self) -> RedisCounters {
        let text = self.info_text().expect("Redis answers INFO");
        let field = |name: &str| {
            text.lines()
                .find_map(|line| line.strip_prefix(name)?.strip_prefix(':'))
                .and_then(|value| value.trim().parse::<u64>().ok())
                .unwrap_or_else(|| panic!("INFO without {name}"))
        };
        // `cmdstat_evalsha:calls=N,usec=…`
        let calls = |command: &str| {
            text.lines()
                .find_map(|line| line.strip_prefix(command)?.strip_prefix(":calls="))
                .and_then(|rest| rest.split(',').next()?.parse::<u64>().ok())
                .unwrap_or(0)
        };
        RedisCounters {
            commands: field("total_commands_processed"),
            reads: field("total_reads_processed"),
            scripts: calls("cmdstat_evalsha") + calls("cmdstat_eval"),
        }
    }

    /// `INFO all`'s text (RESP: `*2 INFO all`, answered by a bulk string).
    fn info_text(&mut self) -> std::io::Result<String> {
        let stream = self.info.get_mut();
        stream.write_all(b"*2\r\n$4\r\nINFO\r\n$3\r\nall\r\n")?;
        let mut head = String::new();
        self.info.read_line(&mut head)?;
        let length: usize = head
            .strip_prefix('$')
            .and_then(|n| n.trim().parse().ok())
            .ok_or_else(|| std::io::Error::other(format!("not a bulk string: {head:?}")))?;
        let mut body = vec![0; length + 2];
        self.info.read_exact(&mut body)?;
        body.truncate(length);
        String::from_utf8(body).map_err(std::io::Error::other)
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
