//! A client's batch through the gateway: its elements forwarded together, one upstream batch
//! per group of upstreams, or — with plain, distinct ids, all to one group of HTTP upstreams —
//! sent on as it came and answered with the upstream's answer as written.

use std::collections::HashMap;

use bytes::Bytes;

use super::{method_bytes, null_result, text, Element, Gateway};
use crate::dispatch::{FallbackAnswer, FallbackBatchAnswer, FallbackCall};
use crate::forward_error::ForwardError;
use crate::group::UpstreamGroup;
use crate::id_slot::IdSlot;
use crate::link::LinkAnswer;
use crate::message::{ErrorObject, JsonBytes};
use crate::metrics;
use crate::middleware::{BatchEntry, BatchOutcome, RpcCall};
use crate::sync::bump;

impl Gateway {
    /// The elements of a client's batch the router does not serve itself, forwarded
    /// together: what the policy denies answered here, the rest sent on as one batch per
    /// group of upstreams they are routed to (split by the upstreams' batch limit), each
    /// answer with its client's id put back. One answer per element, in order.
    pub(super) async fn forward_batch(&self, elements: Vec<Element>) -> Vec<FallbackAnswer> {
        let mut answers: Vec<Option<FallbackAnswer>> = elements.iter().map(|_| None).collect();
        let mut groups: Vec<(&UpstreamGroup, Vec<usize>)> = Vec::new();
        for (index, element) in elements.iter().enumerate() {
            let method = text(&element.method);
            if !self.forwards(method) {
                bump(&self.counters.denied);
                metrics::denied(method);
                answers[index] = Some(FallbackAnswer::Error(ErrorObject::method_not_found(method)));
                continue;
            }
            let pool = self.pool(method);
            if element.id.is_some() && self.cache.is_some() {
                if let Some(result) = self.cached(method, element.params.as_ref()).await {
                    answers[index] = Some(FallbackAnswer::Result(result));
                    continue;
                }
            }
            match element.id {
                Some(_) => bump(&self.counters.forwarded),
                None => bump(&self.counters.notifications),
            }
            match groups.iter_mut().find(|(group, _)| std::ptr::eq(*group, pool)) {
                Some((_, indices)) => indices.push(index),
                None => groups.push((pool, vec![index])),
            }
        }
        let sent: Vec<std::pin::Pin<Box<dyn std::future::Future<Output = _> + Send + '_>>> = groups
            .iter()
            .map(|(pool, indices)| Box::pin(Gateway::send_batch(pool, &elements, indices)) as _)
            .collect();
        for ((pool, indices), outcomes) in groups.iter().zip(crate::sync::join_in_order(sent).await) {
            for (&index, outcome) in indices.iter().zip(outcomes) {
                let element = &elements[index];
                if let (Some(outcome), Some(id)) = (outcome, &element.id) {
                    if let Ok(answer) = &outcome {
                        self.keep(pool, text(&element.method), element.params.as_ref(), answer);
                    }
                    answers[index] = Some(self.answered(text(&element.method), outcome, id));
                }
            }
        }
        answers
            .into_iter()
            // A notification's answer is dropped.
            .map(|answer| {
                answer.unwrap_or_else(|| {
                    FallbackAnswer::Result(JsonBytes::from_validated(Bytes::from_static(b"null")))
                })
            })
            .collect()
    }

    /// A client's batch sent on whole, as it came (see [`Whole`]): the upstream's answer
    /// passed back whole when it answers every request once, in their order (as nodes do);
    /// otherwise each call gets the answer with its id, in the client's order, or -32011.
    pub(super) async fn forward_whole(&self, whole: Whole) -> FallbackBatchAnswer {
        for id in &whole.ids {
            bump(match id {
                Some(_) => &self.counters.forwarded,
                None => &self.counters.notifications,
            });
        }
        let pool = self.pool(text(&whole.method));
        let each = |answer: &dyn Fn(&Bytes) -> FallbackAnswer| {
            let answers = whole.ids.iter().map(|id| match id {
                Some(id) => answer(id),
                None => null_result(),
            });
            FallbackBatchAnswer::Each(answers.collect())
        };
        match pool.call_batch_frame(&whole.frame, whole.safe).await {
            Ok(LinkAnswer::Batch { answer, ids }) if answers_each(&whole.ids, &ids) => {
                FallbackBatchAnswer::Whole(answer)
            }
            Ok(LinkAnswer::Batch { answer, .. }) => {
                let by_id = answers_by_id(&answer);
                each(&|id| match by_id.get(&id[..]) {
                    Some(element) => FallbackAnswer::Response(element.clone()),
                    None => self.failure(&ForwardError::NoAnswer(
                        "the upstream's answer to the batch has no answer to this call".to_owned(),
                    )),
                })
            }
            // One error answer for the whole batch: every call's.
            Ok(LinkAnswer::Frame { answer, .. }) => each(&|id| FallbackAnswer::Response(answer.replace(id))),
            Ok(_) => each(&|_| {
                self.failure(&ForwardError::NoAnswer(
                    "the upstream answered a batch with a call's answer".to_owned(),
                ))
            }),
            Err(error) => each(&|_| self.failure(&error)),
        }
    }

    /// A client's batch that can go on whole, as it came: every element a message for the
    /// fallback, none denied, all routed to one group whose upstreams take frames and
    /// batches this large, at least one request, and the requests' ids plain (a whole number
    /// written as nodes write it again, or a string without escapes) and different — so that
    /// the upstream's answers are the client's, by id. `None` otherwise.
    pub(super) fn whole(&self, calls: &[FallbackCall<'_>]) -> Option<Whole> {
        let frame = calls.first()?.whole_batch()?;
        let method = calls[0].method();
        let pool = self.pool(method);
        if !pool.takes_frames() || pool.max_batch() < calls.len() {
            return None;
        }
        let mut ids = Vec::with_capacity(calls.len());
        let mut safe = true;
        for call in calls {
            if !self.forwards(call.method()) || !std::ptr::eq(self.pool(call.method()), pool) {
                return None;
            }
            safe &= pool.retry_policy().is_safe(call.method());
            let id = call.id_text();
            if id.as_ref().is_some_and(|id| !plain_id(id)) {
                return None;
            }
            ids.push(id);
        }
        if !each_once(&ids) {
            return None;
        }
        Some(Whole {
            frame: frame.clone(),
            method: method_bytes(&calls[0]),
            ids,
            safe,
        })
    }

    /// The elements at `indices` sent to `pool` as one batch.
    async fn send_batch(
        pool: &UpstreamGroup,
        elements: &[Element],
        indices: &[usize],
    ) -> Vec<BatchOutcome<LinkAnswer, ForwardError>> {
        let params: Vec<_> = indices
            .iter()
            .map(|&index| elements[index].params.as_ref().map(JsonBytes::to_raw_json))
            .collect();
        let entries: Vec<BatchEntry<'_>> = indices
            .iter()
            .zip(&params)
            .map(|(&index, params)| {
                let element = &elements[index];
                let call = RpcCall::new(text(&element.method), params.as_ref());
                match element.id {
                    Some(_) => BatchEntry::Call(call),
                    None => BatchEntry::Notify(call),
                }
            })
            .collect();
        pool.call_batch(&entries).await
    }
}

/// A client's batch going on whole, as it came.
pub(super) struct Whole {
    frame: Bytes,
    /// A method of it, naming the group it goes to.
    method: Bytes,
    /// Each element's id as written (`None`: a notification), in order.
    ids: Vec<Option<Bytes>>,
    /// Whether every method in it is marked safe to repeat.
    safe: bool,
}

/// Whether an id is written the same by any node that writes it again: a whole number with no
/// sign, fraction, exponent or leading zero and fewer than 16 digits, or a string without
/// escapes.
fn plain_id(id: &[u8]) -> bool {
    match id {
        [b'"', inner @ .., b'"'] => !inner.contains(&b'\\'),
        [b'0'] => true,
        [b'1'..=b'9', rest @ ..] => rest.len() < 15 && rest.iter().all(u8::is_ascii_digit),
        _ => false,
    }
}

/// Whether there is at least one id and each is there once: at once when they are numbers
/// that rise from one request to the next (the way clients number a batch), else sorted (a
/// duplicate is then beside its twin).
fn each_once(ids: &[Option<Bytes>]) -> bool {
    let mut last = None;
    let rising = ids.iter().flatten().all(|id| {
        // A plain id of digits has fewer than 16 of them: it fits.
        let number = std::str::from_utf8(id)
            .ok()
            .and_then(|text| text.parse::<u64>().ok());
        let rises = number.is_some() && last.map_or(true, |last| number > Some(last));
        last = number;
        rises
    });
    if rising {
        return last.is_some();
    }
    let mut sorted: Vec<&[u8]> = ids.iter().flatten().map(|id| &id[..]).collect();
    sorted.sort_unstable();
    !sorted.is_empty() && sorted.windows(2).all(|pair| pair[0] != pair[1])
}

/// Whether the answer's `answered` ids are the requests' (`ids`, notifications' `None`), in
/// their order: each request answered once, nothing else, the client's order kept.
fn answers_each(ids: &[Option<Bytes>], answered: &[Bytes]) -> bool {
    let mut requests = ids.iter().flatten();
    answered.iter().all(|id| requests.next() == Some(id)) && requests.next().is_none()
}

/// Each response of a batch answer by its id as written (the first, for an id answered twice).
fn answers_by_id(answer: &Bytes) -> HashMap<Bytes, Bytes> {
    let mut by_id = HashMap::new();
    for element in crate::batch_split::batch_elements(answer).unwrap_or_default() {
        let Some(message) = crate::parse::parse(&element)
            .ok()
            .and_then(|parsed| parsed.single())
        else {
            continue;
        };
        if let Some(slot) = IdSlot::find(&element, &message) {
            by_id.entry(slot.text().slice(slot.id_range())).or_insert(element);
        }
    }
    by_id
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_are_each_once_whether_they_rise_or_not() {
        let ids = |list: &[Option<&'static str>]| -> Vec<Option<Bytes>> {
            list.iter()
                .map(|id| id.map(|id| Bytes::from_static(id.as_bytes())))
                .collect()
        };
        for (list, once) in [
            (&[Some("1"), None, Some("2"), Some("10")][..], true),
            (&[Some("3"), Some("1"), Some("2")][..], true),
            (&[Some("1"), Some("\"a\""), Some("2")][..], true),
            (&[Some("1"), Some("2"), Some("2")][..], false),
            (&[Some("2"), Some("1"), Some("2")][..], false),
            (&[Some("\"a\""), Some("\"a\"")][..], false),
            (&[None, None][..], false),
            (&[][..], false),
        ] {
            assert_eq!(each_once(&ids(list)), once, "{list:?}");
        }
    }
}
