//! Rate limits: an upstream's word that it is over one — HTTP `429 Too Many Requests` (with
//! `Retry-After`), or an error answer with -32005 ("limit exceeded", EIP-1474) or 429 in the
//! body, as providers send inside HTTP 200 — read into the error its clients get ([`limit_of`]);
//! the [`Pause`] an upstream is left alone for it; and [`Pausing`], the middleware layer that
//! starts the pause and keeps requests away while it lasts.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::link::{LinkAnswer, LinkError, LinkErrorKind};
use crate::codes::LIMIT_EXCEEDED;
use crate::message::ErrorObject;
use crate::middleware::{BatchEntry, BatchOutcome, Readiness, RpcCall, RpcService};
use crate::sync::lock_unpoisoned;

/// How long an upstream over its limit is left alone when it does not say (no
/// `Retry-After`), by default.
pub const DEFAULT_LIMIT_PAUSE: Duration = Duration::from_secs(1);

/// The longest an upstream is left alone for a limit by default, whatever its `Retry-After`
/// says (then one request goes to it, and its answer pauses it again or not).
pub const DEFAULT_MAX_LIMIT_PAUSE: Duration = Duration::from_secs(60);

/// An upstream's refusal for a limit: the error its clients get (code -32005, the upstream's
/// message and data), and how long it asked to be left alone, if it said.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Limit {
    pub(crate) error: ErrorObject<'static>,
    pub(crate) retry_after: Option<Duration>,
}

/// The limit `outcome` says the upstream reached, if it says so: an HTTP 429 (with the
/// JSON-RPC error of its body, when it had one), or an error answer with code -32005 or 429 —
/// unless its message says the request itself was too large (`eth_getLogs`' "query returned
/// more than 10000 results" comes as -32005 too): that is the request's fault, not the
/// upstream's rate, and pausing the upstream for it would let one client's request bench it
/// for everyone.
pub(crate) fn limit_of(outcome: &Result<LinkAnswer, LinkError>) -> Option<Limit> {
    match outcome {
        Ok(answer) => {
            let error = error_of(answer).filter(|error| is_limit(error))?;
            Some(Limit {
                error: as_limit(error),
                retry_after: None,
            })
        }
        Err(error) => {
            let retry_after = match error.kind() {
                LinkErrorKind::Limited { retry_after } => retry_after,
                // A link of its own may say 429 as a status.
                LinkErrorKind::NoAnswer { status: Some(429) } => None,
                _ => return None,
            };
            let error = error
                .error()
                .map_or_else(|| ErrorObject::new(LIMIT_EXCEEDED, "limit exceeded"), as_limit);
            Some(Limit { error, retry_after })
        }
    }
}

/// Whether an upstream's error answer says it reached a limit: code -32005 or 429, and a
/// message not about the request being too large (see [`limit_of`]).
pub(crate) fn is_limit(error: &ErrorObject<'_>) -> bool {
    let code = error.code().code();
    (code == LIMIT_EXCEEDED || code == 429) && !about_the_request(error.message())
}

/// The upstream's error object in `answer`, if it is an error answer.
pub(crate) fn error_of(answer: &LinkAnswer) -> Option<&ErrorObject<'static>> {
    match answer {
        LinkAnswer::Frame { error, .. } => error.as_ref(),
        LinkAnswer::Remote(answer) => answer.error(),
        LinkAnswer::Batch { .. } | LinkAnswer::NonConforming { .. } => None,
    }
}

/// `error` with the code -32005: its message and data kept.
fn as_limit(error: &ErrorObject<'static>) -> ErrorObject<'static> {
    let limit = ErrorObject::new(LIMIT_EXCEEDED, error.message().to_owned());
    match error.data() {
        Some(data) => limit.with_raw_data(data.clone()),
        None => limit,
    }
}

/// Whether a "limit exceeded" message is about the request (too wide a range, too many
/// results, too large an answer) rather than the upstream's rate.
fn about_the_request(message: &str) -> bool {
    let message = message.to_ascii_lowercase();
    ["more than", "range", "too large", "too big", "size", "results"]
        .iter()
        .any(|words| message.contains(words))
}

/// When an upstream over its limit may be asked again, and what it last said: no request goes
/// to it before then.
#[derive(Debug, Default)]
pub(crate) struct Pause {
    /// Nanoseconds after [`epoch`] until which it is paused; 0 when it never was.
    until: AtomicU64,
    /// The error of the limit that paused it last.
    error: Mutex<Option<ErrorObject<'static>>>,
}

/// The instant pauses are counted from.
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

fn since_epoch(at: Instant) -> u64 {
    u64::try_from(at.saturating_duration_since(epoch()).as_nanos()).unwrap_or(u64::MAX)
}

impl Pause {
    /// Pauses the upstream for `wait` from `now` (never shortening a pause under way), for
    /// the limit whose error is `error`.
    pub(crate) fn start(&self, now: Instant, wait: Duration, error: ErrorObject<'static>) {
        *lock_unpoisoned(&self.error) = Some(error);
        let until = since_epoch(now + wait).max(1);
        self.until.fetch_max(until, Ordering::AcqRel);
    }

    /// How long the pause has yet to run at `now`; `None` when the upstream is not paused.
    pub(crate) fn remaining(&self, now: Instant) -> Option<Duration> {
        let until = self.until.load(Ordering::Acquire);
        if until == 0 {
            // Never paused, the usual case: no need to read the clock.
            return None;
        }
        let left = until.saturating_sub(since_epoch(now));
        (left > 0).then(|| Duration::from_nanos(left))
    }

    /// The error of the limit that paused it last.
    pub(crate) fn error(&self) -> Option<ErrorObject<'static>> {
        lock_unpoisoned(&self.error).clone()
    }
}

/// A service behind an upstream's [`Pause`]: [`Readiness::Down`] while it lasts, and
/// paused by every answer that says a limit was reached — for its `Retry-After`, else
/// `default`, never longer than `max`.
pub(crate) struct Pausing<'p, S> {
    pause: &'p Pause,
    inner: S,
    default: Duration,
    max: Duration,
}

impl<'p, S> Pausing<'p, S> {
    pub(crate) fn new(pause: &'p Pause, inner: S, default: Duration, max: Duration) -> Pausing<'p, S> {
        Pausing {
            pause,
            inner,
            default,
            max,
        }
    }
}

impl<S> Pausing<'_, S> {
    /// Pauses the upstream for `limit`: its `Retry-After`, else the default, at most the most.
    fn start(&self, limit: Limit) {
        let wait = limit.retry_after.unwrap_or(self.default).min(self.max);
        self.pause.start(Instant::now(), wait, limit.error);
    }
}

impl<S> RpcService for Pausing<'_, S>
where
    S: RpcService<Answer = LinkAnswer, Error = LinkError>,
{
    type Answer = LinkAnswer;
    type Error = LinkError;

    async fn call(&self, call: RpcCall<'_>) -> Result<LinkAnswer, LinkError> {
        let outcome = self.inner.call(call).await;
        if let Some(limit) = limit_of(&outcome) {
            self.start(limit);
        }
        outcome
    }

    async fn notify(&self, call: RpcCall<'_>) -> Result<(), LinkError> {
        self.inner.notify(call).await
    }

    /// The batch as one exchange: a limit in any entry's outcome pauses the upstream.
    async fn batch<'a>(&'a self, entries: &'a [BatchEntry<'a>]) -> Vec<BatchOutcome<LinkAnswer, LinkError>> {
        let outcomes = self.inner.batch(entries).await;
        if let Some(limit) = outcomes.iter().flatten().find_map(limit_of) {
            self.start(limit);
        }
        outcomes
    }

    fn readiness(&self) -> Readiness {
        match self.pause.remaining(Instant::now()) {
            Some(_) => Readiness::Down,
            None => self.inner.readiness(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::middleware::RemoteAnswer;

    fn remote_error(code: i64, message: &str) -> Result<LinkAnswer, LinkError> {
        let error = ErrorObject::new(code, message.to_owned()).with_raw_data(
            crate::message::RawJson::new(r#"{"see":"docs"}"#)
                .unwrap()
                .into_owned(),
        );
        Ok(LinkAnswer::Remote(RemoteAnswer::Error { error, text: None }))
    }

    #[test]
    fn limits_are_read_from_429s_and_limit_codes_but_not_from_requests_too_large() {
        let limit = limit_of(&remote_error(-32005, "project ID request rate exceeded")).unwrap();
        assert_eq!(limit.error.code().code(), LIMIT_EXCEEDED);
        assert_eq!(limit.error.message(), "project ID request rate exceeded");
        assert_eq!(limit.error.data().unwrap().get(), r#"{"see":"docs"}"#);
        assert_eq!(limit.retry_after, None);
        // A provider's 429 in the body becomes -32005, message and data kept.
        let limit = limit_of(&remote_error(429, "compute units per second capacity exceeded")).unwrap();
        assert_eq!(limit.error.code().code(), LIMIT_EXCEEDED);
        assert!(limit_of(&remote_error(-32005, "query returned more than 10000 results")).is_none());
        assert!(limit_of(&remote_error(-32000, "execution reverted")).is_none());

        let wait = Some(Duration::from_secs(7));
        let refused = LinkError::new(LinkErrorKind::Limited { retry_after: wait }, "HTTP status 429");
        let limit = limit_of(&Err(refused.clone())).unwrap();
        assert_eq!(
            (limit.error.message(), limit.retry_after),
            ("limit exceeded", wait)
        );
        let said = ErrorObject::new(-32005, "daily request count exceeded");
        let limit = limit_of(&Err(refused.with_error(said))).unwrap();
        assert_eq!(limit.error.message(), "daily request count exceeded");
        let other = LinkError::new(LinkErrorKind::NoAnswer { status: Some(503) }, "HTTP status 503");
        assert!(limit_of(&Err(other)).is_none());
        let status = LinkError::new(LinkErrorKind::NoAnswer { status: Some(429) }, "429");
        assert_eq!(limit_of(&Err(status)).unwrap().retry_after, None);
    }

    #[test]
    fn a_pause_runs_its_time_and_is_never_shortened() {
        let pause = Pause::default();
        let now = epoch() + Duration::from_secs(1);
        assert_eq!(pause.remaining(now), None);
        pause.start(
            now,
            Duration::from_secs(10),
            ErrorObject::new(LIMIT_EXCEEDED, "first"),
        );
        pause.start(
            now,
            Duration::from_secs(1),
            ErrorObject::new(LIMIT_EXCEEDED, "second"),
        );
        assert_eq!(pause.remaining(now), Some(Duration::from_secs(10)));
        assert_eq!(pause.error().unwrap().message(), "second");
        assert_eq!(pause.remaining(now + Duration::from_secs(10)), None);
    }
}
