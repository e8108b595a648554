//! A lingering close: what a server reads and drops after refusing a message, so that a
//! client still sending it — most send all of it before they read — reads the refusal
//! instead of a reset connection (as nginx does; its `lingering_timeout`).

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

/// How long bytes past a refusal are read and dropped at most: a client that stops sending
/// is not waited for longer.
pub const LINGER_TIME: Duration = Duration::from_secs(5);

/// How many bytes past a refusal are read and dropped at most, when the client said how
/// many it sends (an HTTP body's `Content-Length`, a WebSocket frame's length).
pub const LINGER_DECLARED: usize = 8 << 20;

/// Reads and drops what `reader` still sends, up to `max` bytes, for at most
/// [`LINGER_TIME`]; ends early when the client closes its side.
pub async fn drain<R: AsyncRead + Unpin>(reader: &mut R, max: usize) {
    // On the heap: an array here would sit in the state of every future that may drain (a
    // WebSocket's reading of each message, say), made and moved for every message read.
    let mut sink = vec![0u8; 8192];
    let dropping = async {
        let mut dropped = 0usize;
        while dropped < max {
            match reader.read(&mut sink).await {
                Ok(0) | Err(_) => break,
                Ok(read) => dropped += read,
            }
        }
    };
    let _ = tokio::time::timeout(LINGER_TIME, dropping).await;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn draining_stops_at_the_end_of_input_or_the_bound() {
        let mut ended: &[u8] = b"the rest of a refused message";
        drain(&mut ended, usize::MAX).await;
        assert!(ended.is_empty(), "read to the end");
        let long = vec![0u8; 64 << 10];
        let mut bounded: &[u8] = &long;
        drain(&mut bounded, 16 << 10).await;
        assert_eq!(bounded.len(), 48 << 10, "no more than the bound");
    }
}
