//! `StdioCommand`: how a gateway starts the MCP server it serves — a program and its
//! arguments, or a shell command line — with the environment and directory it runs in.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// The MCP server a gateway runs as a child process and speaks to over its stdin and stdout.
///
/// Each child runs in a process group of its own, which is ended as a whole (a shell and the
/// programs it started): its stdin is closed, the group asked to terminate, then killed after
/// a grace period, and the child reaped.
///
/// ```
/// use rpcwire::mcp::gateway::StdioCommand;
/// let everything = StdioCommand::new("npx").args(["-y", "@modelcontextprotocol/server-everything"]);
/// let scripted = StdioCommand::shell("cd /srv/tools && exec python3 server.py").env("LOG", "info");
/// assert_eq!(everything.to_string(), "npx -y @modelcontextprotocol/server-everything");
/// assert_eq!(scripted.to_string(), "sh -c cd /srv/tools && exec python3 server.py");
/// ```
#[derive(Clone, Debug)]
pub struct StdioCommand {
    program: OsString,
    args: Vec<OsString>,
    envs: Vec<(OsString, OsString)>,
    dir: Option<PathBuf>,
}

impl StdioCommand {
    /// Runs `program` (looked up in `PATH` when it has no `/`).
    ///
    /// ```
    /// let command = rpcwire::mcp::gateway::StdioCommand::new("mcp-server-time");
    /// # let _ = command;
    /// ```
    pub fn new(program: impl AsRef<OsStr>) -> StdioCommand {
        StdioCommand {
            program: program.as_ref().to_owned(),
            args: Vec::new(),
            envs: Vec::new(),
            dir: None,
        }
    }

    /// Runs `line` with `sh -c` (pipes, variables, `cd`, `exec` as in a shell).
    ///
    /// ```
    /// let command = rpcwire::mcp::gateway::StdioCommand::shell("uvx mcp-server-fetch --ignore-robots-txt");
    /// # let _ = command;
    /// ```
    pub fn shell(line: impl AsRef<OsStr>) -> StdioCommand {
        StdioCommand::new("sh").arg("-c").arg(line)
    }

    /// Adds an argument.
    ///
    /// ```
    /// let command = rpcwire::mcp::gateway::StdioCommand::new("node").arg("server.js");
    /// # let _ = command;
    /// ```
    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> StdioCommand {
        self.args.push(arg.as_ref().to_owned());
        self
    }

    /// Adds arguments.
    ///
    /// ```
    /// let command = rpcwire::mcp::gateway::StdioCommand::new("node").args(["server.js", "--stdio"]);
    /// # let _ = command;
    /// ```
    pub fn args<I, S>(mut self, args: I) -> StdioCommand
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|arg| arg.as_ref().to_owned()));
        self
    }

    /// Sets an environment variable for the child (it inherits the gateway's others).
    ///
    /// ```
    /// let command = rpcwire::mcp::gateway::StdioCommand::new("server").env("API_KEY", "from-a-vault");
    /// # let _ = command;
    /// ```
    pub fn env(mut self, name: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> StdioCommand {
        self.envs
            .push((name.as_ref().to_owned(), value.as_ref().to_owned()));
        self
    }

    /// The directory the child starts in.
    ///
    /// ```
    /// let command = rpcwire::mcp::gateway::StdioCommand::new("./server").current_dir("/srv/mcp");
    /// # let _ = command;
    /// ```
    pub fn current_dir(mut self, dir: impl Into<PathBuf>) -> StdioCommand {
        self.dir = Some(dir.into());
        self
    }

    /// The command to spawn.
    pub(crate) fn command(&self) -> tokio::process::Command {
        let mut command = tokio::process::Command::new(&self.program);
        command.args(&self.args);
        for (name, value) in &self.envs {
            command.env(name, value);
        }
        if let Some(dir) = &self.dir {
            command.current_dir(dir);
        }
        command
    }
}

impl std::fmt::Display for StdioCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.program.to_string_lossy())?;
        for arg in &self.args {
            write!(f, " {}", arg.to_string_lossy())?;
        }
        Ok(())
    }
}
