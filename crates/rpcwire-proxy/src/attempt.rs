//! How one attempt on an upstream ended ([`Attempt`]), read from the link's typed outcome
//! and the upstream's error code, never from an error object of our own: what the retries
//! ([`classify`]), the breaker ([`trips`]) and the counters ([`count`]) take.

use super::limit::{error_of, is_limit, limit_of, Limit};
use super::link::{LinkAnswer, LinkError, LinkErrorKind};
use super::metrics;
use super::retry::RetryPolicy;
use super::upstream::Upstream;
use crate::sync::bump;

/// How one attempt ended.
pub(crate) enum Attempt {
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

/// Whether `answer` is a result (not the upstream's error, nor an answer that breaks the
/// specification).
pub(crate) fn is_result(answer: &LinkAnswer) -> bool {
    match answer {
        LinkAnswer::Frame { error, .. } => error.is_none(),
        LinkAnswer::Remote(answer) => answer.result().is_some(),
        LinkAnswer::Batch { .. } => true,
        LinkAnswer::NonConforming { .. } => false,
    }
}

/// Counts an attempt's outcome on `upstream`, and reports it with its latency.
pub(crate) fn count(upstream: &Upstream, method: &str, outcome: &Attempt, stopwatch: metrics::Stopwatch) {
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
pub(crate) fn trips(outcome: &Result<LinkAnswer, LinkError>, policy: &RetryPolicy) -> bool {
    matches!(
        read(outcome, policy),
        Read::Retried | Read::NotReached | Read::NoAnswer
    )
}

/// What an attempt's outcome means for retrying it (see [`read`]).
pub(crate) fn classify(outcome: Result<LinkAnswer, LinkError>, policy: &RetryPolicy) -> Attempt {
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
