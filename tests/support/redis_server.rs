//! A real Redis for the fleet tests: Debian's `redis-server`, installed by
//! `tests/redis/setup.sh` (or "skipped" when that fails outside CI, like the other peers),
//! started on a free loopback port without persistence, and stopped (and reaped) when the
//! test drops it. Uses `run` and `installed` from python_peer.rs, which the test includes
//! beside this file as `mod python_peer`.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Once, OnceLock};
use std::time::{Duration, Instant};

use super::python_peer::{installed, run, SETUP_TIMEOUT};

/// `redis-server`'s path; `None` (after saying "skipped") when it could not be installed
/// outside CI.
pub fn redis_server_path() -> Option<PathBuf> {
    static PATH: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    static SAID: Once = Once::new();
    installed(PATH.get_or_init(setup), &SAID, "the fleet tests (Redis)")
}

fn setup() -> Result<PathBuf, String> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/redis/setup.sh");
    let finished = run(Command::new("bash").arg(script), SETUP_TIMEOUT)
        .map_err(|e| format!("cannot run bash {script}: {e}"))?;
    if !finished.success() {
        return Err(finished.describe("bash tests/redis/setup.sh"));
    }
    let path = PathBuf::from(finished.stdout.lines().last().unwrap_or_default().trim());
    if !path.is_file() {
        return Err(format!("setup.sh named no redis-server: {path:?}"));
    }
    Ok(path)
}

/// A `redis-server` of this test, on 127.0.0.1.
pub struct RedisServer {
    child: Option<Child>,
    pub port: u16,
    /// Serving TLS only (`rediss://`).
    tls: bool,
}

impl RedisServer {
    /// Starts one on a free port; `None` when Redis could not be installed (outside CI).
    pub fn start() -> Option<RedisServer> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        RedisServer::start_on(port)
    }

    /// Starts one on `port` (again, after [`stop`](RedisServer::stop)).
    pub fn start_on(port: u16) -> Option<RedisServer> {
        let server = RedisServer::spawn(
            port,
            false,
            &["--port", &port.to_string(), "--protected-mode", "yes"],
        )?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while !server.answers() {
            assert!(
                Instant::now() < deadline,
                "redis-server answers PING on port {port}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(server)
    }

    /// Starts one serving TLS only on a free port, with the certificate, key and CA in the
    /// PEM files given; client certificates (issued by the CA) are asked for when
    /// `clients_must_show` is set. `None` when Redis could not be installed.
    pub fn start_tls(cert: &str, key: &str, ca: &str, clients_must_show: bool) -> Option<RedisServer> {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let tls_port = port.to_string();
        let server = RedisServer::spawn(
            port,
            true,
            &[
                "--port",
                "0",
                "--tls-port",
                &tls_port,
                "--tls-cert-file",
                cert,
                "--tls-key-file",
                key,
                "--tls-ca-cert-file",
                ca,
                "--tls-auth-clients",
                if clients_must_show { "yes" } else { "no" },
            ],
        )?;
        let deadline = Instant::now() + Duration::from_secs(10);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(Instant::now() < deadline, "redis-server listens on port {port}");
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(server)
    }

    /// `redis-server` with `listening` (its ports, and TLS's files), on 127.0.0.1, without
    /// persistence, in the foreground; `None` when Redis could not be installed.
    fn spawn(port: u16, tls: bool, listening: &[&str]) -> Option<RedisServer> {
        let child = Command::new(redis_server_path()?)
            .args(listening)
            .args(["--bind", "127.0.0.1", "--save", "", "--appendonly", "no"])
            .args(["--daemonize", "no", "--loglevel", "warning"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(if tls { Stdio::inherit() } else { Stdio::null() })
            .spawn()
            .expect("start redis-server");
        Some(RedisServer {
            child: Some(child),
            port,
            tls,
        })
    }

    /// `redis://127.0.0.1:PORT/`, or `rediss://localhost:PORT/` when it serves TLS.
    pub fn url(&self) -> String {
        if self.tls {
            return format!("rediss://localhost:{}/", self.port);
        }
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Whether it answers `PING`.
    pub fn answers(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(1)));
        if stream.write_all(b"PING\r\n").is_err() {
            return false;
        }
        let mut answer = [0u8; 7];
        stream.read_exact(&mut answer).is_ok() && &answer == b"+PONG\r\n"
    }

    /// Kills it (as a crash would) and reaps it.
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}
