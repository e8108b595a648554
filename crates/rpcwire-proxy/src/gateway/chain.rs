//! The gateway's chain-aware forwarding: answers kept in a [`FinalityCache`] and asked for
//! there first, and `eth_getLogs` over a wide range split into chunks.

use bytes::Bytes;

use super::Gateway;
use crate::chain::{logs, result_of, CacheStats, FinalityCache};
use crate::forward_error::ForwardError;
use crate::group::UpstreamGroup;
use crate::link::LinkAnswer;
use crate::message::{JsonBytes, RawJson};
use crate::middleware::RemoteAnswer;
use crate::sync::bump;

/// How many chunks of a wide `eth_getLogs` are under way at once.
const CHUNKS_AT_ONCE: usize = 4;

/// How many chunks a wide `eth_getLogs` may be split into at most (one wider goes on as it
/// came, for its upstream to answer).
pub const DEFAULT_MAX_LOG_CHUNKS: usize = 100;

impl Gateway {
    /// Answers requests from `cache` when it holds their answer, and keeps there the answers
    /// it may (see [`FinalityCache`]: for good those about finalized blocks, briefly those
    /// about the head); over each method's group's [finalized
    /// block](UpstreamGroup::finalized_block), which a [`HeadTracker`](crate::HeadTracker)
    /// keeps up to date. A client's batch then goes upstream element by element (its cached
    /// elements answered here), never whole as it came.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use rpcwire::proxy::{FinalityCache, Gateway, UpstreamGroup};
    /// let gateway = Gateway::new(UpstreamGroup::new(vec![])).with_cache(FinalityCache::new());
    /// assert_eq!(gateway.cache_stats().unwrap().hits, 0);
    /// # });
    /// ```
    pub fn with_cache(mut self, cache: FinalityCache) -> Gateway {
        self.cache = Some(cache);
        self
    }

    /// Splits an `eth_getLogs` request (alone, not inside a batch) whose range, from one
    /// block number to another, spans more than `max_blocks` blocks into requests of at most
    /// that many (a few under way at once, at most [`DEFAULT_MAX_LOG_CHUNKS`]), and answers
    /// with their logs together, in order; the first that fails fails the whole. A range named
    /// by a tag (`latest`) or a block hash goes on as it came.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use rpcwire::proxy::{Gateway, UpstreamGroup};
    /// let gateway = Gateway::new(UpstreamGroup::new(vec![])).with_log_chunks(2_000);
    /// # let _ = gateway;
    /// # });
    /// ```
    pub fn with_log_chunks(mut self, max_blocks: u64) -> Gateway {
        self.log_chunks = Some(max_blocks);
        self
    }

    /// What its cache did so far (`None`: it has none).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// assert!(rpcwire::proxy::Gateway::new(rpcwire::proxy::UpstreamGroup::new(vec![])).cache_stats().is_none());
    /// # });
    /// ```
    pub fn cache_stats(&self) -> Option<CacheStats> {
        self.cache.as_ref().map(FinalityCache::stats)
    }

    /// A request's answer from `pool` (`frame`: the request as it goes upstream, when it
    /// goes whole): from the cache when it holds it, else from upstream — split into chunks
    /// when a wide `eth_getLogs` — and kept in the cache when it may be.
    pub(super) async fn ask(
        &self,
        pool: &UpstreamGroup,
        method: &str,
        params: Option<&JsonBytes>,
        frame: Option<&Bytes>,
    ) -> Result<LinkAnswer, ForwardError> {
        if let Some(result) = self.cached(method, params).await {
            return Ok(LinkAnswer::Remote(RemoteAnswer::Result(result)));
        }
        let text = params.map(JsonBytes::as_str);
        bump(&self.counters.forwarded);
        let chunks = match (self.log_chunks, text) {
            (Some(max_blocks), Some(text)) if method == "eth_getLogs" => {
                logs::split(text, max_blocks, DEFAULT_MAX_LOG_CHUNKS)
            }
            _ => None,
        };
        let outcome = match chunks {
            Some(chunks) => Gateway::forward_chunks(pool, &chunks).await,
            None => {
                let params = params.map(JsonBytes::to_raw_json);
                pool.send(frame, method, params.as_ref()).await
            }
        };
        if let Ok(answer) = &outcome {
            self.keep(pool, method, params, answer);
        }
        outcome
    }

    /// The answer the cache holds for a request, if it has one and holds it.
    pub(super) async fn cached(&self, method: &str, params: Option<&JsonBytes>) -> Option<JsonBytes> {
        let cache = self.cache.as_ref()?;
        let entry = cache.entry(method, params.map(JsonBytes::as_str))?;
        cache.get(&entry).await
    }

    /// Keeps `answer`, from `pool` to a request, in the cache when it may be.
    pub(super) fn keep(
        &self,
        pool: &UpstreamGroup,
        method: &str,
        params: Option<&JsonBytes>,
        answer: &LinkAnswer,
    ) {
        let Some(cache) = &self.cache else {
            return;
        };
        if let (Some(entry), Some(result)) = (
            cache.entry(method, params.map(JsonBytes::as_str)),
            result_of(answer),
        ) {
            cache.keep(&entry, result, pool.finalized_block());
        }
    }

    /// The logs of each chunk's request (`chunks`: their params), a few under way at once,
    /// put together in order.
    async fn forward_chunks(pool: &UpstreamGroup, chunks: &[String]) -> Result<LinkAnswer, ForwardError> {
        let mut results = Vec::with_capacity(chunks.len());
        for at_once in chunks.chunks(CHUNKS_AT_ONCE) {
            let calls: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = _> + Send + '_>>> = at_once
                .iter()
                .map(|params| {
                    Box::pin(async move {
                        let params = RawJson::from_validated(params);
                        pool.call("eth_getLogs", Some(&params)).await
                    }) as _
                })
                .collect();
            for outcome in crate::sync::join_in_order(calls).await {
                results.push(outcome?);
            }
        }
        let joined = logs::join(results.iter().map(JsonBytes::as_str)).ok_or_else(|| {
            ForwardError::NoAnswer(
                "an upstream answered eth_getLogs with something other than a list".to_owned(),
            )
        })?;
        Ok(LinkAnswer::Remote(RemoteAnswer::Result(
            JsonBytes::from_validated(Bytes::from(joined)),
        )))
    }
}
