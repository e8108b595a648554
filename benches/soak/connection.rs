//! What every connection of the soak shares: the time limits, and taking the next message
//! to send once the window has room for its answers, until the run stops.

use std::time::Duration;

use tokio::sync::watch;

use crate::ledger::Ledger;
use crate::traffic::{Outgoing, Traffic};

/// The longest a write may take (a server that stops reading is a lost connection).
pub const WRITE_LIMIT: Duration = Duration::from_secs(10);

/// The longest the soak waits for the answers due, at the end or before a message that
/// ends the connection.
pub const DRAIN_LIMIT: Duration = Duration::from_secs(10);

/// The longest a connection may take to close once its answers are in.
pub const CLOSE_LIMIT: Duration = Duration::from_secs(5);

/// The longest opening a connection (TCP, WebSocket handshake) may take.
pub const CONNECT_LIMIT: Duration = Duration::from_secs(10);

/// The next message of `traffic` once `ledger`'s window has room for its answers, or
/// `None` once `stop` says the run is over.
pub async fn next_to_send(
    traffic: &mut Traffic,
    ledger: &Ledger,
    stop: &mut watch::Receiver<bool>,
) -> Option<Outgoing> {
    let message = traffic.next_message();
    if *stop.borrow() {
        return None;
    }
    tokio::select! {
        biased;
        _ = stop.wait_for(|stopped| *stopped) => None,
        room = ledger.reserve(&message) => room.then_some(message),
    }
}

/// Waits (at most [`DRAIN_LIMIT`]) for the answers due on `ledger`, noting it when some
/// do not come.
pub async fn drain(ledger: &Ledger, before: &str) {
    if !ledger.drained(DRAIN_LIMIT).await {
        ledger.note(&format!(
            "{} answers still due {} s {before}",
            ledger.outstanding(),
            DRAIN_LIMIT.as_secs()
        ));
    }
}

/// Waits (at most [`CLOSE_LIMIT`]) for a reader task to end, stopping it if it does not.
pub async fn close_reader(reader: &mut tokio::task::JoinHandle<()>, ledger: &Ledger) {
    if tokio::time::timeout(CLOSE_LIMIT, &mut *reader).await.is_err() {
        reader.abort();
        ledger.note(&format!(
            "the answers did not end within {} s of closing",
            CLOSE_LIMIT.as_secs()
        ));
    }
}
