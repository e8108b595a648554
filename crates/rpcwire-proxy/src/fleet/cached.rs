//! The fleet's shared cache seen from one instance: a cacheable request joined to an identical
//! one under way here (the first asks the cache and the upstream and shares what it gets,
//! the others wait for it), and results kept in the cache — a single request's, or those among
//! a batch's answers — each under its cached answer's name.

use std::time::Duration;

use bytes::{Bytes, BytesMut};
use http::{Response, StatusCode};
use http_body_util::{BodyExt, Full};

use super::config::{Config, Fetched};
use super::limit::SharedLimiter;
use crate::batch_elements;
use crate::message::Message;
use crate::parse::Parsed;
use crate::sync::lock_unpoisoned;

/// How a cacheable request joined the identical ones under way on this instance.
pub(super) enum Joined<'a> {
    /// None was: this one asks the cache and the upstream, and shares what it gets.
    First(First<'a>),
    /// One was: this one waits for what it gets.
    Waiting(tokio::sync::watch::Receiver<Fetched>),
}

/// The first of identical requests under way: what it fetched goes to the others when it
/// shares it, or when it ends without (an error, a refusal, its client gone) they go on
/// themselves.
pub(super) struct First<'a> {
    config: &'a Config,
    name: String,
    sender: tokio::sync::watch::Sender<Fetched>,
}

impl First<'_> {
    pub(super) fn share(self, result: Option<Bytes>) {
        self.sender.send_replace(Some(result));
    }
}

impl Drop for First<'_> {
    fn drop(&mut self) {
        lock_unpoisoned(&self.config.fetching).remove(&self.name);
    }
}

/// Waits, when `joined` is waiting, for the result the first of the identical requests under
/// way fetched (`Ok`). When that one ends without reaching the upstream (refused, its client
/// gone), this one joins again: the first to do so goes on as the new first, the others wait
/// for it; when the first got an error, this one goes on by itself (`Err(None)`). `Err(Some)`:
/// this one is (or became) the first.
pub(super) async fn follow<'a>(
    config: &'a Config,
    name: &str,
    mut joined: Joined<'a>,
) -> Result<Bytes, Option<First<'a>>> {
    loop {
        let mut fetched = match joined {
            Joined::First(first) => return Err(Some(first)),
            Joined::Waiting(fetched) => fetched,
        };
        match fetched
            .wait_for(Option::is_some)
            .await
            .map(|fetched| fetched.clone().flatten())
        {
            Ok(Some(result)) => return Ok(result),
            Ok(None) => return Err(None),
            Err(_) => joined = join(config, name),
        }
    }
}

/// Joins the requests under way whose cached answer is `name`.
pub(super) fn join<'a>(config: &'a Config, name: &str) -> Joined<'a> {
    let mut fetching = lock_unpoisoned(&config.fetching);
    if let Some(fetched) = fetching.get(name) {
        return Joined::Waiting(fetched.clone());
    }
    let (sender, fetched) = tokio::sync::watch::channel(None);
    fetching.insert(name.to_owned(), fetched);
    Joined::First(First {
        config,
        name: name.to_owned(),
        sender,
    })
}

/// Keeps the result `response` carries (not an error; not over the size limit) under
/// `name` for `ttl`, written in a task of its own, and shares it with the identical requests
/// waiting for `first`; `response` as it was.
pub(super) async fn remember(
    config: &Config,
    limiter: &SharedLimiter,
    name: String,
    ttl: Option<Duration>,
    response: Response<Full<Bytes>>,
    first: Option<First<'_>>,
) -> Response<Full<Bytes>> {
    if response.status() != StatusCode::OK {
        // The upstream failed: the identical requests waiting go on by themselves.
        if let Some(first) = first {
            first.share(None);
        }
        return response;
    }
    let (head, body) = response.into_parts();
    let body = body
        .collect()
        .await
        .map(|collected| collected.to_bytes())
        .unwrap_or_default();
    let result = match crate::parse(&body) {
        Ok(Parsed::Single(Message::Response(answer))) if answer.error_object().is_none() => answer
            .result()
            .map(|result| crate::message::JsonBytes::slice_of(&body, result).into_bytes()),
        _ => None,
    };
    if let Some(first) = first {
        first.share(result.clone());
    }
    if let Some(result) = result {
        keep(config, limiter, name, ttl, result);
    }
    Response::from_parts(head, Full::new(body))
}

/// Writes `result` under `name` for `ttl` in a task of its own, unless it is over the size
/// limit.
pub(super) fn keep(
    config: &Config,
    limiter: &SharedLimiter,
    name: String,
    ttl: Option<Duration>,
    result: Bytes,
) {
    if result.len() <= config.max_cached {
        let limiter = limiter.clone();
        tokio::spawn(async move { limiter.write(&name, result, ttl).await });
    }
}

/// An answer with the id `id_text` (as the client wrote it) and the result `result`.
pub(super) fn success(id_text: &[u8], result: &[u8]) -> Bytes {
    let mut out = BytesMut::with_capacity(id_text.len() + result.len() + 36);
    out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
    out.extend_from_slice(id_text);
    out.extend_from_slice(br#","result":"#);
    out.extend_from_slice(result);
    out.extend_from_slice(b"}");
    out.freeze()
}

/// Caches the results among a batch's answers in `response` that answer `misses` (found by
/// their ids, as the client wrote them), each written in a task of its own; `response` as it
/// was.
pub(super) async fn remember_batch(
    config: &Config,
    limiter: &SharedLimiter,
    misses: Vec<(Bytes, String, Option<Duration>)>,
    response: Response<Full<Bytes>>,
) -> Response<Full<Bytes>> {
    if misses.is_empty() || response.status() != StatusCode::OK {
        return response;
    }
    let (head, body) = response.into_parts();
    let body = body
        .collect()
        .await
        .map(|collected| collected.to_bytes())
        .unwrap_or_default();
    for answer in batch_elements(&body).unwrap_or_default() {
        let Ok(Parsed::Single(Message::Response(response))) = crate::parse(&answer) else {
            continue;
        };
        let (Some(result), None) = (response.result(), response.error_object()) else {
            continue;
        };
        let Some(id) = crate::message::id_range_within(&answer, response.id()) else {
            continue;
        };
        let Some((_, name, ttl)) = misses
            .iter()
            .find(|(id_text, _, _)| id_text[..] == answer[id.clone()])
        else {
            continue;
        };
        let result = crate::message::JsonBytes::slice_of(&answer, result).into_bytes();
        keep(config, limiter, name.clone(), *ttl, result);
    }
    Response::from_parts(head, Full::new(body))
}
