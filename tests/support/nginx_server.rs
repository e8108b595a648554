//! nginx (Debian's, installed by `tests/nginx/setup.sh`, or "skipped" when that fails
//! outside CI, like the other peers) terminating TLS — HTTP/2 and HTTP/1.1 by ALPN, and
//! WebSocket upgrades — in front of a plain HTTP server on loopback, with its own
//! configuration in a directory of its own; stopped (and reaped) when dropped. Uses `run`
//! and `installed` from python_peer.rs, which the test includes beside this file as
//! `mod python_peer`.
#![allow(dead_code)]

use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::{Once, OnceLock};
use std::time::{Duration, Instant};

use super::python_peer::{installed, run, SETUP_TIMEOUT};

/// nginx's path; `None` (after saying "skipped") when it could not be installed outside CI.
pub fn nginx_path() -> Option<PathBuf> {
    static PATH: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    static SAID: Once = Once::new();
    installed(PATH.get_or_init(setup), &SAID, "the TLS tests behind nginx")
}

fn setup() -> Result<PathBuf, String> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/nginx/setup.sh");
    let finished = run(Command::new("bash").arg(script), SETUP_TIMEOUT)
        .map_err(|e| format!("cannot run bash {script}: {e}"))?;
    if !finished.success() {
        return Err(finished.describe("bash tests/nginx/setup.sh"));
    }
    let path = PathBuf::from(finished.stdout.lines().last().unwrap_or_default().trim());
    if !path.is_file() {
        return Err(format!("setup.sh named no nginx: {path:?}"));
    }
    Ok(path)
}

/// An nginx of this test, serving TLS on 127.0.0.1:`port` in front of `backend`.
pub struct Nginx {
    child: Child,
    pub port: u16,
    directory: PathBuf,
}

impl Nginx {
    /// Starts one with the certificate and key in PEM, proxying every path to the plain
    /// HTTP server at `backend` (`127.0.0.1:PORT`); `None` when nginx could not be installed.
    pub fn start(cert_pem: &str, key_pem: &str, backend: &str) -> Option<Nginx> {
        let path = nginx_path()?;
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        static NEXT: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let directory = std::env::temp_dir().join(format!(
            "rpcwire-nginx-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&directory).unwrap();
        std::fs::write(directory.join("cert.pem"), cert_pem).unwrap();
        std::fs::write(directory.join("key.pem"), key_pem).unwrap();
        let dir = directory.display();
        // As root, the workers would switch to `nobody`, who cannot read this directory.
        let root = Command::new("id")
            .arg("-u")
            .output()
            .is_ok_and(|out| out.stdout.starts_with(b"0\n"));
        let user = if root { "user root;" } else { "" };
        let config = format!(
            r#"{user}
worker_processes 1;
error_log {dir}/error.log warn;
pid {dir}/nginx.pid;
events {{ worker_connections 512; }}
http {{
    access_log off;
    client_body_temp_path {dir}/body;
    proxy_temp_path {dir}/proxy;
    fastcgi_temp_path {dir}/fastcgi;
    uwsgi_temp_path {dir}/uwsgi;
    scgi_temp_path {dir}/scgi;
    client_max_body_size 16m;
    map $http_upgrade $connection_upgrade {{ default upgrade; '' close; }}
    upstream backend {{ server {backend}; keepalive 32; }}
    server {{
        listen 127.0.0.1:{port} ssl http2;
        ssl_certificate {dir}/cert.pem;
        ssl_certificate_key {dir}/key.pem;
        location / {{
            proxy_pass http://backend;
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_buffering off;
            proxy_request_buffering off;
            proxy_read_timeout 300s;
        }}
    }}
}}
"#
        );
        std::fs::write(directory.join("nginx.conf"), config).unwrap();
        let child = Command::new(path)
            .arg("-p")
            .arg(&directory)
            .arg("-c")
            .arg(directory.join("nginx.conf"))
            .args(["-g", "daemon off;"])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start nginx");
        let nginx = Nginx {
            child,
            port,
            directory,
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                Instant::now() < deadline,
                "nginx listens: {}",
                std::fs::read_to_string(nginx.directory.join("error.log")).unwrap_or_default()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        Some(nginx)
    }

    /// `https://localhost:PORT{path}`.
    pub fn url(&self, scheme: &str, path: &str) -> String {
        format!("{scheme}://localhost:{}{path}", self.port)
    }
}

impl Drop for Nginx {
    /// SIGQUIT (a graceful stop), SIGKILL after 5 s; reaped either way, its directory removed.
    fn drop(&mut self) {
        let _ = Command::new("kill")
            .args(["-QUIT", &self.child.id().to_string()])
            .status();
        let deadline = Instant::now() + Duration::from_secs(5);
        while !matches!(self.child.try_wait(), Ok(Some(_))) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.directory);
    }
}
