//! `UpstreamGroup`: forwards requests to upstreams — the next one free and not benched — with a
//! timeout per attempt and retries on the next upstream where the policy allows them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::attempt::{classify, count, trips, Attempt};
use super::breaker::Breaking;
use super::forward_error::ForwardError;
use super::hedge::{Hedge, HedgeCounters, HedgeStats, Timing};
use super::limit::{Pausing, DEFAULT_LIMIT_PAUSE, DEFAULT_MAX_LIMIT_PAUSE};
use super::link::{LinkAnswer, LinkError, LinkErrorKind};
use super::metrics;
use super::retry::{RetryBudget, RetryPolicy, Retrying};
use super::upstream::Upstream;
use crate::message::{ErrorObject, JsonBytes, RawJson};
use crate::middleware::{
    BatchEntry, BatchOutcome, CallContext, Readiness, RemoteAnswer, RpcCall, RpcService, TimeoutLayer,
};
use crate::sync::bump;
use tower_layer::Layer;

/// The method a whole batch goes by in metrics and logs.
const BATCH_METHOD: &str = "(batch)";

/// How long one attempt may take by default.
pub const DEFAULT_ATTEMPT_TIMEOUT: Duration = Duration::from_secs(10);

/// Upstreams that requests are forwarded to, params and results as JSON text passed on as
/// they came: each request goes to the next upstream in turn that is not benched and has a
/// free in-flight slot; a failed attempt is sent again to the next one as the
/// [`RetryPolicy`] allows. Every call ends: with the upstream's result, the upstream's error
/// object as it came, or a [`ForwardError`] saying why there is none.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use rpcwire::dispatch::Router;
/// use rpcwire::proxy::{RetryPolicy, Upstream, UpstreamGroup};
/// use rpcwire::transport::{Peer, StreamTransport};
///
/// // An upstream in memory: a Peer serving `subtract` on the other end of a duplex.
/// let upstream = Upstream::new("memory", || {
///     let (ours, theirs) = tokio::io::duplex(4096);
///     let mut router = Router::new();
///     router.method("subtract", |(a, b): (i64, i64)| Ok(a - b));
///     let server = Peer::new(StreamTransport::from_io(theirs, rpcwire::frame::Framing::Ndjson), router);
///     tokio::spawn(async move { server.closed().await });
///     Peer::new(StreamTransport::from_io(ours, rpcwire::frame::Framing::Ndjson), Router::new())
/// });
/// let group = UpstreamGroup::new(vec![upstream]).with_retry(RetryPolicy::new().safe_method("subtract"));
/// let params = rpcwire::RawJson::new("[42,23]").unwrap();
/// assert_eq!(group.call("subtract", Some(&params)).await.unwrap().as_str(), "19");
/// # });
/// ```
#[derive(Debug)]
pub struct UpstreamGroup {
    upstreams: Vec<Arc<Upstream>>,
    retry: RetryPolicy,
    budget: RetryBudget,
    timeout: Duration,
    limit_pause: Duration,
    max_limit_pause: Duration,
    hedge: Option<Hedge>,
    hedges: HedgeCounters,
    max_lag: Option<u64>,
    prefer_faster: bool,
    next: AtomicUsize,
}

/// With [`UpstreamGroup::prefer_faster`], one call in this many goes to the upstreams in turn
/// (so that the slower ones' latencies stay known).
const IN_TURN_EVERY: usize = 32;

/// The attempts of one call: each on the next upstream from `first` on that would take it
/// (see [`UpstreamGroup::pick`]), through that upstream's stack.
struct Attempts<'g> {
    group: &'g UpstreamGroup,
    first: usize,
    made: AtomicUsize,
}

/// Why an attempt brought no answer to pass on.
enum Missed {
    /// No upstream would take it: every one is benched (or none is configured).
    Benched,
    /// How the attempt on this upstream ended (never `Attempt::Answered`).
    On(Arc<Upstream>, Attempt),
}

impl Missed {
    /// What the call ends with when this was its last attempt: the upstream's own error
    /// answer when it gave one, as it came; why there is none otherwise. When no upstream
    /// would take it and one is paused for a limit, the limit's error, with the time until
    /// the first comes back.
    fn into_outcome(self, group: &UpstreamGroup) -> Result<LinkAnswer, ForwardError> {
        let (upstream, attempt) = match self {
            Missed::Benched => {
                return Err(match group.first_back(Instant::now()) {
                    Some((error, retry_after)) => ForwardError::Limited { error, retry_after },
                    None => ForwardError::Unavailable("every upstream is benched".to_owned()),
                })
            }
            Missed::On(upstream, attempt) => (upstream, attempt),
        };
        let name = upstream.name();
        match attempt {
            Attempt::Answered(answer)
            | Attempt::NoAnswer {
                answer: Some(answer), ..
            } => Ok(answer),
            Attempt::BadParams(reason) => Err(ForwardError::Params(reason)),
            Attempt::Refused(reason) | Attempt::NoAnswer { reason, .. } => {
                Err(ForwardError::NoAnswer(format!("{name}: {reason}")))
            }
            Attempt::NotReached(reason) => Err(ForwardError::Unavailable(format!("{name}: {reason}"))),
            Attempt::Limited(limit) => {
                let now = Instant::now();
                let retry_after = match group.first_back(now) {
                    Some((_, first_back)) => first_back,
                    None => upstream.pause.remaining(now).unwrap_or_default(),
                };
                Err(ForwardError::Limited {
                    error: limit.error,
                    retry_after,
                })
            }
        }
    }
}

impl RpcService for Attempts<'_> {
    type Answer = LinkAnswer;
    type Error = Missed;

    async fn call(&self, call: RpcCall<'_>) -> Result<LinkAnswer, Missed> {
        let made = self.made.fetch_add(1, Ordering::Relaxed);
        let Some(upstream) = self.group.pick(self.first.wrapping_add(made)) else {
            return Err(Missed::Benched);
        };
        match self.group.attempt(&upstream, call).await {
            Attempt::Answered(answer) => Ok(answer),
            missed => Err(Missed::On(upstream, missed)),
        }
    }

    /// Sends the batch whole on the next upstream that would take it.
    // As `call`'s: a `Missed` is made once per call that got no answer, and moved once.
    #[allow(clippy::result_large_err)]
    async fn batch<'a>(&'a self, entries: &'a [BatchEntry<'a>]) -> Vec<BatchOutcome<LinkAnswer, Missed>> {
        let made = self.made.fetch_add(1, Ordering::Relaxed);
        let Some(upstream) = self.group.pick(self.first.wrapping_add(made)) else {
            return entries.iter().map(|_| Some(Err(Missed::Benched))).collect();
        };
        let attempts = self.group.attempt_batch(&upstream, entries).await;
        attempts
            .into_iter()
            .map(|attempt| {
                attempt.map(|attempt| match attempt {
                    Attempt::Answered(answer) => Ok(answer),
                    missed => Err(Missed::On(upstream.clone(), missed)),
                })
            })
            .collect()
    }

    /// Sends it on the next upstream that would take it, around its in-flight limit (a
    /// notification waits for no answer).
    async fn notify(&self, call: RpcCall<'_>) -> Result<(), Missed> {
        let made = self.made.fetch_add(1, Ordering::Relaxed);
        let Some(upstream) = self.group.pick(self.first.wrapping_add(made)) else {
            return Err(Missed::Benched);
        };
        bump(&upstream.counters.requests);
        let sent = upstream.service().get_ref().notify(call).await;
        match sent {
            Ok(()) => Ok(()),
            Err(error) if error.kind() == LinkErrorKind::Params => Err(Missed::On(
                upstream,
                Attempt::BadParams(error.reason().to_owned()),
            )),
            Err(error) => {
                bump(&upstream.counters.not_reached);
                Err(Missed::On(upstream, Attempt::NotReached(error.to_string())))
            }
        }
    }
}

/// A call's answer as its result, or the error that stands for it.
pub(crate) fn into_result(answer: LinkAnswer) -> Result<JsonBytes, ForwardError> {
    match answer {
        LinkAnswer::Remote(RemoteAnswer::Result(result))
        | LinkAnswer::Frame {
            result: Some(result), ..
        } => Ok(result),
        LinkAnswer::Remote(RemoteAnswer::Error { error, .. })
        | LinkAnswer::Frame {
            error: Some(error), ..
        } => Err(ForwardError::Remote(error)),
        LinkAnswer::NonConforming { reason, error, .. } => Err(ForwardError::NonConforming { reason, error }),
        // A frame is a result or an error (`response_to_gateway`); a batch answers a batch.
        LinkAnswer::Frame { .. } | LinkAnswer::Batch { .. } => Err(ForwardError::NoAnswer(
            "an answer with neither a result nor an error".to_owned(),
        )),
    }
}

/// Whether a call whose attempt ended so is worth another attempt: one that never reached
/// its upstream or was refused for a limit (it did not run) always; one that may have
/// reached it (no answer, a busy answer) only when it is `safe` to repeat.
fn retries_if(safe: bool, outcome: &Result<LinkAnswer, Missed>) -> bool {
    match outcome {
        Err(Missed::On(_, Attempt::NotReached(_) | Attempt::Limited(_))) => true,
        Err(Missed::On(_, Attempt::NoAnswer { .. })) => safe,
        _ => false,
    }
}

impl UpstreamGroup {
    /// A group over `upstreams`, with the default [`RetryPolicy`] and
    /// [`DEFAULT_ATTEMPT_TIMEOUT`].
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let group = rpcwire::proxy::UpstreamGroup::new(vec![rpcwire::proxy::Upstream::address("tcp://127.0.0.1:9").unwrap()]);
    /// assert_eq!(group.upstreams().len(), 1);
    /// # });
    /// ```
    pub fn new(upstreams: Vec<Upstream>) -> UpstreamGroup {
        let retry = RetryPolicy::new();
        // One name each (two keys of one provider share a host): the second is `NAME#2`.
        let names = crate::label::unique(upstreams.iter().map(|upstream| upstream.name().to_owned()));
        let upstreams = upstreams
            .into_iter()
            .zip(names)
            .map(|(upstream, name)| Arc::new(upstream.with_name(&name)))
            .collect();
        UpstreamGroup {
            upstreams,
            budget: retry.budget(),
            retry,
            timeout: DEFAULT_ATTEMPT_TIMEOUT,
            limit_pause: DEFAULT_LIMIT_PAUSE,
            max_limit_pause: DEFAULT_MAX_LIMIT_PAUSE,
            hedge: None,
            hedges: HedgeCounters::default(),
            max_lag: None,
            prefer_faster: false,
            next: AtomicUsize::new(0),
        }
    }

    /// Uses `policy` for retries (its budget starts full).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use rpcwire::proxy::{RetryPolicy, Upstream, UpstreamGroup};
    /// let group = UpstreamGroup::new(vec![Upstream::address("tcp://h:1").unwrap()]).with_retry(RetryPolicy::new().with_max_attempts(5));
    /// assert_eq!(group.retry_policy().max_attempts(), 5);
    /// # });
    /// ```
    pub fn with_retry(mut self, policy: RetryPolicy) -> UpstreamGroup {
        self.budget = policy.budget();
        self.retry = policy;
        self
    }

    /// How long one attempt may take (waiting for an in-flight slot included) before it
    /// counts as having got no answer.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::time::Duration;
    /// let group = rpcwire::proxy::UpstreamGroup::new(vec![]).with_timeout(Duration::from_secs(2));
    /// assert_eq!(group.timeout(), Duration::from_secs(2));
    /// # });
    /// ```
    pub fn with_timeout(mut self, timeout: Duration) -> UpstreamGroup {
        self.timeout = timeout;
        self
    }

    /// How long an upstream that refused a request for a limit (an HTTP 429, a -32005
    /// answer) is left alone: its `Retry-After` when it gave one, else `default`; never
    /// longer than `max` (then one request goes to it, and its answer pauses it again or
    /// not). By default [`DEFAULT_LIMIT_PAUSE`] and [`DEFAULT_MAX_LIMIT_PAUSE`].
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::time::Duration;
    /// let group = rpcwire::proxy::UpstreamGroup::new(vec![])
    ///     .with_limit_pause(Duration::from_millis(500), Duration::from_secs(30));
    /// assert_eq!(group.limit_pause(), (Duration::from_millis(500), Duration::from_secs(30)));
    /// # });
    /// ```
    pub fn with_limit_pause(mut self, default: Duration, max: Duration) -> UpstreamGroup {
        self.limit_pause = default;
        self.max_limit_pause = max.max(default);
        self
    }

    /// How long an upstream over its limit is left alone when it does not say, and at most.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use rpcwire::proxy::{UpstreamGroup, DEFAULT_LIMIT_PAUSE, DEFAULT_MAX_LIMIT_PAUSE};
    /// assert_eq!(UpstreamGroup::new(vec![]).limit_pause(), (DEFAULT_LIMIT_PAUSE, DEFAULT_MAX_LIMIT_PAUSE));
    /// # });
    /// ```
    pub fn limit_pause(&self) -> (Duration, Duration) {
        (self.limit_pause, self.max_limit_pause)
    }

    /// Hedges the calls of methods the retry policy marks safe: when the first upstream has
    /// not answered after `hedge`'s delay, the same call goes to another one too, and the
    /// first answer wins (the other attempt is dropped, which cancels it). Counted in
    /// [`hedge_stats`](UpstreamGroup::hedge_stats) and the metrics. Off by default.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::time::Duration;
    /// use rpcwire::proxy::{Hedge, RetryPolicy, Upstream, UpstreamGroup};
    /// let group = UpstreamGroup::new(vec![Upstream::address("http://a:1/").unwrap(), Upstream::address("http://b:1/").unwrap()])
    ///     .with_retry(RetryPolicy::new().safe_methods(["eth_call", "eth_getBalance"]))
    ///     .with_hedge(Hedge::quantile(0.95, Duration::from_millis(5)));
    /// assert_eq!(group.hedge_stats().sent, 0);
    /// # });
    /// ```
    pub fn with_hedge(mut self, hedge: Hedge) -> UpstreamGroup {
        self.hedge = Some(hedge);
        self
    }

    /// Sends each call first to the upstream answering fastest lately (the lowest moving
    /// average of its latencies — an attempt a hedge won over counted at what it had taken —
    /// among those not benched nor behind), instead of to each in turn; one call in 32 still
    /// goes in turn, so that every upstream's latency stays known. Retries and hedges go to the
    /// next upstreams as before. Off by default: with it a slow upstream gets few calls, which
    /// suits upstreams that cost the same to call.
    ///
    /// ```
    /// use rpcwire::proxy::{Upstream, UpstreamGroup};
    /// let group = UpstreamGroup::new(vec![Upstream::address("http://a:1/").unwrap(), Upstream::address("http://b:1/").unwrap()])
    ///     .prefer_faster(true);
    /// # let _ = group;
    /// ```
    pub fn prefer_faster(mut self, on: bool) -> UpstreamGroup {
        self.prefer_faster = on;
        self
    }

    /// What hedging did so far.
    ///
    /// See [`HedgeStats`] for an example.
    pub fn hedge_stats(&self) -> HedgeStats {
        self.hedges.stats()
    }

    /// How long one attempt may take.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// assert_eq!(rpcwire::proxy::UpstreamGroup::new(vec![]).timeout(), rpcwire::proxy::DEFAULT_ATTEMPT_TIMEOUT);
    /// # });
    /// ```
    pub fn timeout(&self) -> Duration {
        self.timeout
    }

    /// The retry policy.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// assert_eq!(rpcwire::proxy::UpstreamGroup::new(vec![]).retry_policy().max_attempts(), 3);
    /// # });
    /// ```
    pub fn retry_policy(&self) -> &RetryPolicy {
        &self.retry
    }

    /// The upstreams, in the order given (their [`stats`](Upstream::stats) included).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use rpcwire::proxy::{Upstream, UpstreamGroup};
    /// let group = UpstreamGroup::new(vec![
    ///     Upstream::address("tcp://a:1").unwrap(),
    ///     Upstream::address("ws://a:1/another-key").unwrap(),
    /// ]);
    /// assert_eq!(group.upstreams()[0].name(), "a:1");
    /// assert_eq!(group.upstreams()[1].name(), "a:1#2");
    /// # });
    /// ```
    pub fn upstreams(&self) -> &[Arc<Upstream>] {
        &self.upstreams
    }

    /// Forwards a call of `method` with `params` (JSON text, written as it is) and returns
    /// the upstream's result as it came, or why there is none. See [`UpstreamGroup`].
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use rpcwire::proxy::{ForwardError, UpstreamGroup};
    /// let error = UpstreamGroup::new(vec![]).call("eth_chainId", None).await.unwrap_err();
    /// assert!(matches!(error, ForwardError::Unavailable(_)));
    /// # });
    /// ```
    pub async fn call(&self, method: &str, params: Option<&RawJson<'_>>) -> Result<JsonBytes, ForwardError> {
        into_result(self.send(None, method, params).await?)
    }

    /// A call (or a forwarded frame), on the next upstream free and not benched, retried as
    /// the policy allows: the group's attempts (each on the upstream [`pick`] chooses,
    /// through [`stack`]) behind the retry layer.
    pub(crate) async fn send(
        &self,
        frame: Option<&Bytes>,
        method: &str,
        params: Option<&RawJson<'_>>,
    ) -> Result<LinkAnswer, ForwardError> {
        let context = frame.map(|frame| CallContext::new().with_frame(frame));
        let mut call = RpcCall::new(method, params);
        if let Some(context) = &context {
            call = call.with_context(context);
        }
        let first = self.first_pick();
        match self.hedge {
            Some(hedge) if self.upstreams.len() > 1 && self.retry.is_safe(method) => {
                self.send_hedged(call, first, hedge).await
            }
            _ => self.send_from(call, first).await,
        }
    }

    /// A call hedged: sent from the upstream `first` on as [`send_from`] does, and when no
    /// answer came within the hedge's delay, to another upstream too; the first answer wins.
    async fn send_hedged(
        &self,
        call: RpcCall<'_>,
        first: usize,
        hedge: Hedge,
    ) -> Result<LinkAnswer, ForwardError> {
        let primary_upstream = self.pick(first);
        let recent = primary_upstream
            .as_ref()
            .map(|upstream| upstream.latencies.recent())
            .unwrap_or_default();
        let primary = self.send_from(call, first);
        tokio::pin!(primary);
        tokio::select! {
            biased;
            outcome = &mut primary => return outcome,
            () = tokio::time::sleep(hedge.delay(&recent)) => {}
        }
        // Still no answer: the same call on another upstream that would take it.
        let other = (1..self.upstreams.len())
            .filter_map(|step| self.pick(first.wrapping_add(step)))
            .find(|other| {
                !primary_upstream
                    .as_ref()
                    .is_some_and(|primary| Arc::ptr_eq(primary, other))
            });
        let Some(other) = other else {
            return primary.await;
        };
        bump(&self.hedges.sent);
        metrics::hedged(call.method(), false);
        let second = self.attempt(&other, call);
        tokio::pin!(second);
        tokio::select! {
            outcome = &mut primary => outcome,
            attempt = &mut second => match attempt {
                Attempt::Answered(answer) => {
                    bump(&self.hedges.won);
                    metrics::hedged(call.method(), true);
                    Ok(answer)
                }
                _ => primary.await,
            },
        }
    }

    /// A call sent from the upstream `first` on, retried as the policy allows (see [`send`]).
    async fn send_from(&self, call: RpcCall<'_>, first: usize) -> Result<LinkAnswer, ForwardError> {
        match self.retrying(first, None).call(call).await {
            Ok(answer) => Ok(answer),
            Err(missed) => missed.into_outcome(self),
        }
    }

    /// Forwards a notification to the next upstream free and not benched, sent again only
    /// when it could not be written (a notification gets no answer, so nothing else says
    /// whether it arrived).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let error = rpcwire::proxy::UpstreamGroup::new(vec![]).notify("log", None).await.unwrap_err();
    /// assert!(matches!(error, rpcwire::proxy::ForwardError::Unavailable(_)));
    /// # });
    /// ```
    pub async fn notify(&self, method: &str, params: Option<&RawJson<'_>>) -> Result<(), ForwardError> {
        let attempts = Attempts {
            group: self,
            first: self.first_pick(),
            made: AtomicUsize::new(0),
        };
        let call = RpcCall::new(method, params);
        let mut failure = None;
        for _ in 0..self.retry.max_attempts().min(self.upstreams.len()) {
            match attempts.notify(call).await {
                Ok(()) => return Ok(()),
                Err(Missed::On(_, Attempt::BadParams(reason))) => return Err(ForwardError::Params(reason)),
                Err(missed @ Missed::Benched) => {
                    failure = Some(missed);
                    break;
                }
                Err(missed) => failure = Some(missed),
            }
        }
        match failure {
            Some(missed) => missed.into_outcome(self).map(drop),
            None => Err(ForwardError::Unavailable("no upstream is configured".to_owned())),
        }
    }

    /// The upstream for attempt `index`: the first from there on, in turn, that is not
    /// benched, not behind (see [`with_max_lag`](UpstreamGroup::with_max_lag)) and has a free
    /// slot; else the first not benched nor behind (the attempt waits for a slot); else the
    /// first not benched; `None` when every one is benched.
    fn pick(&self, index: usize) -> Option<Arc<Upstream>> {
        let count = self.upstreams.len();
        if count == 0 {
            return None;
        }
        let floor = self.lag_floor();
        let in_turn = (0..count).map(|step| &self.upstreams[index.wrapping_add(step) % count]);
        let (mut waiting, mut behind) = (None, None);
        for upstream in in_turn {
            let lags = floor.is_some_and(|floor| upstream.head.latest().is_some_and(|latest| latest < floor));
            match self.stack(upstream).readiness() {
                Readiness::Ready if !lags => return Some(upstream.clone()),
                Readiness::Ready | Readiness::Busy if lags => {
                    behind.get_or_insert_with(|| upstream.clone());
                }
                Readiness::Ready | Readiness::Busy => {
                    waiting.get_or_insert_with(|| upstream.clone());
                }
                Readiness::Down => {}
            }
        }
        waiting.or(behind)
    }

    /// Where a call's attempts start: the next upstream in turn, or with
    /// [`prefer_faster`](UpstreamGroup::prefer_faster) (but one call in [`IN_TURN_EVERY`]) the
    /// one answering fastest lately among those not benched nor behind (one not yet timed
    /// first).
    fn first_pick(&self) -> usize {
        let turn = self.next.fetch_add(1, Ordering::Relaxed);
        if !self.prefer_faster || turn % IN_TURN_EVERY == 0 {
            return turn;
        }
        let floor = self.lag_floor();
        self.upstreams
            .iter()
            .enumerate()
            .filter(|(_, upstream)| {
                let behind =
                    floor.is_some_and(|floor| upstream.head.latest().is_some_and(|latest| latest < floor));
                !behind && self.stack(upstream).readiness() != Readiness::Down
            })
            .min_by_key(|(_, upstream)| upstream.latencies.average().unwrap_or(0))
            .map_or(turn, |(index, _)| index)
    }

    /// The lowest latest block an upstream may have without being behind: the highest any
    /// has less the largest lag allowed (`None`: no lag set, or no head known).
    fn lag_floor(&self) -> Option<u64> {
        let max_lag = self.max_lag?;
        Some(self.latest_block()?.saturating_sub(max_lag))
    }

    /// Routes away from upstreams whose latest block is more than `blocks` behind the highest
    /// any upstream has, as a [`HeadTracker`](crate::HeadTracker) finds them: they are picked
    /// only when no other upstream would take the call. Without a tracker, nothing is known
    /// and no upstream is behind.
    ///
    /// ```
    /// use rpcwire::proxy::{Upstream, UpstreamGroup};
    /// let group = UpstreamGroup::new(vec![Upstream::address("tcp://127.0.0.1:9").unwrap()]).with_max_lag(5);
    /// assert_eq!(group.latest_block(), None);
    /// ```
    pub fn with_max_lag(mut self, blocks: u64) -> UpstreamGroup {
        self.max_lag = Some(blocks);
        self
    }

    /// The highest latest block any upstream has, as a [`HeadTracker`](crate::HeadTracker)
    /// last found (`None`: not known).
    ///
    /// ```
    /// assert_eq!(rpcwire::proxy::UpstreamGroup::new(vec![]).latest_block(), None);
    /// ```
    pub fn latest_block(&self) -> Option<u64> {
        self.upstreams
            .iter()
            .filter_map(|upstream| upstream.head.latest())
            .max()
    }

    /// The last block every upstream that is not behind holds final (the lowest of their
    /// finalized blocks), as a [`HeadTracker`](crate::HeadTracker) last found: an answer about
    /// a block up to it can no longer change. `None`: not known.
    ///
    /// ```
    /// assert_eq!(rpcwire::proxy::UpstreamGroup::new(vec![]).finalized_block(), None);
    /// ```
    pub fn finalized_block(&self) -> Option<u64> {
        let floor = self.lag_floor();
        self.upstreams
            .iter()
            .filter(|upstream| match floor {
                Some(floor) => upstream.head.latest().is_some_and(|latest| latest >= floor),
                None => true,
            })
            .filter_map(|upstream| upstream.head.finalized())
            .min()
    }

    /// What an attempt on `upstream` goes through, outermost first: its pause for a limit
    /// (started by an answer that says one was reached), its breaker (told what [`trips`]
    /// it), the group's timeout per attempt, the upstream's in-flight limit (waiting for a
    /// slot is within the timeout), its link.
    fn stack<'u>(
        &'u self,
        upstream: &'u Upstream,
    ) -> impl RpcService<Answer = LinkAnswer, Error = LinkError> + 'u {
        let retry = &self.retry;
        let breaking = Breaking::new(
            &upstream.breaker,
            TimeoutLayer::new(self.timeout).layer(upstream.service()),
            move |outcome: &Result<LinkAnswer, LinkError>| trips(outcome, retry),
        );
        Pausing::new(&upstream.pause, breaking, self.limit_pause, self.max_limit_pause)
    }

    /// The error of the limit of the upstream paused that comes back first, and how long
    /// until it does; `None` when none is paused.
    fn first_back(&self, now: Instant) -> Option<(ErrorObject<'static>, Duration)> {
        self.upstreams
            .iter()
            .filter_map(|upstream| Some((upstream.pause.remaining(now)?, upstream)))
            .min_by_key(|(remaining, _)| *remaining)
            .and_then(|(remaining, upstream)| Some((upstream.pause.error()?, remaining)))
    }

    /// One attempt on `upstream`, within the timeout; its outcome counted and told to the
    /// upstream's breaker.
    async fn attempt(&self, upstream: &Upstream, call: RpcCall<'_>) -> Attempt {
        bump(&upstream.counters.requests);
        metrics::attempt_started(upstream.name());
        let stopwatch = metrics::Stopwatch::start();
        // Only a hedge that reads them and the choice of the fastest need the latencies.
        let timing = (self.prefer_faster || self.hedge.is_some_and(|hedge| hedge.reads_latencies()))
            .then(|| Timing::start(&upstream.latencies));
        let outcome = classify(self.stack(upstream).call(call).await, &self.retry);
        if let Some(timing) = timing {
            timing.end(matches!(outcome, Attempt::Answered(_)));
        }
        count(upstream, call.method(), &outcome, stopwatch);
        outcome
    }

    /// One attempt of a batch on `upstream`, within the timeout, as one exchange: each
    /// entry's outcome (`None`: a notification sent), each call counted.
    async fn attempt_batch(&self, upstream: &Upstream, entries: &[BatchEntry<'_>]) -> Vec<Option<Attempt>> {
        for _ in entries.iter().filter(|entry| entry.is_call()) {
            bump(&upstream.counters.requests);
            metrics::attempt_started(upstream.name());
        }
        let stopwatch = metrics::Stopwatch::start();
        let outcomes = self.stack(upstream).batch(entries).await;
        outcomes
            .into_iter()
            .zip(entries)
            .map(|(outcome, entry)| {
                let attempt = classify(outcome?, &self.retry);
                if entry.is_call() {
                    count(upstream, entry.call().method(), &attempt, stopwatch);
                }
                Some(attempt)
            })
            .collect()
    }

    /// The most requests in one batch sent upstream: the least any upstream takes.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use rpcwire::proxy::{Upstream, UpstreamGroup};
    /// let group = UpstreamGroup::new(vec![
    ///     Upstream::address("http://a:1/").unwrap().with_max_batch(1000),
    ///     Upstream::address("http://b:1/").unwrap().with_max_batch(50),
    /// ]);
    /// assert_eq!(group.max_batch(), 50);
    /// # });
    /// ```
    pub fn max_batch(&self) -> usize {
        self.upstreams
            .iter()
            .map(|upstream| upstream.max_batch())
            .min()
            .unwrap_or(super::upstream::DEFAULT_MAX_BATCH)
    }

    /// Forwards the calls and notifications of a client's batch together: in batches of at
    /// most [`max_batch`](UpstreamGroup::max_batch) (sent at the same time), each to the next
    /// upstream free and not benched, retried whole on the next one when its exchange failed
    /// as the policy allows (for a batch that may have run, only when every method in it is
    /// marked safe). One outcome per entry, in their order (`None`: a notification sent).
    pub(crate) async fn call_batch(
        &self,
        entries: &[BatchEntry<'_>],
    ) -> Vec<BatchOutcome<LinkAnswer, ForwardError>> {
        let chunks: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = _> + Send + '_>>> = entries
            .chunks(self.max_batch())
            .map(|chunk| Box::pin(self.send_batch(chunk)) as _)
            .collect();
        crate::sync::join_in_order(chunks)
            .await
            .into_iter()
            .flatten()
            .collect()
    }

    /// Whether every upstream takes frames as they are (HTTP): a client's batch can then go
    /// on whole ([`call_batch_frame`](UpstreamGroup::call_batch_frame)).
    pub(crate) fn takes_frames(&self) -> bool {
        !self.upstreams.is_empty() && self.upstreams.iter().all(|upstream| upstream.takes_frames())
    }

    /// Forwards a client's whole batch `frame` as it came (the group [takes
    /// frames](UpstreamGroup::takes_frames)) to the next upstream free and not benched,
    /// retried whole as the policy allows (`safe`: every method in it is marked safe);
    /// answered [`LinkAnswer::Batch`], or one error answer for the whole batch.
    pub(crate) async fn call_batch_frame(
        &self,
        frame: &Bytes,
        safe: bool,
    ) -> Result<LinkAnswer, ForwardError> {
        let context = CallContext::new().with_frame(frame);
        let call = RpcCall::new(BATCH_METHOD, None).with_context(&context);
        let first = self.first_pick();
        match self.retrying(first, Some(safe)).call(call).await {
            Ok(answer) => Ok(answer),
            Err(missed) => missed.into_outcome(self),
        }
    }

    /// The group's attempts from the upstream `first` on, behind the retry layer: a call is
    /// sent again as [`retries_if`] says, its method's safety read from the policy (or `safe`,
    /// for a whole batch).
    fn retrying(
        &self,
        first: usize,
        safe: Option<bool>,
    ) -> impl RpcService<Answer = LinkAnswer, Error = Missed> + '_ {
        let attempts = Attempts {
            group: self,
            first,
            made: AtomicUsize::new(0),
        };
        let policy = &self.retry;
        Retrying::new(
            policy,
            &self.budget,
            attempts,
            move |call: &RpcCall<'_>, outcome: &_| {
                retries_if(safe.unwrap_or_else(|| policy.is_safe(call.method())), outcome)
            },
        )
    }

    /// One batch, retried as the policy allows: the group's attempts behind the retry layer.
    async fn send_batch(&self, entries: &[BatchEntry<'_>]) -> Vec<BatchOutcome<LinkAnswer, ForwardError>> {
        let first = self.first_pick();
        let outcomes = self.retrying(first, None).batch(entries).await;
        outcomes
            .into_iter()
            .map(|outcome| outcome.map(|outcome| outcome.or_else(|missed| missed.into_outcome(self))))
            .collect()
    }
}
