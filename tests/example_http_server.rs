//! The HTTP example server (`examples/http_server.rs`, `http` feature), started as a user
//! starts it, on 127.0.0.1 with the port the system picks, and called by Python's `requests`
//! (`tests/interop/py_http_client.py`): single calls, named params, a batch with invalid
//! and unknown elements, notifications only (204), malformed JSON and invalid UTF-8 (-32700),
//! a body over `--max-body` with and without Content-Length (413), a wrong content type (415),
//! GET (405), and that it keeps serving after all of it.
//!
//! The same server's WebSocket endpoint is called by Python's `websockets`
//! (`tests/interop/py_ws_client.py`): a call, a batch, a parse error, a ping, and the close
//! codes for a message over the limit (1009) and a binary message (1003).
//!
//! The Python packages come from `tests/interop/setup.sh`, as for the python-lsp-jsonrpc
//! interop; without them the test says "skipped", or fails when `CI` is set.
#![cfg(all(unix, feature = "http"))]

#[path = "support/example_binary.rs"]
mod example_binary;
#[path = "support/python_peer.rs"]
mod python_peer;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use example_binary::example_binary;
use python_peer::{interop_dir, python, run, CHILD_TIMEOUT};

const MAX_BODY: usize = 4096;

/// The example server, killed when dropped.
struct Server {
    child: Child,
    address: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_server() -> Server {
    let mut child = Command::new(example_binary("http_server"))
        .args(["--listen", "127.0.0.1:0", "--max-body", &MAX_BODY.to_string()])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start examples/http_server");
    let stdout = child.stdout.take().expect("stdout");
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        let mut line = String::new();
        let _ = BufReader::new(stdout).read_line(&mut line);
        let _ = sender.send(line);
    });
    let line = receiver
        .recv_timeout(Duration::from_secs(60))
        .expect("the server says where it listens");
    let address = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .to_owned();
    Server { child, address }
}

#[test]
fn python_requests_calls_the_http_server() {
    let Some(python) = python() else {
        return;
    };
    let server = start_server();
    let url = format!("http://{}/", server.address);
    let finished = run(
        Command::new(python)
            .arg(interop_dir().join("py_http_client.py"))
            .arg(&url)
            .arg(MAX_BODY.to_string()),
        CHILD_TIMEOUT,
    )
    .expect("run py_http_client.py");
    assert!(finished.success(), "{}", finished.describe("py_http_client.py"));
    let checks: usize = finished
        .stdout
        .lines()
        .find_map(|line| line.strip_prefix("http_client: checks="))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{}", finished.describe("py_http_client.py")));
    assert_eq!(checks, 16, "{}", finished.stdout);
}

#[test]
fn python_websockets_calls_the_websocket_endpoint() {
    let Some(python) = python() else {
        return;
    };
    let server = start_server();
    let url = format!("ws://{}/", server.address);
    let finished = run(
        Command::new(python)
            .arg(interop_dir().join("py_ws_client.py"))
            .arg(&url)
            .arg(MAX_BODY.to_string()),
        CHILD_TIMEOUT,
    )
    .expect("run py_ws_client.py");
    assert!(finished.success(), "{}", finished.describe("py_ws_client.py"));
    let checks: usize = finished
        .stdout
        .lines()
        .find_map(|line| line.strip_prefix("ws_client: checks="))
        .and_then(|n| n.trim().parse().ok())
        .unwrap_or_else(|| panic!("{}", finished.describe("py_ws_client.py")));
    assert_eq!(checks, 6, "{}", finished.stdout);
}
