//! The gateway example's fleet options (`redis` feature): API keys, a rate limit per key
//! shared through Redis, a shared response cache and shared upstream health.

use std::sync::Arc;
use std::time::Duration;

use rpcwire::proxy::fleet::{
    ApiKeys, FleetLayer, HealthConfig, LimitConfig, OnRedisDown, RedisTarget, SharedHealth, SharedLimiter,
};
use rpcwire::proxy::UpstreamGroup;

/// The fleet options from the command line.
#[derive(Default)]
pub struct FleetOptions {
    pub keys: Option<String>,
    pub keys_from_redis: Option<String>,
    pub redis: Option<String>,
    pub redis_ca: Option<String>,
    pub on_redis_down: Option<String>,
    pub instances: Option<u32>,
    pub redis_timeout_ms: Option<u64>,
    pub cache: Vec<String>,
    pub weights: Vec<String>,
}

impl FleetOptions {
    /// Takes `arg` (and its value from `value`) when it is a fleet option.
    pub fn take(
        &mut self,
        arg: &str,
        value: &mut dyn FnMut(&str) -> Result<String, String>,
    ) -> Result<bool, String> {
        match arg {
            "--keys" => self.keys = Some(value(arg)?),
            "--keys-from-redis" => self.keys_from_redis = Some(value(arg)?),
            // `${NAME}` read from the environment, as in upstream URLs (a password stays out
            // of the command line).
            "--redis" => {
                let url = value(arg)?;
                self.redis = Some(super::env::expand(&url).map_err(|problem| format!("--redis: {problem}"))?);
            }
            "--redis-ca" => self.redis_ca = Some(value(arg)?),
            "--on-redis-down" => self.on_redis_down = Some(value(arg)?),
            "--instances" => {
                let text = value(arg)?;
                self.instances = Some(text.parse().map_err(|e| format!("--instances {text}: {e}"))?);
            }
            "--redis-timeout-ms" => {
                let text = value(arg)?;
                self.redis_timeout_ms = Some(
                    text.parse()
                        .map_err(|e| format!("--redis-timeout-ms {text}: {e}"))?,
                );
            }
            "--cache" => self.cache.push(value(arg)?),
            "--weight" => self.weights.push(value(arg)?),
            _ => return Ok(false),
        }
        Ok(true)
    }

    /// Whether any was given.
    pub fn any(&self) -> bool {
        self.keys.is_some()
            || self.keys_from_redis.is_some()
            || self.redis.is_some()
            || !self.cache.is_empty()
            || !self.weights.is_empty()
    }

    /// The Redis `--redis` names, trusted through `--redis-ca` when given (a `rediss://`
    /// URL); `None` without `--redis`.
    fn redis(&self) -> Result<Option<RedisTarget>, String> {
        let Some(url) = &self.redis else {
            return Ok(None);
        };
        let target = RedisTarget::new(url.as_str());
        Ok(Some(match &self.redis_ca {
            Some(path) => {
                let pem = std::fs::read(path).map_err(|e| format!("--redis-ca {path}: {e}"))?;
                target.with_ca_pem(&pem)
            }
            None => target,
        }))
    }

    /// The layer they describe (the keys read from their file, or from Redis).
    pub async fn layer(&self, max_body: usize) -> Result<FleetLayer, String> {
        let redis = self.redis()?;
        let mut layer = match (&self.keys, &self.keys_from_redis, &redis) {
            (Some(path), None, _) => {
                let keys = ApiKeys::from_file(path).map_err(|e| format!("--keys {path}: {e}"))?;
                FleetLayer::new(keys)
            }
            (None, Some(hash), Some(redis)) => {
                let keys = ApiKeys::load(redis.clone(), hash, Duration::from_secs(5))
                    .await
                    .map_err(|e| format!("--keys-from-redis {hash}: {e}"))?;
                FleetLayer::new(keys).with_keys_refreshed_from(
                    redis.clone(),
                    hash.clone(),
                    Duration::from_secs(10),
                )
            }
            (None, Some(_), None) => return Err("--keys-from-redis needs --redis".to_owned()),
            (Some(_), Some(_), _) => return Err("--keys and --keys-from-redis go apart".to_owned()),
            (None, None, _) => return Err("--keys FILE or --keys-from-redis HASH is needed".to_owned()),
        }
        .with_max_body(max_body)
        .with_limits(rpcwire::Limits::default().with_max_size(max_body));
        for pair in &self.weights {
            let (method, cost) = pair
                .split_once('=')
                .ok_or_else(|| format!("--weight {pair}: expected METHOD=COST"))?;
            let cost = cost.parse().map_err(|e| format!("--weight {pair}: {e}"))?;
            layer = layer.with_weight(method, cost);
        }
        let Some(redis) = redis else {
            if !self.cache.is_empty() {
                return Err("--cache needs --redis".to_owned());
            }
            return Ok(layer);
        };
        let limiter = self.limiter(redis)?;
        layer = layer.with_limiter(limiter);
        for pair in &self.cache {
            let (method, seconds) = pair
                .split_once('=')
                .ok_or_else(|| format!("--cache {pair}: expected METHOD=SECONDS"))?;
            let seconds: u64 = seconds.parse().map_err(|e| format!("--cache {pair}: {e}"))?;
            let ttl = (seconds > 0).then(|| Duration::from_secs(seconds));
            layer = layer.with_cache(method, ttl);
        }
        Ok(layer)
    }

    /// The store in `--redis` the fleet shares (`None` without `--redis`).
    pub fn store(&self) -> Result<Option<SharedLimiter>, String> {
        match self.redis()? {
            Some(redis) => self.limiter(redis).map(Some),
            None => Ok(None),
        }
    }

    /// A connection to `redis`, with the `--on-redis-down` and `--redis-timeout-ms` settings.
    fn limiter(&self, redis: RedisTarget) -> Result<SharedLimiter, String> {
        let on_down = match self.on_redis_down.as_deref().unwrap_or("open") {
            "open" => OnRedisDown::Open {
                instances: self.instances.unwrap_or(1).max(1),
            },
            "closed" => OnRedisDown::Closed,
            other => return Err(format!("--on-redis-down {other}: open or closed")),
        };
        let config = LimitConfig {
            timeout: Duration::from_millis(self.redis_timeout_ms.unwrap_or(50)),
            on_down,
            ..LimitConfig::default()
        };
        let url = redis.url().to_owned();
        let limiter = SharedLimiter::new(redis, config).map_err(|e| format!("--redis {url}: {e}"))?;
        Ok(limiter)
    }

    /// With `--redis`: `pool`'s breakers shared with the fleet, for as long as the value lives.
    pub fn health(&self, pool: &Arc<UpstreamGroup>) -> Result<Option<SharedHealth>, String> {
        let Some(redis) = self.redis()? else {
            return Ok(None);
        };
        let url = redis.url().to_owned();
        SharedHealth::start(redis, pool, HealthConfig::default())
            .map(Some)
            .map_err(|e| format!("--redis {url}: {e}"))
    }
}
