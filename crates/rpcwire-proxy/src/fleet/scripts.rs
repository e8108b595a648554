//! The Lua scripts the shared limiter runs in Redis, each one atomic round trip: a key's rate
//! (GCRA) with a cached answer read in the same trip, a batch's keys in one trip, charging keys
//! after the fact, and the instances' heartbeat.

/// GCRA in Redis, on the server's clock (every instance agrees on it): KEYS[1] the key's
/// theoretical arrival time (µs); ARGV the emission interval and tolerance (µs) and the
/// request's cost. `{1, 0, cached}` when allowed (the time stored, expiring once the burst is
/// whole again; `cached` the value of KEYS[2], a cached answer, when there is such a key and
/// value, else nil), `{0, µs to wait, nil}` when not.
pub(crate) const GCRA_SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local cost = tonumber(ARGV[3])
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then tat = now end
local nxt = tat + interval * cost
local allowed_at = nxt - tolerance
if now < allowed_at then
  return {0, allowed_at - now, false}
end
redis.call('SET', KEYS[1], string.format('%d', nxt), 'PX', math.ceil((nxt - now) / 1000) + 1)
local cached = false
if #KEYS > 1 then cached = redis.call('GET', KEYS[2]) end
return {1, 0, cached}
";

/// The GCRA script for several requests of one key at once (a batch's elements), in one
/// round trip: ARGV[3..] two per request, its cost and the index in KEYS of its cached
/// answer's name (0: none); each let through while the key's rate allows, in order; for each,
/// `{0, cached}` when let through (`cached` the value under that name, when there is one),
/// else `{µs to wait, false}`.
pub(crate) const GCRA_MANY_SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local interval = tonumber(ARGV[1])
local tolerance = tonumber(ARGV[2])
local tat = tonumber(redis.call('GET', KEYS[1]))
if tat == nil or tat < now then tat = now end
local out = {}
local moved = false
for i = 3, #ARGV, 2 do
  local nxt = tat + interval * tonumber(ARGV[i])
  local allowed_at = nxt - tolerance
  if now < allowed_at then
    out[#out + 1] = {allowed_at - now, false}
  else
    tat = nxt
    moved = true
    local cached = false
    local at = tonumber(ARGV[i + 1])
    if at > 0 then cached = redis.call('GET', KEYS[at]) end
    out[#out + 1] = {0, cached}
  end
end
if moved then
  redis.call('SET', KEYS[1], string.format('%d', tat), 'PX', math.ceil((tat - now) / 1000) + 1)
end
return out
";

/// Charges, after the fact, what an instance let through of several keys, in one round trip:
/// KEYS the keys' states, ARGV three per key (emission interval, tolerance, the cost let
/// through). For each key, the µs until its next request fits (`<= 0`: it fits now).
pub(crate) const CHARGE_SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local out = {}
for i = 1, #KEYS do
  local interval = tonumber(ARGV[3 * i - 2])
  local tolerance = tonumber(ARGV[3 * i - 1])
  local tat = tonumber(redis.call('GET', KEYS[i]))
  if tat == nil or tat < now then tat = now end
  tat = tat + interval * tonumber(ARGV[3 * i])
  redis.call('SET', KEYS[i], string.format('%d', tat), 'PX', math.ceil((tat - now) / 1000) + 1)
  out[i] = tat + interval - tolerance - now
end
return out
";

/// Each instance says it is alive (a member of a sorted set scored by Redis's clock, in ms),
/// those not heard of for ARGV[2] ms are dropped, and the count of the live ones comes back:
/// KEYS[1] the set, ARGV[1] this instance.
pub(crate) const HEARTBEAT_SCRIPT: &str = r"
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local window = tonumber(ARGV[2])
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
redis.call('PEXPIRE', KEYS[1], window * 2)
return redis.call('ZCARD', KEYS[1])
";
