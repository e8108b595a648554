//! `examples/gateway`'s config file (`--config FILE`, TOML): each setting is the command-line
//! flag of the same name, so a file and flags mean the same; flags after `--config` change or
//! add to what the file says. Unknown settings are refused with where they are.
//!
//! ```toml
//! listen = "127.0.0.1:8546"
//! timeout_ms = 5000
//! max_batch = 1000
//! hedge = "p95"            # or a number of milliseconds
//! prefer_faster = true     # each call first to the upstream answering fastest lately
//! admin = false
//! coalesce = true
//!
//! [[upstream]]
//! label = "infura"
//! url = "https://mainnet.infura.io/v3/${INFURA_KEY}"
//!
//! [[upstream]]
//! label = "alchemy"
//! url = "https://eth-mainnet.g.alchemy.com/v2/${ALCHEMY_KEY}"
//!
//! [methods]
//! safe = ["eth_call", "eth_getBalance", "eth_blockNumber"]
//! deny = ["admin_peers"]
//! route = { eth_sendRawTransaction = ["alchemy"] }
//!
//! [chain]                  # Ethereum-style upstreams
//! track_heads_ms = 1000    # poll each upstream's latest and finalized block
//! max_lag = 5              # avoid upstreams more blocks behind than this
//! finality_depth = 64      # final this far behind the head, where "finalized" is unknown
//! cache = true             # keep answers about finalized blocks for good…
//! head_ttl_ms = 1000       # …and about the head this long
//! cache_bytes = 67108864
//! log_chunk = 2000         # split eth_getLogs over wider ranges
//!
//! [tls]                    # serving HTTPS and WSS, and trusting upstreams
//! cert = "/etc/gateway/cert.pem"
//! key = "/etc/gateway/key.pem"
//!
//! [fleet]                  # with the `redis` feature
//! redis = "redis://${REDIS_HOST}:6379/"
//! keys = "/etc/gateway/keys"
//! cache = { eth_chainId = 0, eth_getBlockByNumber = 2 }
//! weight = { eth_getLogs = 10 }
//! ```
#![allow(dead_code)]

use std::collections::BTreeMap;

use serde::Deserialize;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    listen: Option<String>,
    #[serde(default)]
    upstream: Vec<UpstreamEntry>,
    timeout_ms: Option<u64>,
    max_body: Option<u64>,
    max_response: Option<u64>,
    max_batch: Option<u64>,
    hedge: Option<Hedge>,
    #[serde(default)]
    prefer_faster: bool,
    #[serde(default)]
    admin: bool,
    #[serde(default)]
    coalesce: bool,
    metrics: Option<String>,
    #[serde(default)]
    methods: Methods,
    tls: Option<Tls>,
    chain: Option<Chain>,
    fleet: Option<Fleet>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Chain {
    track_heads_ms: Option<u64>,
    max_lag: Option<u64>,
    finality_depth: Option<u64>,
    #[serde(default)]
    cache: bool,
    head_ttl_ms: Option<u64>,
    cache_bytes: Option<u64>,
    log_chunk: Option<u64>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpstreamEntry {
    label: Option<String>,
    url: String,
}

#[derive(Deserialize)]
#[serde(untagged)]
enum Hedge {
    Millis(u64),
    Text(String),
}

#[derive(Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct Methods {
    #[serde(default)]
    safe: Vec<String>,
    #[serde(default)]
    deny: Vec<String>,
    /// Each method's upstreams, by label.
    #[serde(default)]
    route: BTreeMap<String, Vec<String>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Tls {
    cert: Option<String>,
    key: Option<String>,
    #[serde(default)]
    ca: Vec<String>,
    #[serde(default)]
    webpki_roots: bool,
    client_cert: Option<String>,
    client_key: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Fleet {
    redis: Option<String>,
    redis_ca: Option<String>,
    keys: Option<String>,
    keys_from_redis: Option<String>,
    on_redis_down: Option<String>,
    instances: Option<u32>,
    redis_timeout_ms: Option<u64>,
    #[serde(default)]
    cache: BTreeMap<String, u64>,
    #[serde(default)]
    weight: BTreeMap<String, u64>,
}

/// The flags `text` (a config file's TOML) stands for, in the order the command line takes
/// them; why not, when it is not a config file (the reason says where).
pub fn flags(text: &str) -> Result<Vec<String>, String> {
    let file: File = toml::from_str(text).map_err(|error| error.to_string().trim_end().to_owned())?;
    let mut flags = Vec::new();
    let mut push = |flag: &str, value: Option<String>| {
        flags.push(flag.to_owned());
        flags.extend(value);
    };
    if let Some(listen) = file.listen {
        push("--listen", Some(listen));
    }
    for upstream in file.upstream {
        let given = match upstream.label {
            Some(label) if label.is_empty() || label.contains(['=', ':', '/']) => {
                return Err(format!(
                    "upstream label {label:?}: a word without '=', ':' or '/'"
                ))
            }
            Some(label) => format!("{label}={}", upstream.url),
            None => upstream.url,
        };
        push("--upstream", Some(given));
    }
    for (flag, value) in [
        ("--timeout-ms", file.timeout_ms),
        ("--max-body", file.max_body),
        ("--max-response", file.max_response),
        ("--max-batch", file.max_batch),
    ] {
        if let Some(value) = value {
            push(flag, Some(value.to_string()));
        }
    }
    match file.hedge {
        Some(Hedge::Millis(ms)) => push("--hedge", Some(ms.to_string())),
        Some(Hedge::Text(text)) => push("--hedge", Some(text)),
        None => {}
    }
    if file.admin {
        push("--admin", None);
    }
    if file.prefer_faster {
        push("--prefer-faster", None);
    }
    if file.coalesce {
        push("--coalesce", None);
    }
    if let Some(metrics) = file.metrics {
        push("--metrics", Some(metrics));
    }
    for method in file.methods.safe {
        push("--safe", Some(method));
    }
    for method in file.methods.deny {
        push("--deny", Some(method));
    }
    for (method, labels) in file.methods.route {
        for label in labels {
            push("--route", Some(format!("{method}={label}")));
        }
    }
    if let Some(chain) = file.chain {
        for (flag, value) in [
            ("--track-heads", chain.track_heads_ms),
            ("--max-lag", chain.max_lag),
            ("--finality-depth", chain.finality_depth),
            ("--head-ttl-ms", chain.head_ttl_ms),
            ("--cache-bytes", chain.cache_bytes),
            ("--log-chunk", chain.log_chunk),
        ] {
            if let Some(value) = value {
                push(flag, Some(value.to_string()));
            }
        }
        if chain.cache {
            push("--finality-cache", None);
        }
    }
    if let Some(tls) = file.tls {
        for (flag, value) in [
            ("--tls-cert", tls.cert),
            ("--tls-key", tls.key),
            ("--client-cert", tls.client_cert),
            ("--client-key", tls.client_key),
        ] {
            if let Some(value) = value {
                push(flag, Some(value));
            }
        }
        for authority in tls.ca {
            push("--ca", Some(authority));
        }
        if tls.webpki_roots {
            push("--webpki-roots", None);
        }
    }
    if let Some(fleet) = file.fleet {
        for (flag, value) in [
            ("--redis", fleet.redis),
            ("--redis-ca", fleet.redis_ca),
            ("--keys", fleet.keys),
            ("--keys-from-redis", fleet.keys_from_redis),
            ("--on-redis-down", fleet.on_redis_down),
            ("--instances", fleet.instances.map(|n| n.to_string())),
            (
                "--redis-timeout-ms",
                fleet.redis_timeout_ms.map(|n| n.to_string()),
            ),
        ] {
            if let Some(value) = value {
                push(flag, Some(value));
            }
        }
        for (method, seconds) in fleet.cache {
            push("--cache", Some(format!("{method}={seconds}")));
        }
        for (method, cost) in fleet.weight {
            push("--weight", Some(format!("{method}={cost}")));
        }
    }
    Ok(flags)
}
