//! `stdio`: this process's stdin and stdout as a transport. When they are pipes — as a
//! language client or an MCP host starts its server — they are read and written on the
//! event loop itself; otherwise (a file, a terminal) through tokio's blocking threads, as
//! `tokio::io::stdin`/`stdout` do.

use std::fmt;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

use super::stream::StreamTransport;
use crate::frame::Framing;

/// The transport over this process's stdin and stdout, as language servers and MCP
/// servers speak (LSP uses [`Framing::ContentLength`], MCP [`Framing::Ndjson`]).
///
/// Pipes (the usual case for a server a client started) are put in non-blocking mode and
/// read and written on the runtime's event loop: no thread hop and no copy through a
/// blocking thread's buffer per read or write. Anything else goes through tokio's blocking
/// threads. Call it inside a Tokio runtime (outside one, the blocking way is taken). While
/// the transport is open, this process's own blocking reads of stdin and writes to stdout
/// (`println!`) may fail with `WouldBlock` on a pipe; each is set back to blocking mode when
/// its half of the transport is dropped.
///
/// ```no_run
/// use rpcwire_core::dispatch::Router;
/// use rpcwire_core::frame::Framing;
/// use rpcwire_core::transport::{stdio, Peer};
///
/// # #[tokio::main]
/// # async fn main() {
/// let mut router = Router::new();
/// router.method("ping", |_: rpcwire_core::dispatch::NoParams| Ok("pong"));
/// let peer = Peer::new(stdio(Framing::ContentLength), router);
/// peer.closed().await; // serve until stdin ends
/// # }
/// ```
pub fn stdio(framing: Framing) -> StreamTransport<Stdin, Stdout> {
    StreamTransport::new(Stdin::new(), Stdout::new(), framing)
}

/// This process's stdin, for [`stdio`]: a pipe read on the event loop (set back to
/// blocking mode when dropped), or tokio's `Stdin` (blocking threads) for anything else.
///
/// ```no_run
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use tokio::io::AsyncReadExt;
/// let mut line = String::new();
/// rpcwire_core::transport::Stdin::new().read_to_string(&mut line).await.unwrap();
/// # }
/// ```
pub struct Stdin(Input);

enum Input {
    /// `None` once dropped (handed back in blocking mode).
    #[cfg(unix)]
    Pipe(Option<tokio::net::unix::pipe::Receiver>),
    Blocking(tokio::io::Stdin),
}

impl Stdin {
    /// This process's stdin (see [`Stdin`]).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let stdin = rpcwire_core::transport::Stdin::new();
    /// # let _ = stdin;
    /// # });
    /// ```
    pub fn new() -> Stdin {
        #[cfg(unix)]
        if let Some(pipe) = pipe::stdin() {
            return Stdin(Input::Pipe(Some(pipe)));
        }
        Stdin(Input::Blocking(tokio::io::stdin()))
    }

    /// Whether stdin is a pipe read on the event loop.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let stdin = rpcwire_core::transport::Stdin::new();
    /// println!("stdin is read on the event loop: {}", stdin.is_pipe());
    /// # });
    /// ```
    pub fn is_pipe(&self) -> bool {
        match self.0 {
            #[cfg(unix)]
            Input::Pipe(_) => true,
            Input::Blocking(_) => false,
        }
    }
}

impl Default for Stdin {
    fn default() -> Stdin {
        Stdin::new()
    }
}

impl fmt::Debug for Stdin {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stdin").field("pipe", &self.is_pipe()).finish()
    }
}

impl AsyncRead for Stdin {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        match &mut self.get_mut().0 {
            #[cfg(unix)]
            Input::Pipe(Some(pipe)) => Pin::new(pipe).poll_read(cx, buf),
            #[cfg(unix)]
            Input::Pipe(None) => unreachable!("a Stdin is handed back only when dropped"),
            Input::Blocking(stdin) => Pin::new(stdin).poll_read(cx, buf),
        }
    }
}

impl Drop for Stdin {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Input::Pipe(pipe) = &mut self.0 {
            // Blocking mode again for whoever reads stdin next.
            if let Some(pipe) = pipe.take() {
                let _ = pipe.into_blocking_fd();
            }
        }
    }
}

/// This process's stdout, for [`stdio`]: a pipe written on the event loop (set back to
/// blocking mode when dropped), or tokio's `Stdout` (blocking threads) for anything else.
///
/// ```no_run
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() {
/// use tokio::io::AsyncWriteExt;
/// let mut stdout = rpcwire_core::transport::Stdout::new();
/// stdout.write_all(b"{}\n").await.unwrap();
/// stdout.flush().await.unwrap();
/// # }
/// ```
pub struct Stdout(Output);

enum Output {
    /// `None` once dropped (handed back in blocking mode).
    #[cfg(unix)]
    Pipe(Option<tokio::net::unix::pipe::Sender>),
    Blocking(tokio::io::Stdout),
}

impl Stdout {
    /// This process's stdout (see [`Stdout`]).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let stdout = rpcwire_core::transport::Stdout::new();
    /// # let _ = stdout;
    /// # });
    /// ```
    pub fn new() -> Stdout {
        #[cfg(unix)]
        if let Some(pipe) = pipe::stdout() {
            return Stdout(Output::Pipe(Some(pipe)));
        }
        Stdout(Output::Blocking(tokio::io::stdout()))
    }

    /// Whether stdout is a pipe written on the event loop.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let stdout = rpcwire_core::transport::Stdout::new();
    /// eprintln!("stdout is written on the event loop: {}", stdout.is_pipe());
    /// # });
    /// ```
    pub fn is_pipe(&self) -> bool {
        match self.0 {
            #[cfg(unix)]
            Output::Pipe(_) => true,
            Output::Blocking(_) => false,
        }
    }

    fn writer(&mut self) -> Pin<&mut (dyn AsyncWrite + Unpin)> {
        match &mut self.0 {
            #[cfg(unix)]
            Output::Pipe(Some(pipe)) => Pin::new(pipe),
            #[cfg(unix)]
            Output::Pipe(None) => unreachable!("a Stdout is handed back only when dropped"),
            Output::Blocking(stdout) => Pin::new(stdout),
        }
    }
}

impl Default for Stdout {
    fn default() -> Stdout {
        Stdout::new()
    }
}

impl fmt::Debug for Stdout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Stdout").field("pipe", &self.is_pipe()).finish()
    }
}

impl AsyncWrite for Stdout {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        self.get_mut().writer().poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.get_mut().writer().poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        // A pipe takes a vectored write as one system call; tokio's `Stdout` does not.
        self.is_pipe()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().writer().poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.get_mut().writer().poll_shutdown(cx)
    }
}

impl Drop for Stdout {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Output::Pipe(pipe) = &mut self.0 {
            // Blocking mode again for whoever writes to stdout next (the mode belongs to
            // the pipe, shared with this process's `println!` and with other processes).
            if let Some(pipe) = pipe.take() {
                let _ = pipe.into_blocking_fd();
            }
        }
    }
}

/// Stdin and stdout as tokio pipes, when they are pipes and a runtime is there to register
/// them with.
#[cfg(unix)]
mod pipe {
    use std::os::fd::{AsFd, OwnedFd};

    use tokio::net::unix::pipe::{Receiver, Sender};

    pub(super) fn stdin() -> Option<Receiver> {
        receiver(std::io::stdin().as_fd().try_clone_to_owned().ok()?)
    }

    pub(super) fn stdout() -> Option<Sender> {
        sender(std::io::stdout().as_fd().try_clone_to_owned().ok()?)
    }

    /// `fd` read on the event loop, when it is a pipe open for reading.
    pub(super) fn receiver(fd: OwnedFd) -> Option<Receiver> {
        tokio::runtime::Handle::try_current().ok()?;
        Receiver::from_owned_fd(fd).ok()
    }

    /// `fd` written on the event loop, when it is a pipe open for writing.
    pub(super) fn sender(fd: OwnedFd) -> Option<Sender> {
        tokio::runtime::Handle::try_current().ok()?;
        Sender::from_owned_fd(fd).ok()
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    #[tokio::test]
    async fn pipes_are_read_and_written_on_the_event_loop_and_handed_back_blocking() {
        let (reader, writer) = std::io::pipe().unwrap();
        let mut input = Stdin(Input::Pipe(Some(pipe::receiver(reader.into()).unwrap())));
        let mut output = Stdout(Output::Pipe(Some(pipe::sender(writer.into()).unwrap())));
        assert!(input.is_pipe() && output.is_pipe());
        assert!(output.is_write_vectored());
        output.write_all(b"{\"a\":1}\n").await.unwrap();
        output.flush().await.unwrap();
        drop(output); // the writer's end closes: the reader sees the end
        let mut text = String::new();
        input.read_to_string(&mut text).await.unwrap();
        assert_eq!(text, "{\"a\":1}\n");
        assert!(format!("{input:?}").contains("pipe: true"));
    }

    #[tokio::test]
    async fn anything_but_a_pipe_takes_the_blocking_way() {
        let file = std::fs::File::open(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
        assert!(pipe::receiver(file.into()).is_none());
        // Outside a runtime, even a pipe is not registered.
        let (reader, _writer) = std::io::pipe().unwrap();
        let outside = std::thread::spawn(move || pipe::receiver(reader.into()).is_none());
        assert!(outside.join().unwrap());
        let blocking = Stdout(Output::Blocking(tokio::io::stdout()));
        assert!(!blocking.is_pipe() && !blocking.is_write_vectored());
        assert!(format!("{blocking:?}").contains("pipe: false"));
    }
}
