//! Interop with a JSON-RPC implementation written elsewhere: python-lsp-jsonrpc
//! (`pylsp_jsonrpc`, Content-Length framing over streams), as the peer in both directions.
//!
//! - `python_client_calls_rpcwire_server`: `tests/interop/py_client.py` runs the
//!   `spec_server` example as its child and checks its answers through pylsp_jsonrpc's
//!   `Endpoint` (subtract, sum, get_data, echo, notifications, -32601, -32602);
//!   `python_client_calls_rpcwire_peer_over_stdio` (`tokio` feature) does the same with the
//!   server serving through `Peer` over the stdio transport (`spec_server --peer`).
//! - `rpcwire_client_calls_python_server` (`tokio` feature): the `stdio_client` example
//!   runs `tests/interop/py_server.py` as its child and makes 10,000 `subtract` calls.
//!
//! The Python packages are pinned in `tests/interop/requirements.txt` and installed into a
//! venv in the target directory by `tests/interop/setup.sh` (run once per test binary).
//! When that fails (no Python, no network), the tests fail if `CI` is set and otherwise say
//! "skipped" on stderr and pass. Every child process is killed after a timeout.
#![cfg(unix)]

#[path = "support/example_binary.rs"]
mod example_binary;

use std::collections::HashMap;
use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Once, OnceLock};
use std::time::{Duration, Instant};

use example_binary::example_binary;

/// A child (with its own children) still running after this is killed, and the test fails.
const CHILD_TIMEOUT: Duration = Duration::from_secs(120);
/// Creating the venv downloads two small packages; pip retries, then gives up.
const SETUP_TIMEOUT: Duration = Duration::from_secs(300);

fn interop_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interop"))
}

struct Finished {
    status: Option<ExitStatus>, // None: killed at the timeout
    stdout: String,
    stderr: String,
}

impl Finished {
    fn success(&self) -> bool {
        self.status.is_some_and(|status| status.success())
    }

    fn describe(&self, what: &str) -> String {
        let status = match self.status {
            Some(status) => status.to_string(),
            None => "killed after the timeout".to_owned(),
        };
        format!(
            "{what}: {status}\n--- stdout\n{}\n--- stderr\n{}",
            self.stdout, self.stderr
        )
    }
}

/// Runs `command` with no stdin and captured output; after `timeout` its whole process
/// group (the child and what it spawned) is killed.
fn run(command: &mut Command, timeout: Duration) -> std::io::Result<Finished> {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    let collect = |mut pipe: Box<dyn Read + Send>| {
        let (sender, receiver) = mpsc::channel();
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            let _ = sender.send(String::from_utf8_lossy(&bytes).into_owned());
        });
        receiver
    };
    let stdout = collect(Box::new(child.stdout.take().expect("stdout")));
    let stderr = collect(Box::new(child.stderr.take().expect("stderr")));
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if Instant::now() >= deadline {
            // The group's id is the child's pid (process_group(0)): its children go too.
            let _ = Command::new("kill")
                .args(["-KILL", "--", &format!("-{}", child.id())])
                .status();
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    // A grandchild that outlived the child may still hold the pipes: wait a little only.
    let read = |receiver: mpsc::Receiver<String>| {
        receiver
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| "(output still open 10 s after the child ended)".to_owned())
    };
    Ok(Finished {
        status,
        stdout: read(stdout),
        stderr: read(stderr),
    })
}

/// The interop venv's python, from `tests/interop/setup.sh`; `None` (after saying
/// "skipped") when the setup failed outside CI. With `CI` set, a failed setup panics.
fn python() -> Option<PathBuf> {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    match PYTHON.get_or_init(setup) {
        Ok(python) => Some(python.clone()),
        Err(why) if std::env::var_os("CI").is_some_and(|ci| !ci.is_empty()) => {
            panic!("the Python interop peer could not be installed (CI is set, so this fails):\n{why}")
        }
        Err(why) => {
            // Once, and past the test harness's capture of eprintln!, so that it is seen.
            static SAID: Once = Once::new();
            SAID.call_once(|| {
                let _ = writeln!(
                    std::io::stderr(),
                    "skipped: the interop tests with python-lsp-jsonrpc, whose setup failed \
                     (with CI set this is a failure):\n{why}"
                );
            });
            None
        }
    }
}

fn setup() -> Result<PathBuf, String> {
    let script = interop_dir().join("setup.sh");
    let finished = run(Command::new("bash").arg(&script), SETUP_TIMEOUT)
        .map_err(|e| format!("cannot run bash {}: {e}", script.display()))?;
    if !finished.success() {
        return Err(finished.describe("bash tests/interop/setup.sh"));
    }
    let python = PathBuf::from(finished.stdout.lines().last().unwrap_or_default());
    if !python.is_file() {
        return Err(finished.describe("setup.sh's last line is not the venv's python"));
    }
    Ok(python)
}

/// The `key=value` fields of the first stdout line starting with `prefix`.
fn summary<'a>(stdout: &'a str, prefix: &str, finished: &Finished) -> HashMap<&'a str, &'a str> {
    let line = stdout
        .lines()
        .find(|line| line.starts_with(prefix))
        .unwrap_or_else(|| panic!("no line starting {prefix:?}\n{}", finished.describe("output")));
    line[prefix.len()..]
        .split_whitespace()
        .filter_map(|field| field.split_once('='))
        .collect()
}

fn number<T: std::str::FromStr>(fields: &HashMap<&str, &str>, key: &str) -> T {
    fields
        .get(key)
        .and_then(|value| value.parse().ok())
        .unwrap_or_else(|| panic!("no number {key}=… in the summary: {fields:?}"))
}

#[test]
fn python_client_calls_rpcwire_server() {
    python_client_calls(&[]);
}

/// The same server through `rpcwire::transport::Peer` over the stdio transport.
#[cfg(feature = "tokio")]
#[test]
fn python_client_calls_rpcwire_peer_over_stdio() {
    python_client_calls(&["--peer"]);
}

fn python_client_calls(server_args: &[&str]) {
    let Some(python) = python() else { return };
    let server = example_binary("spec_server");
    let finished = run(
        Command::new(&python)
            .arg(interop_dir().join("py_client.py"))
            .arg(&server)
            .args(["--framing", "content-length"])
            .args(server_args),
        CHILD_TIMEOUT,
    )
    .expect("run py_client.py");
    assert!(finished.success(), "{}", finished.describe("py_client.py"));

    let fields = summary(&finished.stdout, "py_client: ok ", &finished);
    assert_eq!(number::<u64>(&fields, "subtract"), 1000, "{fields:?}");
    assert_eq!(number::<u64>(&fields, "subtract_pipelined"), 500, "{fields:?}");
    let requests: u64 = number(&fields, "requests");
    assert!(requests > 1000, "{fields:?}");
    assert_eq!(
        number::<u64>(&fields, "answers"),
        requests,
        "one answer per request"
    );
    for checked in [
        "sum",
        "get_data",
        "echo",
        "notifications",
        "method_not_found",
        "invalid_params",
    ] {
        assert!(number::<u64>(&fields, checked) > 0, "{checked}: {fields:?}");
    }
    assert_eq!(fields.get("server_exit"), Some(&"0"), "{fields:?}");
}

/// `stdio_client` is a `tokio`-feature example (`required-features`).
#[cfg(feature = "tokio")]
#[test]
fn rpcwire_client_calls_python_server() {
    let Some(python) = python() else { return };
    let client = example_binary("stdio_client");
    let finished = run(
        Command::new(&client)
            .arg("--")
            .arg(&python)
            .arg(interop_dir().join("py_server.py")),
        CHILD_TIMEOUT,
    )
    .expect("run stdio_client");
    assert!(finished.success(), "{}", finished.describe("stdio_client"));

    let fields = summary(&finished.stdout, "stdio_client:", &finished);
    assert_eq!(number::<u64>(&fields, "calls"), 10_000, "{fields:?}");
    assert_eq!(number::<u64>(&fields, "errors"), 0, "{fields:?}");
    let calls_per_s: f64 = number(&fields, "calls_per_s");
    assert!(calls_per_s.is_finite() && calls_per_s > 0.0, "{fields:?}");
    let (p50, p99): (f64, f64) = (number(&fields, "p50_us"), number(&fields, "p99_us"));
    assert!(p50 > 0.0 && p50 <= p99 && p99.is_finite(), "{fields:?}");
}
