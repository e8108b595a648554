//! `FinalityCache`: answers kept by what they are about — for good when about a block every
//! upstream holds final, briefly when about the head — in this process and, with the fleet,
//! in its Redis.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::AtomicU64;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::block::{about, answer_block, About};
use crate::message::JsonBytes;
use crate::sync::{bump, lock_unpoisoned};

/// How long an answer about the head is kept by default.
pub const DEFAULT_HEAD_TTL: Duration = Duration::from_secs(1);

/// How many bytes of answers a [`FinalityCache`] keeps in this process by default (64 MiB).
pub const DEFAULT_CACHE_BYTES: usize = 64 << 20;

/// Answers of the gateway kept by what they are about (see [`Gateway::with_cache`](crate::Gateway::with_cache)):
///
/// - about the chain (`eth_chainId`, `net_version`): for good;
/// - about a block numbered at or below the group's [finalized
///   block](crate::UpstreamGroup::finalized_block) (by number, `earliest`, the upper end of
///   an `eth_getLogs` range), or about a block or transaction named by hash whose answer
///   names such a block (`eth_getBlockByHash`, `eth_getTransactionReceipt`, …): for good;
/// - about the head (`latest`, `safe`, `finalized`, no block named, a block above the
///   finalized one): for the [head TTL](FinalityCache::with_head_ttl), 1 s by default;
/// - never: `null` results, errors, `pending`, methods that write or that it does not know
///   (only the read methods of the Ethereum JSON-RPC API are kept).
///
/// Without a [`HeadTracker`](crate::HeadTracker) no block is known final and only the chain
/// is kept for good. Answers are kept in this process up to a size (the oldest dropped
/// first) and, [shared](FinalityCache::shared_through) with a fleet, in its Redis too.
///
/// ```
/// use std::time::Duration;
/// use rpcwire::proxy::FinalityCache;
/// let cache = FinalityCache::new().with_head_ttl(Duration::from_millis(500)).with_max_bytes(8 << 20);
/// assert_eq!(cache.stats().hits, 0);
/// ```
#[derive(Debug)]
pub struct FinalityCache {
    local: Mutex<Local>,
    head_ttl: Duration,
    max_bytes: usize,
    max_answer: usize,
    #[cfg(feature = "redis")]
    shared: Option<crate::fleet::SharedLimiter>,
    counters: CacheCounters,
}

/// What a [`FinalityCache`] did so far.
///
/// ```
/// let stats = rpcwire::proxy::FinalityCache::new().stats();
/// assert_eq!((stats.hits, stats.misses, stats.kept, stats.bytes), (0, 0, 0, 0));
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheStats {
    /// Calls answered from the cache.
    pub hits: u64,
    /// Calls of a kept method that the cache could not answer.
    pub misses: u64,
    /// Answers kept for good.
    pub kept_final: u64,
    /// Answers kept (for good or briefly).
    pub kept: u64,
    /// Bytes of answers held in this process now.
    pub bytes: usize,
}

#[derive(Debug, Default)]
struct CacheCounters {
    hits: AtomicU64,
    misses: AtomicU64,
    kept_final: AtomicU64,
    kept: AtomicU64,
}

/// The answers held in this process, and the order they came in (the oldest dropped first).
#[derive(Debug, Default)]
struct Local {
    answers: HashMap<Box<[u8]>, Kept>,
    order: VecDeque<(Box<[u8]>, u64)>,
    bytes: usize,
    generation: u64,
}

#[derive(Debug)]
struct Kept {
    answer: Bytes,
    until: Option<Instant>,
    generation: u64,
}

/// A call's place in the cache: its method and params.
pub(crate) struct Entry<'a> {
    method: &'a str,
    params: Option<&'a str>,
    about: About,
}

impl Default for FinalityCache {
    fn default() -> FinalityCache {
        FinalityCache::new()
    }
}

impl FinalityCache {
    /// Keeps answers about the head for [`DEFAULT_HEAD_TTL`], up to [`DEFAULT_CACHE_BYTES`]
    /// in this process, none over 256 KiB.
    ///
    /// ```
    /// assert_eq!(rpcwire::proxy::FinalityCache::new().stats().kept, 0);
    /// ```
    pub fn new() -> FinalityCache {
        FinalityCache {
            local: Mutex::default(),
            head_ttl: DEFAULT_HEAD_TTL,
            max_bytes: DEFAULT_CACHE_BYTES,
            max_answer: 256 << 10,
            #[cfg(feature = "redis")]
            shared: None,
            counters: CacheCounters::default(),
        }
    }

    /// How long answers about the head are kept (`Duration::ZERO`: not at all).
    ///
    /// ```
    /// let cache = rpcwire::proxy::FinalityCache::new().with_head_ttl(std::time::Duration::ZERO);
    /// # let _ = cache;
    /// ```
    pub fn with_head_ttl(mut self, ttl: Duration) -> FinalityCache {
        self.head_ttl = ttl;
        self
    }

    /// How many bytes of answers are held in this process at most (the oldest dropped first);
    /// an answer is kept only when it is at most a sixteenth of that, and 256 KiB.
    ///
    /// ```
    /// let cache = rpcwire::proxy::FinalityCache::new().with_max_bytes(1 << 20);
    /// # let _ = cache;
    /// ```
    pub fn with_max_bytes(mut self, bytes: usize) -> FinalityCache {
        self.max_bytes = bytes;
        self.max_answer = (bytes / 16).min(256 << 10);
        self
    }

    /// Shares the answers with a fleet of gateways through `store`'s Redis (under the names
    /// the fleet's [`CacheLayer`](crate::fleet::CacheLayer) uses): what is not held here is
    /// looked for there, and what is kept is written there too (answers kept for good without
    /// expiry).
    ///
    /// ```
    /// use rpcwire::proxy::fleet::{LimitConfig, SharedLimiter};
    /// let store = SharedLimiter::new("redis://127.0.0.1:6379/", LimitConfig::default()).unwrap();
    /// let cache = rpcwire::proxy::FinalityCache::new().shared_through(store);
    /// # let _ = cache;
    /// ```
    #[cfg(feature = "redis")]
    #[cfg_attr(docsrs, doc(cfg(feature = "redis")))]
    pub fn shared_through(mut self, store: crate::fleet::SharedLimiter) -> FinalityCache {
        self.shared = Some(store);
        self
    }

    /// What it did so far.
    ///
    /// ```
    /// assert_eq!(rpcwire::proxy::FinalityCache::new().stats().misses, 0);
    /// ```
    pub fn stats(&self) -> CacheStats {
        let get = |counter: &AtomicU64| counter.load(std::sync::atomic::Ordering::Relaxed);
        CacheStats {
            hits: get(&self.counters.hits),
            misses: get(&self.counters.misses),
            kept_final: get(&self.counters.kept_final),
            kept: get(&self.counters.kept),
            bytes: lock_unpoisoned(&self.local).bytes,
        }
    }

    /// The call's place in the cache, when its answers can be kept.
    pub(crate) fn entry<'a>(&self, method: &'a str, params: Option<&'a str>) -> Option<Entry<'a>> {
        Some(Entry {
            method,
            params,
            about: about(method, params)?,
        })
    }

    /// The answer kept for `entry`, here or in the fleet's Redis.
    pub(crate) async fn get(&self, entry: &Entry<'_>) -> Option<JsonBytes> {
        let key = key(entry);
        let now = Instant::now();
        let held = {
            let mut local = lock_unpoisoned(&self.local);
            match local.answers.get(&key[..]) {
                Some(kept) if kept.until.map_or(true, |until| until > now) => Some(kept.answer.clone()),
                Some(_) => {
                    local.remove(&key);
                    None
                }
                None => None,
            }
        };
        #[cfg(feature = "redis")]
        let held = match (held, &self.shared) {
            (None, Some(store)) => {
                let name = crate::fleet::cache_name(entry.method, entry.params);
                let found = store.read(&[&name]).await.pop().flatten();
                if let Some(answer) = &found {
                    // Held here as briefly as an answer about the head: it may have been kept
                    // for good, or not.
                    self.hold(key, answer.clone(), Some(now + self.head_ttl));
                }
                found
            }
            (held, _) => held,
        };
        match held {
            Some(answer) => {
                bump(&self.counters.hits);
                // Kept only after the parser validated it.
                Some(JsonBytes::from_validated(answer))
            }
            None => {
                bump(&self.counters.misses);
                None
            }
        }
    }

    /// Keeps `result`, the answer to `entry`, for as long as what it is about allows, given
    /// the group's `finalized` block.
    pub(crate) fn keep(&self, entry: &Entry<'_>, result: &JsonBytes, finalized: Option<u64>) {
        let text = result.as_str();
        if text == "null" || text.len() > self.max_answer {
            return;
        }
        let is_final = |block: u64| finalized.is_some_and(|finalized| block <= finalized);
        let for_good = match entry.about {
            About::Chain => true,
            About::Block(block) => is_final(block),
            About::Head => false,
            About::Answer(member) => answer_block(text, member).is_some_and(is_final),
        };
        if !for_good && self.head_ttl.is_zero() {
            return;
        }
        bump(&self.counters.kept);
        if for_good {
            bump(&self.counters.kept_final);
        }
        let ttl = (!for_good).then_some(self.head_ttl);
        let answer = result.clone().into_bytes();
        self.hold(key(entry), answer.clone(), ttl.map(|ttl| Instant::now() + ttl));
        #[cfg(feature = "redis")]
        if let Some(store) = &self.shared {
            let store = store.clone();
            let name = crate::fleet::cache_name(entry.method, entry.params);
            tokio::spawn(async move { store.write(&name, answer, ttl).await });
        }
    }

    /// Holds `answer` under `key` here until `until` (`None`: until dropped for room).
    fn hold(&self, key: Box<[u8]>, answer: Bytes, until: Option<Instant>) {
        let mut local = lock_unpoisoned(&self.local);
        local.remove(&key);
        local.generation += 1;
        let generation = local.generation;
        local.bytes += key.len() + answer.len();
        local.order.push_back((key.clone(), generation));
        local.answers.insert(
            key,
            Kept {
                answer,
                until,
                generation,
            },
        );
        while local.bytes > self.max_bytes {
            let Some((oldest, generation)) = local.order.pop_front() else {
                break;
            };
            if local
                .answers
                .get(&oldest)
                .is_some_and(|kept| kept.generation == generation)
            {
                local.remove(&oldest);
            }
        }
        // The order holds at most one stale place per live answer, and is trimmed with it.
        if local.order.len() > 2 * local.answers.len() + 64 {
            let Local { answers, order, .. } = &mut *local;
            order.retain(|(key, generation)| {
                answers
                    .get(key)
                    .is_some_and(|kept| kept.generation == *generation)
            });
        }
    }
}

impl Local {
    fn remove(&mut self, key: &[u8]) {
        if let Some(kept) = self.answers.remove(key) {
            self.bytes -= key.len() + kept.answer.len();
        }
    }
}

/// The key a call's answer is held under here: its method and params' bytes.
fn key(entry: &Entry<'_>) -> Box<[u8]> {
    let params = entry.params.unwrap_or_default();
    let mut key = Vec::with_capacity(entry.method.len() + 1 + params.len());
    key.extend_from_slice(entry.method.as_bytes());
    key.push(b'\n');
    key.extend_from_slice(params.as_bytes());
    key.into_boxed_slice()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn json(text: &'static str) -> JsonBytes {
        JsonBytes::from_validated(Bytes::from_static(text.as_bytes()))
    }

    #[tokio::test]
    async fn answers_about_final_blocks_stay_and_about_the_head_expire() {
        let cache = FinalityCache::new().with_head_ttl(Duration::from_millis(50));
        let old = cache
            .entry("eth_getBlockByNumber", Some(r#"["0x5",false]"#))
            .unwrap();
        let new = cache
            .entry("eth_getBlockByNumber", Some(r#"["0x9",false]"#))
            .unwrap();
        let head = cache.entry("eth_blockNumber", None).unwrap();
        assert!(cache
            .entry("eth_sendRawTransaction", Some(r#"["0x1"]"#))
            .is_none());
        assert!(cache.get(&old).await.is_none());
        cache.keep(&old, &json(r#"{"number":"0x5"}"#), Some(8));
        cache.keep(&new, &json(r#"{"number":"0x9"}"#), Some(8));
        cache.keep(&head, &json(r#""0x9""#), Some(8));
        let stats = cache.stats();
        assert_eq!((stats.kept, stats.kept_final, stats.misses), (3, 1, 1));
        assert_eq!(cache.get(&old).await.unwrap().as_str(), r#"{"number":"0x5"}"#);
        assert_eq!(cache.get(&head).await.unwrap().as_str(), r#""0x9""#);
        tokio::time::sleep(Duration::from_millis(80)).await;
        assert!(cache.get(&head).await.is_none() && cache.get(&new).await.is_none());
        assert!(cache.get(&old).await.is_some());
        assert_eq!(cache.stats().hits, 3);
    }

    #[tokio::test]
    async fn nulls_big_answers_and_unknown_finality_are_not_kept_for_good() {
        let cache = FinalityCache::new()
            .with_head_ttl(Duration::ZERO)
            .with_max_bytes(1600);
        let receipt = cache
            .entry("eth_getTransactionReceipt", Some(r#"["0xab"]"#))
            .unwrap();
        cache.keep(&receipt, &json("null"), Some(8));
        cache.keep(&receipt, &json(r#"{"blockNumber":"0x9"}"#), Some(8));
        let block = cache
            .entry("eth_getBlockByNumber", Some(r#"["0x1",false]"#))
            .unwrap();
        cache.keep(&block, &json(r#"{"number":"0x1"}"#), None);
        let chain = cache.entry("eth_chainId", None).unwrap();
        cache.keep(
            &chain,
            &json(&*Box::leak(format!("\"{}\"", "0".repeat(120)).into_boxed_str())),
            None,
        );
        assert_eq!(cache.stats().kept, 0, "an answer over a sixteenth of the room");
        cache.keep(&chain, &json(r#""0x1""#), None);
        cache.keep(&receipt, &json(r#"{"blockNumber":"0x8"}"#), Some(8));
        assert_eq!(cache.stats().kept_final, 2);
        assert!(cache.get(&block).await.is_none());
        assert_eq!(
            cache.get(&receipt).await.unwrap().as_str(),
            r#"{"blockNumber":"0x8"}"#
        );
    }

    #[test]
    fn the_oldest_answers_make_room_and_the_bytes_held_stay_bounded() {
        let cache = FinalityCache::new().with_max_bytes(800);
        for round in 0..50u64 {
            for block in 0..20u64 {
                let params = format!("[\"{:#x}\",false]", block);
                let entry = cache.entry("eth_getBlockByNumber", Some(&params)).unwrap();
                let result = format!("{{\"number\":\"{:#x}\",\"round\":{round}}}", block);
                cache.keep(&entry, &JsonBytes::from_validated(Bytes::from(result)), Some(100));
                assert!(cache.stats().bytes <= 800);
            }
        }
        let local = lock_unpoisoned(&cache.local);
        assert!(!local.answers.is_empty() && local.answers.len() < 20);
        assert!(local.order.len() <= 2 * local.answers.len() + 64);
        let held: usize = local
            .answers
            .iter()
            .map(|(key, kept)| key.len() + kept.answer.len())
            .sum();
        assert_eq!(held, local.bytes);
    }
}
