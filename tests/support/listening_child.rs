//! An example server started as a child process, as a user starts it: it prints
//! `listening on ADDRESS` once it accepts connections (other lines may come before), and is
//! killed when dropped. Its stdout is read to the end, so that it never writes to a closed
//! pipe.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// A child that listens at `address`, killed when dropped.
pub struct Listening {
    pub child: Child,
    pub address: String,
    /// The lines it printed before `listening on`.
    #[allow(dead_code)] // not every test reads them
    pub before: Vec<String>,
}

impl Drop for Listening {
    /// SIGTERM first, so that a server that shuts down gracefully (the MCP gateway ends and
    /// reaps its own children) can; SIGKILL after 5 s; reaped either way.
    fn drop(&mut self) {
        let _ = std::process::Command::new("kill")
            .args(["-TERM", &self.child.id().to_string()])
            .status();
        for _ in 0..500 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts `binary` with `args` and waits (up to a minute) for its `listening on` line.
pub fn start_listening(binary: &Path, args: &[&str]) -> Listening {
    let child = Command::new(binary)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|error| panic!("start {}: {error}", binary.display()));
    // Killed and waited for when dropped, a failed start included.
    let mut listening = Listening {
        child,
        address: String::new(),
        before: Vec::new(),
    };
    let stdout = listening.child.stdout.take().expect("stdout");
    let (sender, receiver) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = sender.send(line);
        }
    });
    loop {
        let line = receiver
            .recv_timeout(Duration::from_secs(60))
            .expect("the server says where it listens");
        if let Some(address) = line.trim().strip_prefix("listening on ") {
            listening.address = address.to_owned();
            return listening;
        }
        listening.before.push(line);
    }
}
