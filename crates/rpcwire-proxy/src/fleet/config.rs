//! What a `FleetLayer` and its services share: the keys (read again from Redis when told
//! to), the limiter, the weights, the cache's methods and limits.

use std::sync::atomic::AtomicBool;
use std::sync::{Arc, RwLock};
use std::time::Duration;

use super::keys::ApiKeys;
use super::limit::SharedLimiter;
use crate::sync::read_unpoisoned;

/// The layer's settings and state.
#[derive(Debug)]
pub(super) struct Config {
    pub(super) keys: RwLock<Arc<ApiKeys>>,
    /// Where the keys are read again from, and how often: a Redis URL and hash.
    pub(super) refresh: Option<(super::RedisTarget, String, Duration)>,
    pub(super) refreshing: AtomicBool,
    pub(super) limiter: Option<SharedLimiter>,
    pub(super) weights: super::ConfigMap<String, u64>,
    pub(super) max_body: usize,
    /// What bodies are parsed with: the limits of the router behind, so that it takes the
    /// parse (`ParsedBody`) instead of parsing again.
    pub(super) parser: crate::parse::Parser,
    /// The methods whose answers are cached, each with how long (`None`: for good).
    pub(super) cached: super::ConfigMap<String, Option<Duration>>,
    pub(super) max_cached: usize,
}

impl Clone for Config {
    /// The settings, with the keys as they are now and no refresh started yet.
    fn clone(&self) -> Config {
        Config {
            keys: RwLock::new(read_unpoisoned(&self.keys).clone()),
            refresh: self.refresh.clone(),
            refreshing: AtomicBool::new(false),
            limiter: self.limiter.clone(),
            weights: self.weights.clone(),
            max_body: self.max_body,
            parser: crate::parse::Parser::new(*self.parser.limits()),
            cached: self.cached.clone(),
            max_cached: self.max_cached,
        }
    }
}
