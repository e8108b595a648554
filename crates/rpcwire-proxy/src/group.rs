//! `UpstreamGroup`: forwards requests to upstreams — the next one free and not benched — with a
//! timeout per attempt and retries on the next upstream where the policy allows them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;

use super::breaker::Breaking;
use super::forward_error::ForwardError;
use super::limit::{
    error_of, is_limit, limit_of, Limit, Pausing, DEFAULT_LIMIT_PAUSE, DEFAULT_MAX_LIMIT_PAUSE,
};
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
    next: AtomicUsize,
}

/// How one attempt ended.
enum Attempt {
    /// The upstream answered: a result, its error object, or its whole answer frame (either).
    Answered(LinkAnswer),
    /// The request was not forwarded: never reached the upstream, or could not be written.
    NotReached(String),
    /// The request may have reached the upstream and no usable answer came; `answer` is the
    /// upstream's error answer when it gave one (a "busy" code): what the caller gets, as it
    /// came, when no other attempt does better.
    NoAnswer {
        reason: String,
        answer: Option<LinkAnswer>,
    },
    /// The upstream is there but answered without a JSON-RPC answer (an HTTP error status
    /// other than a busy one): not sent again.
    Refused(String),
    /// The params cannot be sent anywhere.
    BadParams(String),
    /// The upstream refused it for a limit it reached (an HTTP 429, a -32005 answer): it did
    /// not run there, and the upstream is paused.
    Limited(Limit),
}

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

/// Whether a call whose attempt ended so is worth another attempt: one that never reached
/// its upstream or was refused for a limit (it did not run) always; one that may have
/// reached it (no answer, a busy answer) only for a method the policy marks safe to repeat.
fn retries(policy: &RetryPolicy, call: &RpcCall<'_>, outcome: &Result<LinkAnswer, Missed>) -> bool {
    retries_if(policy.is_safe(call.method()), outcome)
}

/// [`retries`], for a call that is `safe` to repeat or not.
fn retries_if(safe: bool, outcome: &Result<LinkAnswer, Missed>) -> bool {
    match outcome {
        Err(Missed::On(_, Attempt::NotReached(_) | Attempt::Limited(_))) => true,
        Err(Missed::On(_, Attempt::NoAnswer { .. })) => safe,
        _ => false,
    }
}

/// Whether `answer` is a result (not the upstream's error, nor an answer that breaks the
/// specification).
fn is_result(answer: &LinkAnswer) -> bool {
    match answer {
        LinkAnswer::Frame { error, .. } => error.is_none(),
        LinkAnswer::Remote(answer) => answer.result().is_some(),
        LinkAnswer::Batch { .. } => true,
        LinkAnswer::NonConforming { .. } => false,
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
        match self.send(None, method, params).await? {
            LinkAnswer::Remote(RemoteAnswer::Result(result))
            | LinkAnswer::Frame {
                result: Some(result), ..
            } => Ok(result),
            LinkAnswer::Remote(RemoteAnswer::Error { error, .. })
            | LinkAnswer::Frame {
                error: Some(error), ..
            } => Err(ForwardError::Remote(error)),
            LinkAnswer::NonConforming { reason, error, .. } => {
                Err(ForwardError::NonConforming { reason, error })
            }
            // A frame is a result or an error (`response_to_gateway`); a batch answers a batch.
            LinkAnswer::Frame { .. } | LinkAnswer::Batch { .. } => Err(ForwardError::NoAnswer(
                "an answer with neither a result nor an error".to_owned(),
            )),
        }
    }

    /// Forwards `frame`, a request for `method` with `params` whose id is the gateway's
    /// ([`GATEWAY_ID`](super::upstream::GATEWAY_ID)), as it is to upstreams that take frames (HTTP) and gives their whole
    /// answer; to the others (behind a `Peer`) the call is made and its result given. Same
    /// retries, timeouts and breakers as [`call`](UpstreamGroup::call).
    pub(crate) async fn call_frame(
        &self,
        frame: &Bytes,
        method: &str,
        params: Option<&JsonBytes>,
    ) -> Result<LinkAnswer, ForwardError> {
        let params = params.map(JsonBytes::to_raw_json);
        self.send(Some(frame), method, params.as_ref()).await
    }

    /// A call (or a forwarded frame), on the next upstream free and not benched, retried as
    /// the policy allows: the group's attempts (each on the upstream [`pick`] chooses,
    /// through [`stack`]) behind the retry layer.
    async fn send(
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
        let attempts = Attempts {
            group: self,
            first: self.next.fetch_add(1, Ordering::Relaxed),
            made: AtomicUsize::new(0),
        };
        let policy = &self.retry;
        let retrying = Retrying::new(
            policy,
            &self.budget,
            attempts,
            |call: &RpcCall<'_>, outcome: &_| retries(policy, call, outcome),
        );
        match retrying.call(call).await {
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
            first: self.next.fetch_add(1, Ordering::Relaxed),
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
    /// benched and has a free slot; else the first not benched (the attempt waits for a
    /// slot); `None` when every one is benched.
    fn pick(&self, index: usize) -> Option<Arc<Upstream>> {
        let count = self.upstreams.len();
        if count == 0 {
            return None;
        }
        let in_turn = (0..count).map(|step| &self.upstreams[index.wrapping_add(step) % count]);
        let mut waiting = None;
        for upstream in in_turn {
            match self.stack(upstream).readiness() {
                Readiness::Ready => return Some(upstream.clone()),
                Readiness::Busy => {
                    waiting.get_or_insert_with(|| upstream.clone());
                }
                Readiness::Down => {}
            }
        }
        waiting
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
        let outcome = classify(self.stack(upstream).call(call).await, &self.retry);
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
        let attempts = Attempts {
            group: self,
            first: self.next.fetch_add(1, Ordering::Relaxed),
            made: AtomicUsize::new(0),
        };
        let retrying = Retrying::new(
            &self.retry,
            &self.budget,
            attempts,
            move |_: &RpcCall<'_>, outcome: &_| retries_if(safe, outcome),
        );
        match retrying.call(call).await {
            Ok(answer) => Ok(answer),
            Err(missed) => missed.into_outcome(self),
        }
    }

    /// One batch, retried as the policy allows: the group's attempts behind the retry layer.
    async fn send_batch(&self, entries: &[BatchEntry<'_>]) -> Vec<BatchOutcome<LinkAnswer, ForwardError>> {
        let attempts = Attempts {
            group: self,
            first: self.next.fetch_add(1, Ordering::Relaxed),
            made: AtomicUsize::new(0),
        };
        let policy = &self.retry;
        let retrying = Retrying::new(
            policy,
            &self.budget,
            attempts,
            |call: &RpcCall<'_>, outcome: &_| retries(policy, call, outcome),
        );
        let outcomes = retrying.batch(entries).await;
        outcomes
            .into_iter()
            .map(|outcome| outcome.map(|outcome| outcome.or_else(|missed| missed.into_outcome(self))))
            .collect()
    }
}

/// Counts an attempt's outcome on `upstream`, and reports it with its latency.
fn count(upstream: &Upstream, method: &str, outcome: &Attempt, stopwatch: metrics::Stopwatch) {
    let counters = &upstream.counters;
    let kind = match &outcome {
        Attempt::Answered(answer) if is_result(answer) => {
            bump(&counters.answered);
            "answered"
        }
        Attempt::Answered(_) | Attempt::BadParams(_) | Attempt::Refused(_) => {
            bump(&counters.upstream_errors);
            "upstream_error"
        }
        Attempt::NotReached(_) => {
            bump(&counters.not_reached);
            "not_reached"
        }
        Attempt::NoAnswer { .. } => {
            bump(&counters.no_answer);
            "no_answer"
        }
        Attempt::Limited(_) => {
            bump(&counters.limited);
            "limited"
        }
    };
    metrics::attempt_ended(upstream.name(), method, kind, stopwatch);
}

/// What an attempt's outcome is, read from the typed [`LinkError`] and the upstream's error
/// code, never from an error object of our own: the one reading both the breaker
/// ([`trips`]) and the retries ([`classify`]) take.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Read {
    /// An answer to pass on.
    Answered,
    /// An answer with an error code the policy retries.
    Retried,
    /// Refused for a limit the upstream reached (a 429, a -32005 answer): not run there.
    Limited,
    /// Never reached the upstream.
    NotReached,
    /// May have reached it; no answer (a reset, no answer in time, a busy HTTP status).
    NoAnswer,
    /// An HTTP error status other than a busy one.
    Refused,
    /// The params cannot be sent.
    BadParams,
}

fn read(outcome: &Result<LinkAnswer, LinkError>, policy: &RetryPolicy) -> Read {
    match outcome {
        Ok(answer) => match error_of(answer) {
            Some(error) if is_limit(error) => Read::Limited,
            Some(error) if policy.retries_code(error.code().code()) => Read::Retried,
            _ => Read::Answered,
        },
        Err(error) => match error.kind() {
            LinkErrorKind::NotReached => Read::NotReached,
            LinkErrorKind::Params => Read::BadParams,
            LinkErrorKind::TimedOut { .. } => Read::NoAnswer,
            LinkErrorKind::Limited { .. } | LinkErrorKind::NoAnswer { status: Some(429) } => Read::Limited,
            LinkErrorKind::NoAnswer { status } if busy(status) => Read::NoAnswer,
            LinkErrorKind::NoAnswer { .. } => Read::Refused,
        },
    }
}

/// Whether an attempt's outcome counts against the upstream's breaker: the upstream was not
/// there, gave no usable answer, or an error the policy retries.
fn trips(outcome: &Result<LinkAnswer, LinkError>, policy: &RetryPolicy) -> bool {
    matches!(
        read(outcome, policy),
        Read::Retried | Read::NotReached | Read::NoAnswer
    )
}

/// What an attempt's outcome means for retrying it (see [`read`]).
fn classify(outcome: Result<LinkAnswer, LinkError>, policy: &RetryPolicy) -> Attempt {
    let read = read(&outcome, policy);
    if read == Read::Limited {
        if let Some(limit) = limit_of(&outcome) {
            return Attempt::Limited(limit);
        }
    }
    match outcome {
        Ok(answer) if read == Read::Retried => Attempt::NoAnswer {
            reason: error_of(&answer)
                .map(|error| error.message().to_owned())
                .unwrap_or_default(),
            answer: Some(answer),
        },
        Ok(answer) => Attempt::Answered(answer),
        Err(error) => {
            let reason = error.reason().to_owned();
            match read {
                Read::NotReached => Attempt::NotReached(reason),
                Read::BadParams => Attempt::BadParams(reason),
                Read::NoAnswer => Attempt::NoAnswer { reason, answer: None },
                _ => Attempt::Refused(reason),
            }
        }
    }
}

/// Whether an exchange without an answer may have met a busy or passing fault (no status: a
/// reset or no answer in time; 502, 503, 504) rather than a refusal. (A 429 is a limit:
/// [`LinkErrorKind::Limited`].)
fn busy(status: Option<u16>) -> bool {
    matches!(status, None | Some(502..=504))
}
