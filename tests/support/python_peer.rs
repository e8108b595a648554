//! The Python peers of the interop tests: the venv `tests/interop/setup.sh` installs (its
//! python, or "skipped" when the setup fails outside CI), and running a child process with
//! a timeout that kills its whole process group. `#[path]`-included by the tests that run
//! Python clients and servers against rpcwire's.
#![allow(dead_code)]

use std::io::{Read, Write};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Once, OnceLock};
use std::time::{Duration, Instant};

/// A child (with its own children) still running after this is killed, and the test fails.
pub const CHILD_TIMEOUT: Duration = Duration::from_secs(120);
/// Creating the venv downloads two small packages; pip retries, then gives up.
pub const SETUP_TIMEOUT: Duration = Duration::from_secs(300);

pub fn interop_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/interop"))
}

pub struct Finished {
    pub status: Option<ExitStatus>, // None: killed at the timeout
    pub stdout: String,
    pub stderr: String,
}

impl Finished {
    pub fn success(&self) -> bool {
        self.status.is_some_and(|status| status.success())
    }

    pub fn describe(&self, what: &str) -> String {
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
pub fn run(command: &mut Command, timeout: Duration) -> std::io::Result<Finished> {
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
pub fn python() -> Option<PathBuf> {
    static PYTHON: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    static SAID: Once = Once::new();
    installed(
        PYTHON.get_or_init(setup),
        &SAID,
        "the interop tests with Python peers",
    )
}

/// What an interop setup installed; `None` (after saying "skipped" once) when it failed
/// outside CI. With `CI` set, a failed setup panics.
pub fn installed(setup: &Result<PathBuf, String>, said: &'static Once, tests: &str) -> Option<PathBuf> {
    match setup {
        Ok(path) => Some(path.clone()),
        Err(why) if std::env::var_os("CI").is_some_and(|ci| !ci.is_empty()) => {
            panic!("the peer of {tests} could not be installed (CI is set, so this fails):\n{why}")
        }
        Err(why) => {
            // Once, and past the test harness's capture of eprintln!, so that it is seen.
            said.call_once(|| {
                let _ = writeln!(
                    std::io::stderr(),
                    "skipped: {tests}, whose setup failed (with CI set this is a failure):\n{why}"
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
