//! Batches sent by a [`Peer`]: calls and notifications in one frame.

use bytes::BytesMut;

use super::outgoing::{self, OutgoingParams};
use super::{Peer, PeerError, PeerErrorKind};
use crate::encode::BatchWriter;
use crate::message::{JsonBytes, RawJson};
use crate::sync::bump;

/// One element of a batch sent with [`Peer::batch_raw`]: a call (answered) or a
/// notification (not answered), its params given as JSON text (`None` for none).
///
/// ```
/// use rpcwire_core::transport::BatchEntry;
///
/// let params = rpcwire_core::RawJson::new("[1,2]").unwrap();
/// let entries = [BatchEntry::call("add", Some(&params)), BatchEntry::notification("log", None)];
/// assert!(entries[0].is_call() && !entries[1].is_call());
/// ```
#[derive(Debug, Clone, Copy)]
pub struct BatchEntry<'a> {
    method: &'a str,
    params: Option<&'a RawJson<'a>>,
    call: bool,
}

impl<'a> BatchEntry<'a> {
    /// A call of `method`: it gets an id and its answer is returned.
    ///
    /// ```
    /// let entry = rpcwire_core::transport::BatchEntry::call("eth_blockNumber", None);
    /// assert_eq!(entry.method(), "eth_blockNumber");
    /// ```
    pub fn call(method: &'a str, params: Option<&'a RawJson<'a>>) -> BatchEntry<'a> {
        BatchEntry {
            method,
            params,
            call: true,
        }
    }

    /// A notification of `method`: sent without an id, nothing comes back for it.
    ///
    /// ```
    /// let entry = rpcwire_core::transport::BatchEntry::notification("log", None);
    /// assert!(!entry.is_call());
    /// ```
    pub fn notification(method: &'a str, params: Option<&'a RawJson<'a>>) -> BatchEntry<'a> {
        BatchEntry {
            method,
            params,
            call: false,
        }
    }

    /// The method this entry calls or notifies.
    ///
    /// ```
    /// assert_eq!(rpcwire_core::transport::BatchEntry::call("m", None).method(), "m");
    /// ```
    pub fn method(&self) -> &'a str {
        self.method
    }

    /// Whether this entry is a call (`true`) or a notification (`false`).
    ///
    /// ```
    /// assert!(rpcwire_core::transport::BatchEntry::call("m", None).is_call());
    /// ```
    pub fn is_call(&self) -> bool {
        self.call
    }
}

impl Peer {
    /// Sends calls and notifications in one batch (one frame, `[…]`, in the order of
    /// `entries`) and returns each call's result JSON text or error, in the order of the
    /// calls among `entries` (the answers may come back in any order). A batch of
    /// notifications only returns an empty list once it is queued for writing, since the
    /// other side sends nothing back; an empty `entries` sends nothing (an empty array is
    /// not a valid request). The outer error is for the batch as a whole: it could not be
    /// started or sent.
    ///
    /// ```
    /// # use rpcwire_core::{dispatch::Router, frame::Framing, transport::*};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let (a, b) = tokio::io::duplex(4096);
    /// # let mut router = Router::new();
    /// # router.method("add", |(x, y): (i64, i64)| Ok(x + y));
    /// # router.notification("log", |_: serde_json::Value| {});
    /// # let _server = Peer::new(StreamTransport::from_io(a, Framing::Ndjson), router);
    /// # let peer = Peer::new(StreamTransport::from_io(b, Framing::Ndjson), Router::new());
    /// let one = rpcwire_core::RawJson::new("[1,2]")?;
    /// let note = rpcwire_core::RawJson::new(r#"["adding"]"#)?;
    /// let answers = peer
    ///     .batch_raw(&[
    ///         BatchEntry::notification("log", Some(&note)),
    ///         BatchEntry::call("add", Some(&one)),
    ///         BatchEntry::call("nope", None),
    ///     ])
    ///     .await?;
    /// assert_eq!(answers.len(), 2);
    /// assert_eq!(&answers[0].as_ref().unwrap()[..], b"3");
    /// assert!(matches!(answers[1].as_ref().map_err(PeerError::kind), Err(PeerErrorKind::Remote(_))));
    /// # Ok(())
    /// # }
    /// ```
    pub async fn batch_raw(
        &self,
        entries: &[BatchEntry<'_>],
    ) -> Result<Vec<Result<JsonBytes, PeerError>>, PeerError> {
        if entries.is_empty() {
            return Ok(Vec::new());
        }
        let shared = self.shared();
        if !self.state().is_open() {
            return Err(shared.closed_error());
        }
        let calls = entries.iter().filter(|entry| entry.call).count();
        let mut pendings = Vec::with_capacity(calls);
        for _ in 0..calls {
            let pending = shared
                .table
                .start()
                .map_err(|error| PeerError::from_call(error, || shared.close_reason()))?;
            pendings.push(pending);
        }
        let mut body = BytesMut::with_capacity(64 * entries.len());
        let mut batch = BatchWriter::new(&mut body);
        let mut ids = pendings.iter().map(|pending| pending.id());
        for entry in entries {
            let id = if entry.call { ids.next() } else { None };
            outgoing::write_call::<()>(
                batch.element(),
                id,
                entry.method,
                OutgoingParams::Raw(entry.params),
            )?;
        }
        batch.finish();
        // The calls' deadline covers the wait for room in the queue too.
        match pendings.first().and_then(|pending| pending.deadline()) {
            Some(deadline) => {
                let after = shared.call_timeout;
                shared
                    .send_until(body.freeze(), Some(deadline), || {
                        PeerErrorKind::TimedOut { after }.into()
                    })
                    .await?
            }
            None if pendings.is_empty() => shared.send_notification(body.freeze()).await?,
            None => shared.send(body.freeze()).await?,
        }
        for entry in entries {
            bump(if entry.call {
                &shared.counters.calls
            } else {
                &shared.counters.notifications
            });
        }
        let mut answers = Vec::with_capacity(pendings.len());
        // All are in flight: waiting for them one after another takes as long as the slowest.
        let methods = entries
            .iter()
            .filter(|entry| entry.call)
            .map(|entry| entry.method);
        for (pending, method) in pendings.into_iter().zip(methods) {
            answers.push(self.handle.link.finish_call(pending, method).await);
        }
        Ok(answers)
    }

    /// Calls several methods in one batch (one frame, `[…]`), params given as JSON text,
    /// and returns each result's JSON text or error, in the order of `calls`: the same as
    /// [`batch_raw`](Peer::batch_raw) with calls only.
    ///
    /// ```
    /// # use rpcwire_core::{dispatch::Router, frame::Framing, transport::*};
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
    /// # let (a, b) = tokio::io::duplex(4096);
    /// # let mut router = Router::new();
    /// # router.method("add", |(x, y): (i64, i64)| Ok(x + y));
    /// # let _server = Peer::new(StreamTransport::from_io(a, Framing::Ndjson), router);
    /// # let peer = Peer::new(StreamTransport::from_io(b, Framing::Ndjson), Router::new());
    /// let one = rpcwire_core::RawJson::new("[1,2]")?;
    /// let two = rpcwire_core::RawJson::new("[3,4]")?;
    /// let answers = peer.call_batch_raw(&[("add", Some(&one)), ("nope", None), ("add", Some(&two))]).await?;
    /// assert_eq!(&answers[0].as_ref().unwrap()[..], b"3");
    /// assert!(matches!(answers[1].as_ref().map_err(PeerError::kind), Err(PeerErrorKind::Remote(_))));
    /// assert_eq!(&answers[2].as_ref().unwrap()[..], b"7");
    /// # Ok(())
    /// # }
    /// ```
    pub async fn call_batch_raw(
        &self,
        calls: &[(&str, Option<&RawJson<'_>>)],
    ) -> Result<Vec<Result<JsonBytes, PeerError>>, PeerError> {
        let entries: Vec<BatchEntry<'_>> = calls
            .iter()
            .map(|&(method, params)| BatchEntry::call(method, params))
            .collect();
        self.batch_raw(&entries).await
    }
}
