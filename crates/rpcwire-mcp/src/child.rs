//! `ChildProcess`: an MCP server run as a child process over its stdin and stdout — started
//! in a process group of its own, ended with that whole group (a shell's children too), and
//! always reaped.

use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::process::{ChildStdin, ChildStdout, Command};

/// How long a child is waited for after it is told to stop before the next step.
const REAP_WAIT: Duration = Duration::from_secs(5);

/// A server child: killed with its process group when dropped (tokio reaps it then).
#[derive(Debug)]
pub(crate) struct ChildProcess {
    child: tokio::process::Child,
}

impl ChildProcess {
    /// Starts `command` with stdin and stdout piped, stderr inherited, in a process group of
    /// its own; its pipes.
    pub(crate) fn spawn(command: &mut Command) -> std::io::Result<(ChildProcess, ChildStdin, ChildStdout)> {
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true);
        #[cfg(unix)]
        command.process_group(0);
        let mut child = command.spawn()?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            // Not reached with both pipes asked for; the child goes with `child`'s drop.
            return Err(std::io::Error::other("no pipes to the child"));
        };
        Ok((ChildProcess { child }, stdin, stdout))
    }

    /// Its process id, while it runs.
    #[cfg(test)]
    pub(crate) fn id(&self) -> Option<u32> {
        self.child.id()
    }

    /// Sends `signal` to the child's whole process group (and kills the child itself for
    /// `KILL`, where process groups are not known).
    fn signal_group(&mut self, kill: bool) {
        #[cfg(unix)]
        if let Some(pid) = self
            .child
            .id()
            .and_then(|id| rustix::process::Pid::from_raw(id as i32))
        {
            let signal = if kill {
                rustix::process::Signal::KILL
            } else {
                rustix::process::Signal::TERM
            };
            let _ = rustix::process::kill_process_group(pid, signal);
        }
        if kill {
            let _ = self.child.start_kill();
        }
    }

    /// Waits for the child to exit.
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // the gateway's
    pub(crate) async fn wait(&mut self) -> std::io::Result<ExitStatus> {
        self.child.wait().await
    }

    /// Kills the process group and reaps the child (waiting at most a few seconds).
    pub(crate) async fn kill_and_reap(&mut self) {
        self.signal_group(true);
        let _ = tokio::time::timeout(REAP_WAIT, self.child.wait()).await;
    }

    /// Ends the child as the MCP stdio transport asks, its stdin closed before this: waits
    /// up to `grace` for it to exit by itself, then asks its group to terminate and waits
    /// `grace` again, then kills the group; the child is reaped either way, and what it left
    /// in its group is killed. Its exit status, when it was seen.
    #[cfg_attr(not(feature = "http"), allow(dead_code))] // the gateway's
    pub(crate) async fn terminate(&mut self, grace: Duration) -> Option<ExitStatus> {
        for ask in [None, Some(false)] {
            if let Some(kill) = ask {
                self.signal_group(kill);
            }
            if let Ok(Ok(status)) = tokio::time::timeout(grace, self.child.wait()).await {
                self.signal_group(true);
                return Some(status);
            }
        }
        self.signal_group(true);
        tokio::time::timeout(REAP_WAIT, self.child.wait())
            .await
            .ok()?
            .ok()
    }
}

impl Drop for ChildProcess {
    fn drop(&mut self) {
        // `kill_on_drop` leaves the reaping to tokio; the group goes too.
        self.signal_group(true);
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_child_that_ignores_term_is_killed_with_its_group_and_reaped() {
        let mut command = Command::new("sh");
        command.args(["-c", "trap '' TERM; sleep 30 & wait"]);
        let (mut child, _stdin, _stdout) = ChildProcess::spawn(&mut command).unwrap();
        let pid = child.id().unwrap();
        tokio::time::sleep(Duration::from_millis(100)).await;
        let started = std::time::Instant::now();
        let status = child.terminate(Duration::from_millis(200)).await.expect("reaped");
        assert!(!status.success());
        assert!(started.elapsed() < Duration::from_secs(4));
        assert!(child.id().is_none(), "reaped");
        // No process is left running in the group (the backgrounded sleep included; a
        // zombie is not running, and is its parent's or init's to reap).
        let deadline = std::time::Instant::now() + Duration::from_secs(2);
        while running_in_group(pid) > 0 {
            assert!(std::time::Instant::now() < deadline, "the group is gone");
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }

    /// Processes of process group `group` that are not zombies (from /proc).
    fn running_in_group(group: u32) -> usize {
        let mut running = 0;
        for entry in std::fs::read_dir("/proc").unwrap().flatten() {
            let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
                continue;
            };
            // pid (comm) state ppid pgrp ...: the fields after the last ')'.
            let Some((_, rest)) = stat.rsplit_once(')') else {
                continue;
            };
            let fields: Vec<&str> = rest.split_whitespace().collect();
            if fields.len() > 2 && fields[2] == group.to_string() && fields[0] != "Z" {
                running += 1;
            }
        }
        running
    }

    #[tokio::test]
    async fn a_child_that_exited_is_reaped_with_its_status() {
        let mut command = Command::new("sh");
        command.args(["-c", "exit 3"]);
        let (mut child, _stdin, _stdout) = ChildProcess::spawn(&mut command).unwrap();
        assert_eq!(child.wait().await.unwrap().code(), Some(3));
        assert_eq!(
            child
                .terminate(Duration::from_millis(10))
                .await
                .and_then(|s| s.code()),
            Some(3)
        );
        let mut missing = Command::new("/nonexistent/rpcwire-test-program");
        assert!(ChildProcess::spawn(&mut missing).is_err());
    }
}
