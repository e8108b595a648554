//! Each upstream's head: the latest and the finalized block it said it has, polled by a
//! [`HeadTracker`] and read by the group (to route away from upstreams that lag) and by the
//! [`FinalityCache`](super::FinalityCache) (to know what can no longer change).

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde::Deserialize;

use crate::group::UpstreamGroup;
use crate::link::LinkAnswer;
use crate::message::{JsonBytes, RawJson};
use crate::middleware::{RemoteAnswer, RpcCall, RpcService};
use crate::upstream::Upstream;

/// How far behind the latest block the finalized one is taken to be on an upstream that does
/// not answer for the `finalized` tag (before the merge, some rollups): the depth past which
/// a reorganisation is not expected. eRPC's default too.
pub const DEFAULT_FINALITY_DEPTH: u64 = 1024;

/// The latest and finalized block numbers an upstream last said it has (each stored plus
/// one: zero is "not known").
#[derive(Debug, Default)]
pub(crate) struct Head {
    latest: AtomicU64,
    finalized: AtomicU64,
}

impl Head {
    /// The latest block it has, when known.
    pub(crate) fn latest(&self) -> Option<u64> {
        self.latest.load(Ordering::Relaxed).checked_sub(1)
    }

    /// The last block it holds final, when known.
    pub(crate) fn finalized(&self) -> Option<u64> {
        self.finalized.load(Ordering::Relaxed).checked_sub(1)
    }

    /// What a poll found (`None`: it did not say; what was known is forgotten, as it may
    /// have changed since).
    pub(crate) fn set(&self, latest: Option<u64>, finalized: Option<u64>) {
        let stored = |number: Option<u64>| number.map_or(0, |number| number.saturating_add(1));
        self.latest.store(stored(latest), Ordering::Relaxed);
        self.finalized.store(stored(finalized), Ordering::Relaxed);
    }
}

/// Polls every upstream of a group for its latest block (`eth_blockNumber`) and its finalized
/// one (`eth_getBlockByNumber` with `"finalized"`; where that is not answered, the latest less
/// the [finality depth](HeadTracker::with_finality_depth)), so that the group can route away
/// from upstreams that lag ([`UpstreamGroup::with_max_lag`]) and the gateway's
/// [`FinalityCache`](super::FinalityCache) can keep answers about final blocks for good. The
/// polls go straight to each upstream's link (no retry, no breaker, not counted in its
/// statistics), within the group's timeout; an upstream paused for its rate limit is not
/// polled. Polling stops when the tracker is dropped.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use std::sync::Arc;
/// use std::time::Duration;
/// use rpcwire::proxy::{HeadTracker, Upstream, UpstreamGroup};
///
/// let group = Arc::new(UpstreamGroup::new(vec![Upstream::address("tcp://127.0.0.1:9").unwrap()]).with_max_lag(8));
/// let tracker = HeadTracker::new(Duration::from_secs(2)).start(group.clone());
/// assert_eq!(group.finalized_block(), None); // nothing known until a poll is answered
/// drop(tracker);
/// # });
/// ```
#[derive(Clone, Copy, Debug)]
pub struct HeadTracker {
    every: Duration,
    finality_depth: u64,
}

/// Polling started by [`HeadTracker::start`]; dropping it stops it.
#[derive(Debug)]
pub struct Tracking {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Tracking {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl HeadTracker {
    /// Polls every upstream once every `every` (at least 10 ms).
    ///
    /// ```
    /// let tracker = rpcwire::proxy::HeadTracker::new(std::time::Duration::from_secs(1));
    /// # let _ = tracker;
    /// ```
    pub fn new(every: Duration) -> HeadTracker {
        HeadTracker {
            every: every.max(Duration::from_millis(10)),
            finality_depth: DEFAULT_FINALITY_DEPTH,
        }
    }

    /// How far behind its latest block an upstream's finalized block is taken to be when it
    /// does not answer for the `finalized` tag ([`DEFAULT_FINALITY_DEPTH`] by default).
    ///
    /// ```
    /// use std::time::Duration;
    /// let tracker = rpcwire::proxy::HeadTracker::new(Duration::from_secs(1)).with_finality_depth(64);
    /// # let _ = tracker;
    /// ```
    pub fn with_finality_depth(mut self, blocks: u64) -> HeadTracker {
        self.finality_depth = blocks;
        self
    }

    /// Starts polling `group`'s upstreams (in a task of the current runtime): the first poll
    /// at once, the next ones `every` apart.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// let group = Arc::new(rpcwire::proxy::UpstreamGroup::new(vec![]));
    /// let _tracking = rpcwire::proxy::HeadTracker::new(Duration::from_secs(1)).start(group);
    /// # });
    /// ```
    pub fn start(self, group: Arc<UpstreamGroup>) -> Tracking {
        let task = tokio::spawn(async move {
            let mut ticks = tokio::time::interval(self.every);
            ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
            loop {
                ticks.tick().await;
                let polls: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send + '_>>> = group
                    .upstreams()
                    .iter()
                    .map(|upstream| Box::pin(self.poll(upstream, group.timeout())) as _)
                    .collect();
                crate::sync::join_in_order(polls).await;
            }
        });
        Tracking { task }
    }

    /// Asks `upstream` for its latest and finalized blocks, and keeps what it says.
    async fn poll(&self, upstream: &Upstream, timeout: Duration) {
        if upstream.pause.remaining(Instant::now()).is_some() {
            return;
        }
        let finalized_params = RawJson::new(r#"["finalized",false]"#).expect("valid JSON");
        let asked = async {
            tokio::join!(
                upstream.service().call(RpcCall::new("eth_blockNumber", None)),
                upstream
                    .service()
                    .call(RpcCall::new("eth_getBlockByNumber", Some(&finalized_params))),
            )
        };
        let Ok((latest, finalized)) = tokio::time::timeout(timeout, asked).await else {
            upstream.head.set(None, None);
            return;
        };
        let latest = latest
            .ok()
            .as_ref()
            .and_then(result_of)
            .and_then(|text| quantity(text.as_str()));
        let finalized = finalized
            .ok()
            .as_ref()
            .and_then(result_of)
            .and_then(|text| block_number(text.as_str()));
        let finalized = match (latest, finalized) {
            (Some(latest), Some(finalized)) => Some(finalized.min(latest)),
            (Some(latest), None) => Some(latest.saturating_sub(self.finality_depth)),
            (None, _) => None,
        };
        upstream.head.set(latest, finalized);
    }
}

/// The result an answer carries (none for an error).
pub(crate) fn result_of(answer: &LinkAnswer) -> Option<&JsonBytes> {
    match answer {
        LinkAnswer::Frame {
            result: Some(result), ..
        }
        | LinkAnswer::Remote(RemoteAnswer::Result(result)) => Some(result),
        _ => None,
    }
}

/// A JSON-RPC quantity (`"0x1b4"`) as a number.
pub(crate) fn quantity(json: &str) -> Option<u64> {
    let text: &str = serde_json::from_str(json).ok()?;
    hex_number(text)
}

/// `0x`-prefixed hex digits as a number (no more than fits in 64 bits).
pub(crate) fn hex_number(text: &str) -> Option<u64> {
    let digits = text.strip_prefix("0x")?;
    if digits.is_empty() || digits.len() > 16 {
        return None;
    }
    u64::from_str_radix(digits, 16).ok()
}

/// The `number` of a block object.
fn block_number(json: &str) -> Option<u64> {
    #[derive(Deserialize)]
    struct Block<'a> {
        #[serde(borrow)]
        number: Option<&'a str>,
    }
    let block: Option<Block<'_>> = serde_json::from_str(json).ok()?;
    hex_number(block?.number?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_head_keeps_block_zero_apart_from_unknown() {
        let head = Head::default();
        assert_eq!((head.latest(), head.finalized()), (None, None));
        head.set(Some(0), Some(u64::MAX));
        assert_eq!((head.latest(), head.finalized()), (Some(0), Some(u64::MAX - 1)));
        head.set(None, Some(5));
        assert_eq!((head.latest(), head.finalized()), (None, Some(5)));
    }

    #[test]
    fn quantities_and_block_numbers_are_read_strictly() {
        assert_eq!(quantity(r#""0x1b4""#), Some(0x1b4));
        for refused in [
            r#""1b4""#,
            r#""0x""#,
            r#""0x1ffffffffffffffff""#,
            "436",
            r#""0xzz""#,
        ] {
            assert_eq!(quantity(refused), None, "{refused}");
        }
        assert_eq!(
            block_number(r#"{"hash":"0xab","number":"0x10","transactions":[]}"#),
            Some(16)
        );
        assert_eq!(block_number("null"), None);
        assert_eq!(block_number(r#"{"hash":"0xab"}"#), None);
    }
}
