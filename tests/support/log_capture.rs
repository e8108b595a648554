//! What a `tracing` subscriber (tracing-subscriber's fmt layer, every level, no colours)
//! writes while a future runs on a runtime of its own: for tests that read the logs.

use std::io::Write;
use std::sync::{Arc, Mutex};

use tracing_subscriber::fmt::format::FmtSpan;

/// What the subscriber wrote.
#[derive(Clone, Default)]
struct Captured(Arc<Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// Runs `body` on a current-thread runtime under a subscriber that writes every event (and,
/// with `spans`, every span as it closes); what `body` gave and the text written.
pub fn capture_logs<T>(spans: FmtSpan, body: impl std::future::Future<Output = T>) -> (T, String) {
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_max_level(tracing::Level::TRACE)
        .with_span_events(spans)
        .with_ansi(false)
        .finish();
    let given = tracing::subscriber::with_default(subscriber, || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(body)
    });
    let text = String::from_utf8_lossy(&captured.0.lock().unwrap()).into_owned();
    (given, text)
}
