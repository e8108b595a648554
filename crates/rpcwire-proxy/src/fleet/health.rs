//! `SharedHealth`: the upstreams' breakers of every instance of a fleet agree through Redis:
//! an upstream benched by one instance is benched by all, and probed back by one.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

use super::limit::instance_name;
use crate::breaker::{Report, Verdict};
use crate::UpstreamGroup;

/// One round trip for every upstream of a group, on Redis's clock: KEYS two per upstream (its
/// bench, holding the time in ms after which it may be probed, and its probe lock), ARGV[1]
/// this instance, then two per upstream (what its breaker reports: 0 nothing, 1 opened,
/// 2 closed; its cool-down in ms). For each upstream: 0 healthy, 1 benched, 2 benched and this
/// instance is the one to probe it. The bench expires by itself (ten cool-downs, at least a
/// minute) when no instance is left to refresh it.
const HEALTH_SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local me = ARGV[1]
local out = {}
for i = 1, #KEYS / 2 do
  local bench, probe = KEYS[2 * i - 1], KEYS[2 * i]
  local report = ARGV[2 * i]
  local cool = tonumber(ARGV[2 * i + 1])
  if report == '1' then
    redis.call('SET', bench, now + cool, 'PX', math.max(cool * 10, 60000))
    redis.call('DEL', probe)
  elseif report == '2' then
    redis.call('DEL', bench, probe)
  end
  local at = tonumber(redis.call('GET', bench))
  if at == nil then
    out[i] = 0
  elseif now < at then
    out[i] = 1
  elseif redis.call('SET', probe, me, 'NX', 'PX', cool) or redis.call('GET', probe) == me then
    out[i] = 2
  else
    out[i] = 1
  end
end
return out
";

/// How a [`SharedHealth`] works.
#[derive(Clone, Debug)]
pub struct HealthConfig {
    /// Before each upstream's name in Redis.
    pub prefix: String,
    /// How often the breakers are told to the fleet and its verdicts read: how long another
    /// instance may still send to an upstream after one benched it.
    pub every: Duration,
    /// How long one of those round trips may take; past it, each instance's breakers decide
    /// alone until Redis answers again.
    pub timeout: Duration,
}

impl Default for HealthConfig {
    /// `rpcwire:health:`, every 250 ms, 200 ms.
    fn default() -> HealthConfig {
        HealthConfig {
            prefix: "rpcwire:health:".to_owned(),
            every: Duration::from_millis(250),
            timeout: Duration::from_millis(200),
        }
    }
}

/// What a [`SharedHealth`] has done.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct HealthStats {
    /// Round trips that told Redis the breakers' changes and took its verdicts.
    pub syncs: u64,
    /// Rounds that found no Redis, or none in time (the breakers then decided alone).
    pub redis_errors: u64,
    /// Times this instance was picked to probe a benched upstream.
    pub probes: u64,
}

#[derive(Default)]
struct Counters {
    syncs: AtomicU64,
    redis_errors: AtomicU64,
    probes: AtomicU64,
}

/// Shares the breakers of an [`UpstreamGroup`]'s upstreams with every instance of the fleet,
/// through the Redis at a URL: when one instance's breaker benches an upstream, the others
/// stop sending to it within [`HealthConfig::every`]; after the breaker's cool-down one
/// instance of the fleet, and one only, lets a probe through; when it succeeds every instance
/// sends to the upstream again, when it fails the upstream stays benched for another
/// cool-down. Upstreams are known by their names ([`Upstream::name`](crate::Upstream::name)),
/// so the instances must name them alike (as the same command line does). While Redis does
/// not answer, each instance's breakers decide alone, as without a fleet.
///
/// A task of its own does this until the `SharedHealth` or the group is dropped.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// use std::sync::Arc;
/// use std::time::Duration;
/// use rpcwire::proxy::fleet::{HealthConfig, SharedHealth};
/// use rpcwire::proxy::{Upstream, UpstreamGroup};
///
/// let group = Arc::new(UpstreamGroup::new(vec![
///     Upstream::address("http://127.0.0.1:8545/").unwrap().with_breaker(5, Duration::from_secs(10)),
/// ]));
/// // No Redis listens on port 9: the breakers decide alone, and that is counted.
/// let config = HealthConfig { every: Duration::from_millis(10), ..HealthConfig::default() };
/// let health = SharedHealth::start("redis://127.0.0.1:9/", &group, config).unwrap();
/// let started = std::time::Instant::now();
/// while health.stats().redis_errors == 0 {
///     assert!(started.elapsed() < Duration::from_secs(5));
///     tokio::time::sleep(Duration::from_millis(10)).await;
/// }
/// assert_eq!(health.stats().syncs, 0);
/// # });
/// ```
pub struct SharedHealth {
    task: tokio::task::JoinHandle<()>,
    counters: Arc<Counters>,
}

impl std::fmt::Debug for SharedHealth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedHealth")
            .field("stats", &self.stats())
            .finish()
    }
}

impl Drop for SharedHealth {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl SharedHealth {
    /// Starts sharing `group`'s breakers on `redis` (a [`RedisTarget`](super::RedisTarget): `redis://HOST:PORT/`, `rediss://…`), on a
    /// task of the current tokio runtime; an error only for a URL that is not one (Redis is
    /// connected to in the background, again whenever needed).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::sync::Arc;
    /// use rpcwire::proxy::fleet::{HealthConfig, SharedHealth};
    /// let group = Arc::new(rpcwire::proxy::UpstreamGroup::new(vec![]));
    /// assert!(SharedHealth::start("not a url", &group, HealthConfig::default()).is_err());
    /// # });
    /// ```
    pub fn start(
        redis: impl Into<super::RedisTarget>,
        group: &Arc<UpstreamGroup>,
        config: HealthConfig,
    ) -> Result<SharedHealth, redis::RedisError> {
        let client = redis.into().client()?;
        let counters = Arc::new(Counters::default());
        let task = tokio::spawn(run(client, Arc::downgrade(group), config, counters.clone()));
        Ok(SharedHealth { task, counters })
    }

    /// What it has done.
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::sync::Arc;
    /// use rpcwire::proxy::fleet::{HealthConfig, SharedHealth};
    /// let group = Arc::new(rpcwire::proxy::UpstreamGroup::new(vec![]));
    /// let health = SharedHealth::start("redis://127.0.0.1:6379/", &group, HealthConfig::default()).unwrap();
    /// assert_eq!(health.stats().probes, 0);
    /// # });
    /// ```
    pub fn stats(&self) -> HealthStats {
        let get = |counter: &AtomicU64| counter.load(Ordering::Relaxed);
        HealthStats {
            syncs: get(&self.counters.syncs),
            redis_errors: get(&self.counters.redis_errors),
            probes: get(&self.counters.probes),
        }
    }
}

/// Every `config.every`: connects when not connected, tells Redis what each breaker has not
/// told yet and applies the verdicts; until the group is gone.
async fn run(
    client: redis::Client,
    group: Weak<UpstreamGroup>,
    config: HealthConfig,
    counters: Arc<Counters>,
) {
    let script = redis::Script::new(HEALTH_SCRIPT);
    let instance = instance_name();
    let mut connection: Option<ConnectionManager> = None;
    let mut ticks = tokio::time::interval(config.every.max(Duration::from_millis(1)));
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        let Some(group) = group.upgrade() else { return };
        if connection.is_none() {
            connection = connect(&client, config.timeout).await;
        }
        let synced = match &mut connection {
            Some(connection) => sync(&group, &script, &instance, &config, connection, &counters).await,
            None => false,
        };
        if synced {
            counters.syncs.fetch_add(1, Ordering::Relaxed);
        } else {
            counters.redis_errors.fetch_add(1, Ordering::Relaxed);
            super::metrics::redis_error();
            for upstream in group.upstreams() {
                upstream.breaker.forget_outside();
            }
        }
    }
}

/// A connection that makes itself again whenever it breaks; `None` when Redis cannot be
/// reached within a few `timeout`s.
async fn connect(client: &redis::Client, timeout: Duration) -> Option<ConnectionManager> {
    let timeout = timeout.max(Duration::from_millis(10));
    let config = ConnectionManagerConfig::new()
        .set_connection_timeout(timeout * 2)
        .set_response_timeout(timeout)
        .set_number_of_retries(1)
        .set_max_delay(250);
    let made = tokio::time::timeout(
        timeout * 4,
        ConnectionManager::new_with_config(client.clone(), config),
    )
    .await;
    made.ok()?.ok()
}

/// One round trip: the breakers' reports told, the fleet's verdicts applied; `false` when
/// Redis did not answer in time (the reports are kept for the next round).
async fn sync(
    group: &UpstreamGroup,
    script: &redis::Script,
    instance: &str,
    config: &HealthConfig,
    connection: &mut ConnectionManager,
    counters: &Counters,
) -> bool {
    let upstreams = group.upstreams();
    if upstreams.is_empty() {
        return true;
    }
    let reports: Vec<Report> = upstreams.iter().map(|u| u.breaker.take_report()).collect();
    let mut invocation = script.prepare_invoke();
    for upstream in upstreams {
        invocation.key(format!("{}bench:{}", config.prefix, upstream.name()));
        invocation.key(format!("{}probe:{}", config.prefix, upstream.name()));
    }
    invocation.arg(instance);
    for (upstream, report) in upstreams.iter().zip(&reports) {
        let code = match report {
            Report::Nothing => 0,
            Report::Opened => 1,
            Report::Closed => 2,
        };
        let cool_down = upstream.breaker.cool_down().as_millis().max(1) as u64;
        invocation.arg(code).arg(cool_down);
    }
    let answered =
        tokio::time::timeout(config.timeout, invocation.invoke_async::<Vec<i64>>(connection)).await;
    let verdicts = match answered {
        Ok(Ok(verdicts)) if verdicts.len() == upstreams.len() => verdicts,
        _ => {
            for (upstream, report) in upstreams.iter().zip(reports) {
                upstream.breaker.untake(report);
            }
            return false;
        }
    };
    let now = Instant::now();
    for (upstream, verdict) in upstreams.iter().zip(verdicts) {
        let verdict = match verdict {
            0 => Verdict::Healthy,
            2 => Verdict::Probe,
            _ => Verdict::Benched,
        };
        if upstream.breaker.apply(verdict, now) {
            counters.probes.fetch_add(1, Ordering::Relaxed);
        }
    }
    true
}
