//! A server in a child process (this bench binary with `--transport-server KIND`), and its
//! CPU time read from `/proc`.

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A running server process; killed when dropped.
pub(crate) struct ServerProcess {
    child: Child,
    pub(crate) address: SocketAddr,
}

impl ServerProcess {
    /// Starts the server `kind` and waits for its `listening on ADDR` line.
    pub(crate) fn start(kind: &str) -> ServerProcess {
        ServerProcess::start_with(kind, &[])
    }

    /// Starts the server `kind` with `args` after it, and waits for its `listening on ADDR`.
    pub(crate) fn start_with(kind: &str, args: &[&str]) -> ServerProcess {
        let exe = std::env::current_exe().expect("the bench binary's path");
        // For profiling: `TRANSPORT_SERVER_WRAPPER="perf record -g -o /tmp/server.data --"`
        // starts each server under that command. The CPU figures are then the wrapper's, not
        // the server's: read the profile, not the table.
        // `TRANSPORT_SERVER_WRAPPER_ONLY=gateway-rpcwire` wraps that server only (a comma
        // between names wraps each of them).
        let wrapped = std::env::var("TRANSPORT_SERVER_WRAPPER_ONLY")
            .map_or(true, |only| only.split(',').any(|name| name == kind));
        let wrapper = match std::env::var("TRANSPORT_SERVER_WRAPPER") {
            Ok(wrapper) if wrapped => wrapper,
            _ => String::new(),
        };
        let mut words = wrapper.split_whitespace();
        let mut command = match words.next() {
            Some(program) => {
                let mut command = Command::new(program);
                command.args(words).arg(exe);
                command
            }
            None => Command::new(exe),
        };
        let mut child = command
            .args(["--transport-server", kind])
            .args(args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("start the server process");
        let stdout = child.stdout.take().expect("piped stdout");
        let mut line = String::new();
        BufReader::new(stdout)
            .read_line(&mut line)
            .expect("the server's first line");
        let address = line
            .trim()
            .strip_prefix("listening on ")
            .and_then(|a| a.parse().ok())
            .unwrap_or_else(|| panic!("{kind}: expected `listening on ADDR`, got {line:?}"));
        ServerProcess { child, address }
    }

    /// The process id.
    pub(crate) fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The CPU time (user + system) all of the process's threads have used so far.
    pub(crate) fn cpu(&self) -> Duration {
        cpu_time(self.child.id())
    }
}

impl Drop for ServerProcess {
    fn drop(&mut self) {
        drop(self.child.stdin.take()); // the server exits at the end of its stdin
        for _ in 0..200 {
            if matches!(self.child.try_wait(), Ok(Some(_))) {
                return;
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Nanosecond CPU time from the threads' schedstat; clock ticks from stat when that is absent.
pub(crate) fn cpu_time(pid: u32) -> Duration {
    let mut total = 0u64;
    let mut found = false;
    if let Ok(tasks) = std::fs::read_dir(format!("/proc/{pid}/task")) {
        for task in tasks.flatten() {
            let Ok(text) = std::fs::read_to_string(task.path().join("schedstat")) else {
                continue;
            };
            if let Some(ns) = text.split_whitespace().next().and_then(|f| f.parse::<u64>().ok()) {
                total += ns;
                found = true;
            }
        }
    }
    if found && total > 0 {
        return Duration::from_nanos(total);
    }
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).expect("/proc/PID/stat");
    // Fields after the parenthesized command name: state is the first, utime the 12th.
    let after = &stat[stat.rfind(')').expect("stat format") + 2..];
    let fields: Vec<&str> = after.split_whitespace().collect();
    let ticks: u64 = fields[11].parse::<u64>().expect("utime") + fields[12].parse::<u64>().expect("stime");
    Duration::from_millis(ticks * 10) // USER_HZ is 100 on Linux
}
