//! `SharedLimiter`: a rate limit per API key shared by every instance of a fleet, kept in
//! Redis by one atomic script per request, with a local stand-in while Redis is down.

use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use bytes::Bytes;
use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use super::gcra::{interval_and_tolerance, LocalLimiter};
use super::keys::ApiKey;
use super::scripts::{CHARGE_SCRIPT, GCRA_MANY_SCRIPT, GCRA_SCRIPT, HEARTBEAT_SCRIPT};
use crate::sync::lock_unpoisoned;

/// How often an instance says it is alive, and how long it counts as alive after.
const HEARTBEAT: Duration = Duration::from_secs(1);
const ALIVE_FOR: Duration = Duration::from_secs(3);

/// What a limiter does when Redis does not answer in time.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OnRedisDown {
    /// A local limiter per instance takes over, at each key's rate divided by the instances
    /// of the fleet (those Redis last counted alive, each saying so every second; `instances`
    /// until it has counted), so that the fleet together stays near the rate.
    Open {
        /// How many instances share each key's rate until Redis has counted them.
        instances: u32,
    },
    /// Requests are refused ([`Decision::Unavailable`]) until Redis answers again.
    Closed,
}

/// How a [`SharedLimiter`] works.
#[derive(Clone, Debug)]
pub struct LimitConfig {
    /// Before each key's digest (hex) in Redis.
    pub prefix: String,
    /// How long a request waits for Redis before the limiter decides without it.
    pub timeout: Duration,
    /// What to do then.
    pub on_down: OnRedisDown,
    /// After Redis failed to answer, how long requests are decided without asking it (so
    /// that not every request waits for the timeout while Redis is down); then the next
    /// request asks it again.
    pub retry_after: Duration,
    /// Keys allowed at least this many requests a second are charged in Redis after the
    /// fact, not one round trip per request: a request of such a key is let through at once
    /// unless Redis last said the key is over its rate, and what the instance let through is
    /// charged to the key every [`charge_every`](LimitConfig::charge_every), all keys in one
    /// round trip; past twice the key's rate over `charge_every`, the next requests until the
    /// charge ask Redis one by one. An instance may so let through, past the rate, at most
    /// that allowance (1% of a second's worth at the default 5 ms) before it learns the key
    /// is over; that is charged too, so the key is then refused for as long. `None`: every
    /// request asks Redis.
    pub charge_after_above: Option<f64>,
    /// How often the requests let through of the keys charged after the fact are charged.
    pub charge_every: Duration,
}

impl Default for LimitConfig {
    /// `rpcwire:limit:`, 50 ms, open with one instance, Redis asked again after 1 s; keys of
    /// 1,000 requests a second or more charged after the fact, every 5 ms (so at most
    /// 1/200 of a second's worth past the rate, per instance).
    fn default() -> LimitConfig {
        LimitConfig {
            prefix: "rpcwire:limit:".to_owned(),
            timeout: Duration::from_millis(50),
            on_down: OnRedisDown::Open { instances: 1 },
            retry_after: Duration::from_secs(1),
            charge_after_above: Some(1000.0),
            charge_every: Duration::from_millis(5),
        }
    }
}

/// What the limiter decided about one request.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Decision {
    /// Let through; `shared` when Redis decided (else the local stand-in).
    Allowed {
        /// Whether Redis decided.
        shared: bool,
    },
    /// Over the key's rate: may be sent again after `retry_after`.
    Limited {
        /// How long until it would be let through.
        retry_after: Duration,
    },
    /// Redis did not answer in time and the limiter is closed then.
    Unavailable,
}

/// Counters of a [`SharedLimiter`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LimitStats {
    /// Requests Redis decided on.
    pub shared: u64,
    /// Requests decided without Redis (the local stand-in, or refused when closed).
    pub without_redis: u64,
    /// Requests over their key's rate.
    pub limited: u64,
    /// Redis calls that failed or did not answer in time.
    pub redis_errors: u64,
    /// Round trips to Redis for decisions, charges and cache writes (the heartbeat apart).
    pub round_trips: u64,
}

/// A rate limit per [`ApiKey`] that every instance of a fleet shares through Redis: a burst
/// of one second's worth, then the key's rate, across all of them. A request costs one
/// Redis round trip (an atomic script, `EVALSHA`), bounded by the timeout — or, for a key of
/// a high rate ([`LimitConfig::charge_after_above`]), none: it is charged after the fact with
/// the others, every few ms in one round trip. Past the timeout the
/// limiter decides without Redis ([`OnRedisDown`]) and goes back to Redis as soon as it
/// answers again (the connection is made again in the background; no restart). Redis may be
/// down when the limiter is made.
///
/// ```no_run
/// # #[tokio::main(flavor = "current_thread")]
/// # async fn main() -> Result<(), Box<dyn std::error::Error>> {
/// use rpcwire::proxy::fleet::{ApiKeys, Decision, LimitConfig, SharedLimiter};
/// let keys = ApiKeys::parse("k3y 100")?;
/// let limiter = SharedLimiter::new("redis://127.0.0.1:6379/", LimitConfig::default())?;
/// match limiter.check(keys.find("k3y").unwrap(), 1).await {
///     Decision::Allowed { .. } => { /* forward it */ }
///     Decision::Limited { retry_after } => { /* 429, Retry-After */ let _ = retry_after; }
///     Decision::Unavailable => { /* 503 */ }
/// }
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct SharedLimiter {
    inner: Arc<Inner>,
}

struct Inner {
    client: redis::Client,
    script: redis::Script,
    config: LimitConfig,
    manager: Mutex<Option<ConnectionManager>>,
    connecting: AtomicBool,
    /// Until when Redis is not asked (it failed to answer).
    down_until: Mutex<Option<std::time::Instant>>,
    /// This instance's name among the live ones, and how many Redis last counted (0: not
    /// yet).
    instance: String,
    live: AtomicU32,
    heartbeat: redis::Script,
    many: redis::Script,
    charge: redis::Script,
    /// The keys charged after the fact: what is to be charged, and until when each is over.
    owed: Mutex<super::ConfigMap<[u8; 32], Owed>>,
    /// Wakes the task that charges them (started with the first).
    charging: tokio::sync::Notify,
    charger_started: AtomicBool,
    local: LocalLimiter,
    shared: AtomicU64,
    without_redis: AtomicU64,
    limited: AtomicU64,
    redis_errors: AtomicU64,
    round_trips: AtomicU64,
}

/// A key charged after the fact.
struct Owed {
    /// Its state's name in Redis, its emission interval and tolerance (µs).
    name: String,
    interval: u64,
    tolerance: u64,
    /// Let through and not charged yet.
    cost: u64,
    /// How much may be let through between two charges (twice the key's rate over
    /// `charge_every`, at least 1); past it, each request asks Redis.
    allowance: u64,
    /// Until when Redis last said it is over its rate.
    over_until: Option<Instant>,
}

impl std::fmt::Debug for SharedLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedLimiter")
            .field("config", &self.inner.config)
            .field("stats", &self.stats())
            .finish()
    }
}

impl SharedLimiter {
    /// A limiter on `redis` (a [`RedisTarget`](super::RedisTarget): `redis://HOST:PORT/`, `rediss://…`); an error only for a URL that
    /// is not one (Redis is connected to on the first check, and again whenever needed).
    ///
    /// ```
    /// use rpcwire::proxy::fleet::{LimitConfig, SharedLimiter};
    /// assert!(SharedLimiter::new("redis://127.0.0.1:6379/", LimitConfig::default()).is_ok());
    /// assert!(SharedLimiter::new("not a url", LimitConfig::default()).is_err());
    /// ```
    pub fn new(
        redis: impl Into<super::RedisTarget>,
        config: LimitConfig,
    ) -> Result<SharedLimiter, redis::RedisError> {
        Ok(SharedLimiter {
            inner: Arc::new(Inner {
                client: redis.into().client()?,
                script: redis::Script::new(GCRA_SCRIPT),
                config,
                manager: Mutex::new(None),
                connecting: AtomicBool::new(false),
                down_until: Mutex::new(None),
                instance: instance_name(),
                live: AtomicU32::new(0),
                heartbeat: redis::Script::new(HEARTBEAT_SCRIPT),
                many: redis::Script::new(GCRA_MANY_SCRIPT),
                charge: redis::Script::new(CHARGE_SCRIPT),
                owed: Mutex::default(),
                charging: tokio::sync::Notify::new(),
                charger_started: AtomicBool::new(false),
                local: LocalLimiter::new(),
                shared: AtomicU64::new(0),
                without_redis: AtomicU64::new(0),
                limited: AtomicU64::new(0),
                redis_errors: AtomicU64::new(0),
                round_trips: AtomicU64::new(0),
            }),
        })
    }

    /// Decides on a request of `key` that costs `cost` (1 for most methods; more for a
    /// heavy one).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::time::Duration;
    /// use rpcwire::proxy::fleet::{ApiKeys, Decision, LimitConfig, OnRedisDown, SharedLimiter};
    /// let keys = ApiKeys::parse("k3y 1").unwrap();
    /// // No Redis listens on port 9: the local stand-in decides, at the key's whole rate.
    /// let config = LimitConfig { timeout: Duration::from_millis(20), ..LimitConfig::default() };
    /// let limiter = SharedLimiter::new("redis://127.0.0.1:9/", config).unwrap();
    /// let key = keys.find("k3y").unwrap();
    /// assert_eq!(limiter.check(key, 1).await, Decision::Allowed { shared: false });
    /// assert!(matches!(limiter.check(key, 1).await, Decision::Limited { .. }));
    /// # });
    /// ```
    pub async fn check(&self, key: &ApiKey, cost: u64) -> Decision {
        self.check_and_read(key, cost, None).await.0
    }

    /// [`check`](SharedLimiter::check), and when the request is let through by Redis, the
    /// value of `cached` (a cached answer's name, see [`write`](SharedLimiter::write)) read in
    /// the same round trip.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use rpcwire::proxy::fleet::{ApiKeys, LimitConfig, SharedLimiter};
    /// let keys = ApiKeys::parse("k3y 100").unwrap();
    /// let limiter = SharedLimiter::new("redis://127.0.0.1:6379/", LimitConfig::default()).unwrap();
    /// let (decision, cached) = limiter.check_and_read(keys.find("k3y").unwrap(), 1, Some("rpcwire:cache:eth_chainId")).await;
    /// # let _ = (decision, cached);
    /// # }
    /// ```
    pub async fn check_and_read(
        &self,
        key: &ApiKey,
        cost: u64,
        cached: Option<&str>,
    ) -> (Decision, Option<Bytes>) {
        let inner = &self.inner;
        if cached.is_none()
            && inner
                .config
                .charge_after_above
                .is_some_and(|above| key.rate() >= above)
        {
            if let Some(decision) = self.charge_after(key, cost) {
                return (decision, None);
            }
        }
        if let Some(mut connection) = self.connection() {
            let (interval, tolerance) = interval_and_tolerance(key.rate());
            let name = self.name_of(key);
            let mut invocation = inner.script.key(name);
            if let Some(cached) = cached {
                invocation.key(cached);
            }
            invocation.arg(interval).arg(tolerance).arg(cost);
            inner.round_trips.fetch_add(1, Ordering::Relaxed);
            let answered = tokio::time::timeout(
                inner.config.timeout,
                invocation.invoke_async::<(i64, i64, Option<Vec<u8>>)>(&mut connection),
            )
            .await;
            match answered {
                Ok(Ok((allowed, wait, value))) => {
                    inner.shared.fetch_add(1, Ordering::Relaxed);
                    if allowed == 1 {
                        return (Decision::Allowed { shared: true }, value.map(Bytes::from));
                    }
                    inner.limited.fetch_add(1, Ordering::Relaxed);
                    let retry_after = Duration::from_micros(wait.max(0) as u64);
                    return (Decision::Limited { retry_after }, None);
                }
                Ok(Err(_)) | Err(_) => {
                    self.redis_failed(true);
                }
            }
        }
        let decision = self.decide_locally(key, cost);
        (decision, None)
    }

    /// Keeps `value` under `name` for `ttl` (`None`: until Redis drops it), for every
    /// instance's [`check_and_read`](SharedLimiter::check_and_read); `false` when Redis did not
    /// take it in time.
    ///
    /// ```no_run
    /// # #[tokio::main(flavor = "current_thread")]
    /// # async fn main() {
    /// use rpcwire::proxy::fleet::{LimitConfig, SharedLimiter};
    /// let limiter = SharedLimiter::new("redis://127.0.0.1:6379/", LimitConfig::default()).unwrap();
    /// limiter.write("rpcwire:cache:eth_chainId", bytes::Bytes::from_static(b"\"0x1\""), None).await;
    /// # }
    /// ```
    pub async fn write(&self, name: &str, value: Bytes, ttl: Option<Duration>) -> bool {
        let Some(mut connection) = self.connection() else {
            return false;
        };
        let mut command = redis::cmd("SET");
        command.arg(name).arg(value.as_ref());
        if let Some(ttl) = ttl {
            command.arg("PX").arg(ttl.as_millis().max(1) as u64);
        }
        self.inner.round_trips.fetch_add(1, Ordering::Relaxed);
        let written = tokio::time::timeout(
            self.inner.config.timeout,
            command.query_async::<()>(&mut connection),
        )
        .await;
        let ok = matches!(written, Ok(Ok(())));
        if !ok {
            self.redis_failed(false);
        }
        ok
    }

    /// The values under `names` (each written by [`write`](SharedLimiter::write), `None` when
    /// there is none), read in one round trip; all `None` when Redis does not answer in time
    /// (or is not asked, after it failed).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::time::Duration;
    /// use rpcwire::proxy::fleet::{LimitConfig, SharedLimiter};
    /// let config = LimitConfig { timeout: Duration::from_millis(20), ..LimitConfig::default() };
    /// let limiter = SharedLimiter::new("redis://127.0.0.1:9/", config).unwrap(); // no Redis
    /// assert_eq!(limiter.read(&["rpcwire:cache:a", "rpcwire:cache:b"]).await, [None, None]);
    /// # });
    /// ```
    pub async fn read(&self, names: &[&str]) -> Vec<Option<Bytes>> {
        let nothing = || vec![None; names.len()];
        if names.is_empty() {
            return nothing();
        }
        let Some(mut connection) = self.connection() else {
            return nothing();
        };
        let mut command = redis::cmd("MGET");
        for name in names {
            command.arg(*name);
        }
        self.inner.round_trips.fetch_add(1, Ordering::Relaxed);
        let read = tokio::time::timeout(
            self.inner.config.timeout,
            command.query_async::<Vec<Option<Vec<u8>>>>(&mut connection),
        )
        .await;
        match read {
            Ok(Ok(values)) if values.len() == names.len() => {
                values.into_iter().map(|value| value.map(Bytes::from)).collect()
            }
            _ => {
                self.redis_failed(false);
                nothing()
            }
        }
    }

    /// Decides on several requests of `key` at once (a batch's elements, `costs` each) in one
    /// Redis round trip: each let through while the key's rate allows, in order.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::time::Duration;
    /// use rpcwire::proxy::fleet::{ApiKeys, Decision, LimitConfig, SharedLimiter};
    /// let keys = ApiKeys::parse("k3y 2").unwrap();
    /// let config = LimitConfig { timeout: Duration::from_millis(20), ..LimitConfig::default() };
    /// let limiter = SharedLimiter::new("redis://127.0.0.1:9/", config).unwrap(); // no Redis: local
    /// let decisions = limiter.check_many(keys.find("k3y").unwrap(), &[1, 1, 1]).await;
    /// assert_eq!(decisions[..2], [Decision::Allowed { shared: false }; 2]);
    /// assert!(matches!(decisions[2], Decision::Limited { .. }));
    /// # });
    /// ```
    pub async fn check_many(&self, key: &ApiKey, costs: &[u64]) -> Vec<Decision> {
        let cached = vec![None; costs.len()];
        let decided = self.check_many_and_read(key, costs, &cached).await;
        decided.into_iter().map(|(decision, _)| decision).collect()
    }

    /// [`check_many`](SharedLimiter::check_many), and for each request let through by Redis
    /// that has a cached answer's name in `cached` (one per request, `None` for most), the
    /// value under it, read in the same round trip.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::time::Duration;
    /// use rpcwire::proxy::fleet::{ApiKeys, Decision, LimitConfig, SharedLimiter};
    /// let keys = ApiKeys::parse("k3y 2").unwrap();
    /// let config = LimitConfig { timeout: Duration::from_millis(20), ..LimitConfig::default() };
    /// let limiter = SharedLimiter::new("redis://127.0.0.1:9/", config).unwrap(); // no Redis: local
    /// let decided = limiter.check_many_and_read(keys.find("k3y").unwrap(), &[1, 1], &[Some("rpcwire:cache:x"), None]).await;
    /// assert_eq!(decided, [(Decision::Allowed { shared: false }, None), (Decision::Allowed { shared: false }, None)]);
    /// # });
    /// ```
    pub async fn check_many_and_read(
        &self,
        key: &ApiKey,
        costs: &[u64],
        cached: &[Option<&str>],
    ) -> Vec<(Decision, Option<Bytes>)> {
        let inner = &self.inner;
        if let Some(mut connection) = self.connection() {
            let (interval, tolerance) = interval_and_tolerance(key.rate());
            let mut invocation = inner.many.key(self.name_of(key));
            invocation.arg(interval).arg(tolerance);
            let mut keys = 1;
            for (index, cost) in costs.iter().enumerate() {
                let at = match cached.get(index).copied().flatten() {
                    Some(name) => {
                        invocation.key(name);
                        keys += 1;
                        keys
                    }
                    None => 0,
                };
                invocation.arg(*cost).arg(at);
            }
            inner.round_trips.fetch_add(1, Ordering::Relaxed);
            let answered = tokio::time::timeout(
                inner.config.timeout,
                invocation.invoke_async::<Vec<(i64, Option<Vec<u8>>)>>(&mut connection),
            )
            .await;
            match answered {
                Ok(Ok(decided)) if decided.len() == costs.len() => {
                    inner.shared.fetch_add(costs.len() as u64, Ordering::Relaxed);
                    return decided
                        .into_iter()
                        .map(|(wait, value)| match wait {
                            0 => (Decision::Allowed { shared: true }, value.map(Bytes::from)),
                            wait => {
                                inner.limited.fetch_add(1, Ordering::Relaxed);
                                let retry_after = Duration::from_micros(wait.max(0) as u64);
                                (Decision::Limited { retry_after }, None)
                            }
                        })
                        .collect();
                }
                _ => {
                    self.redis_failed(true);
                }
            }
        }
        costs
            .iter()
            .map(|cost| (self.decide_locally(key, *cost), None))
            .collect()
    }

    /// A request of a key charged after the fact: let through unless Redis last said the key
    /// is over its rate, and owed; `None` when Redis is not connected (the request then asks
    /// it, or is decided without it).
    fn charge_after(&self, key: &ApiKey, cost: u64) -> Option<Decision> {
        let inner = &self.inner;
        // Connected is all this asks: no clone of the connection per request.
        self.on_connection(|_| ())?;
        let now = Instant::now();
        let mut owed = lock_unpoisoned(&inner.owed);
        let entry = owed.entry(*key.digest()).or_insert_with(|| {
            let (interval, tolerance) = interval_and_tolerance(key.rate());
            let allowance = (2.0 * key.rate() * inner.config.charge_every.as_secs_f64()).ceil();
            Owed {
                name: self.name_of(key),
                interval,
                tolerance,
                cost: 0,
                allowance: (allowance as u64).max(1),
                over_until: None,
            }
        });
        if let Some(until) = entry.over_until.filter(|until| now < *until) {
            drop(owed);
            inner.limited.fetch_add(1, Ordering::Relaxed);
            return Some(Decision::Limited {
                retry_after: until - now,
            });
        }
        if entry.cost.saturating_add(cost) > entry.allowance {
            // This key's allowance until the next charge is spent: this request asks Redis.
            return None;
        }
        let first = entry.cost == 0;
        entry.cost += cost;
        drop(owed);
        inner.shared.fetch_add(1, Ordering::Relaxed);
        if first {
            if !inner.charger_started.swap(true, Ordering::AcqRel) {
                tokio::spawn(charge(Arc::downgrade(&self.inner)));
            }
            inner.charging.notify_one();
        }
        Some(Decision::Allowed { shared: true })
    }

    /// Redis failed to answer: counted, and when `pause`, not asked again for a while.
    fn redis_failed(&self, pause: bool) {
        let inner = &self.inner;
        inner.redis_errors.fetch_add(1, Ordering::Relaxed);
        super::metrics::redis_error();
        if pause {
            *lock_unpoisoned(&inner.down_until) = Some(std::time::Instant::now() + inner.config.retry_after);
        }
    }

    /// The name of `key`'s state in Redis: the prefix and its digest in hex.
    fn name_of(&self, key: &ApiKey) -> String {
        let prefix = &self.inner.config.prefix;
        let mut name = String::with_capacity(prefix.len() + 64);
        name.push_str(prefix);
        super::keys::push_hex(&mut name, key.digest());
        name
    }

    /// A decision without Redis ([`OnRedisDown`]).
    fn decide_locally(&self, key: &ApiKey, cost: u64) -> Decision {
        let inner = &self.inner;
        inner.without_redis.fetch_add(1, Ordering::Relaxed);
        super::metrics::local_decision(key.label());
        match inner.config.on_down {
            OnRedisDown::Closed => Decision::Unavailable,
            OnRedisDown::Open { instances } => {
                let instances = self.live_instances().unwrap_or(instances);
                let rate = key.rate() / f64::from(instances.max(1));
                match inner.local.check(key.digest(), rate, cost) {
                    Ok(()) => Decision::Allowed { shared: false },
                    Err(retry_after) => {
                        inner.limited.fetch_add(1, Ordering::Relaxed);
                        Decision::Limited { retry_after }
                    }
                }
            }
        }
    }

    /// How many instances of the fleet Redis last counted alive (this one included), or
    /// `None` before it has.
    ///
    /// ```
    /// use rpcwire::proxy::fleet::{LimitConfig, SharedLimiter};
    /// let limiter = SharedLimiter::new("redis://127.0.0.1:6379/", LimitConfig::default()).unwrap();
    /// assert_eq!(limiter.live_instances(), None);
    /// ```
    pub fn live_instances(&self) -> Option<u32> {
        match self.inner.live.load(Ordering::Relaxed) {
            0 => None,
            live => Some(live),
        }
    }

    /// Its counters.
    ///
    /// ```
    /// use rpcwire::proxy::fleet::{LimitConfig, SharedLimiter};
    /// let limiter = SharedLimiter::new("redis://127.0.0.1:6379/", LimitConfig::default()).unwrap();
    /// assert_eq!(limiter.stats().shared, 0);
    /// ```
    pub fn stats(&self) -> LimitStats {
        let inner = &self.inner;
        LimitStats {
            shared: inner.shared.load(Ordering::Relaxed),
            without_redis: inner.without_redis.load(Ordering::Relaxed),
            limited: inner.limited.load(Ordering::Relaxed),
            redis_errors: inner.redis_errors.load(Ordering::Relaxed),
            round_trips: inner.round_trips.load(Ordering::Relaxed),
        }
    }

    /// The connection to Redis, when there is one and Redis did not just fail to answer;
    /// when there is none, one is being made in the background (a task of its own that tries until it connects or the limiter is
    /// dropped).
    fn connection(&self) -> Option<ConnectionManager> {
        self.on_connection(ConnectionManager::clone)
    }

    /// `take` applied to the connection (see [`connection`](SharedLimiter::connection)), without
    /// cloning it when a look is enough.
    fn on_connection<T>(&self, take: impl FnOnce(&ConnectionManager) -> T) -> Option<T> {
        {
            let mut down_until = lock_unpoisoned(&self.inner.down_until);
            match *down_until {
                Some(until) if std::time::Instant::now() < until => return None,
                Some(_) => *down_until = None,
                None => {}
            }
        }
        if let Some(manager) = lock_unpoisoned(&self.inner.manager).as_ref() {
            return Some(take(manager));
        }
        if !self.inner.connecting.swap(true, Ordering::AcqRel) {
            tokio::spawn(connect(Arc::downgrade(&self.inner)));
        }
        None
    }
}

/// Connects the limiter to Redis, trying again every 250 ms until it can or the limiter is
/// gone; the connection then makes itself again whenever it breaks.
async fn connect(inner: Weak<Inner>) {
    loop {
        let Some(strong) = inner.upgrade() else { return };
        let timeout = strong.config.timeout.max(Duration::from_millis(10));
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(timeout * 4)
            .set_response_timeout(timeout)
            .set_number_of_retries(2)
            .set_max_delay(250);
        let client = strong.client.clone();
        drop(strong);
        match ConnectionManager::new_with_config(client, config).await {
            Ok(manager) => {
                if let Some(strong) = inner.upgrade() {
                    *lock_unpoisoned(&strong.manager) = Some(manager.clone());
                    strong.connecting.store(false, Ordering::Release);
                }
                heartbeat(inner, manager).await;
                return;
            }
            Err(_) => tokio::time::sleep(Duration::from_millis(250)).await,
        }
    }
}

/// Says every second that this instance is alive, and keeps the count of the live ones,
/// until the limiter is gone (its name then drops out of the set by itself).
async fn heartbeat(inner: Weak<Inner>, mut connection: ConnectionManager) {
    let set = match inner.upgrade() {
        Some(strong) => format!("{}instances", strong.config.prefix),
        None => return,
    };
    loop {
        let Some(strong) = inner.upgrade() else { return };
        let mut invocation = strong.heartbeat.key(&set);
        invocation.arg(&strong.instance).arg(ALIVE_FOR.as_millis() as u64);
        let counted = tokio::time::timeout(
            strong.config.timeout,
            invocation.invoke_async::<u32>(&mut connection),
        )
        .await;
        if let Ok(Ok(live)) = counted {
            strong.live.store(live, Ordering::Relaxed);
        }
        drop(strong);
        tokio::time::sleep(HEARTBEAT).await;
    }
}

/// Charges what was let through of the keys charged after the fact, `charge_every` after the
/// first of them, all keys in one round trip; until the limiter is gone.
async fn charge(inner: Weak<Inner>) {
    loop {
        let Some(strong) = inner.upgrade() else { return };
        // Woken by the first request owed, or (every second) to see whether the limiter is gone.
        let _ = tokio::time::timeout(Duration::from_secs(1), strong.charging.notified()).await;
        let every = strong.config.charge_every;
        drop(strong);
        tokio::time::sleep(every).await;
        let Some(strong) = inner.upgrade() else { return };
        let limiter = SharedLimiter { inner: strong };
        limiter.charge_owed().await;
    }
}

impl SharedLimiter {
    /// One round trip: every key's owed cost charged, and whether each is now over its rate.
    async fn charge_owed(&self) {
        let inner = &self.inner;
        let mut charged: Vec<([u8; 32], u64)> = Vec::new();
        let mut invocation = inner.charge.prepare_invoke();
        {
            let mut owed = lock_unpoisoned(&inner.owed);
            let now = Instant::now();
            owed.retain(|_, entry| entry.cost > 0 || entry.over_until.is_some_and(|until| now < until));
            for (digest, entry) in owed.iter_mut().filter(|(_, entry)| entry.cost > 0) {
                invocation.key(&entry.name);
                invocation
                    .arg(entry.interval)
                    .arg(entry.tolerance)
                    .arg(entry.cost);
                charged.push((*digest, std::mem::take(&mut entry.cost)));
            }
        }
        if charged.is_empty() {
            return;
        }
        // Taken in a statement of its own: the guard must not live across the await below.
        let manager = lock_unpoisoned(&inner.manager).clone();
        let answered = match manager {
            Some(mut connection) => {
                inner.round_trips.fetch_add(1, Ordering::Relaxed);
                tokio::time::timeout(
                    inner.config.timeout,
                    invocation.invoke_async::<Vec<i64>>(&mut connection),
                )
                .await
                .ok()
                .and_then(Result::ok)
            }
            None => None,
        };
        let Some(waits) = answered.filter(|waits| waits.len() == charged.len()) else {
            // Let through while Redis could not be told: not charged (Redis is then not asked
            // for a while, and requests are decided without it).
            self.redis_failed(true);
            return;
        };
        let now = Instant::now();
        let mut owed = lock_unpoisoned(&inner.owed);
        for ((digest, _), wait) in charged.iter().zip(waits) {
            if let Some(entry) = owed.get_mut(digest) {
                entry.over_until = (wait > 0).then(|| now + Duration::from_micros(wait as u64));
            }
        }
    }
}

/// A name for this instance, unique in the fleet in practice: the process, the time and
/// where its limiter lives.
pub(super) fn instance_name() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |since| since.as_nanos());
    static NEXT: AtomicU64 = AtomicU64::new(0);
    format!(
        "{}-{nanos}-{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    )
}
