"""Lua scripts of `RedisState`: each check-and-change runs atomically inside Redis."""

# Counters and limits are created once; a second init (a redelivered task) changes nothing, so neither
# the charges made so far nor the deadline move.
INIT_BUDGET = """
for i, field in ipairs({'hops', 'retrieval_calls', 'llm_tokens'}) do
  redis.call('HSETNX', KEYS[1], field, 0)
end
redis.call('HSETNX', KEYS[1], 'max_hops', ARGV[1])
redis.call('HSETNX', KEYS[1], 'max_retrieval_calls', ARGV[2])
redis.call('HSETNX', KEYS[1], 'max_llm_tokens', ARGV[3])
redis.call('HSETNX', KEYS[1], 'deadline_ts', ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
return 1
"""

# `charge(budget, counter, amount)`: add `amount` to `counter` of the budget hash if that keeps it within
# its limit (1), else charge nothing (0; -1 when the budget has no such limit).
_CHARGE_FUNCTION = """
local function charge(budget, counter, amount)
  local limit = redis.call('HGET', budget, 'max_' .. counter)
  if not limit then return -1 end
  local used = tonumber(redis.call('HGET', budget, counter) or '0')
  if used + amount > tonumber(limit) then return 0 end
  redis.call('HINCRBY', budget, counter, amount)
  return 1
end
"""

CHARGE = _CHARGE_FUNCTION + """
return charge(KEYS[1], ARGV[1], tonumber(ARGV[2]))
"""

# `CHARGE` once per marker (KEYS[2], set for ARGV[3] seconds): 2 when the marker was set already (nothing
# charged: a redelivered step), else what `CHARGE` returns. One round trip instead of SET NX, then EVALSHA.
CHARGE_ONCE = _CHARGE_FUNCTION + """
if not redis.call('SET', KEYS[2], '1', 'NX', 'EX', ARGV[3]) then return 2 end
return charge(KEYS[1], ARGV[1], tonumber(ARGV[2]))
"""

CHARGE_PLAIN = """
local used = tonumber(redis.call('GET', KEYS[1]) or '0')
local amount = tonumber(ARGV[1])
if used + amount > tonumber(ARGV[2]) then return 0 end
redis.call('INCRBY', KEYS[1], amount)
redis.call('EXPIRE', KEYS[1], ARGV[3])
return 1
"""

# KEYS: seen set, first-seen-hop hash. A hash is fresh at the hop that first saw it, and stays fresh for
# that hop, so a redelivered reducer of the hop gets the same answer as the first run.
FIRST_SEEN = """
local fresh = {}
for i = 3, #ARGV do
  if redis.call('SADD', KEYS[1], ARGV[i]) == 1 then
    redis.call('HSET', KEYS[2], ARGV[i], ARGV[2])
    fresh[#fresh + 1] = ARGV[i]
  elseif redis.call('HGET', KEYS[2], ARGV[i]) == ARGV[2] then
    fresh[#fresh + 1] = ARGV[i]
  end
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
redis.call('EXPIRE', KEYS[2], ARGV[1])
return fresh
"""

# What retrieval slots of one hop do before they search, in one round trip (`RedisState.slots_begin`; a
# Celery retrieval task is one slot, the inline executor sends a hop's searches together).
# KEYS: the hop's hits hash, the budget hash, [the hop's charge marker,] then each slot's sub-query cache
# entry. ARGV: now (unix seconds), the charge marker's lifetime in seconds ('0': no marker, no hop to charge),
# the tenant's corpus version read from the database when the hop was planned ('-1': the cache is off, no
# entry is read), then the slots. With a marker, the hop itself is charged first, once per
# marker, as `CHARGE_ONCE` would (the inline executor: its hop's charge rides on its searches' round trip).
# Returns {outcome, payload, corpus version} per slot, in order (one flat list), each as a slot alone would
# get it:
#   'parked' + the slot's stored result (a redelivered task: nothing is charged again);
#   'deadline' (past the deadline, or no budget) and 'budget' (no retrieval call left): nothing charged;
#   otherwise one retrieval call is charged (a cache hit counts too) and 'hit' + the cached passages when
#   the entry was stored under the hop's corpus version, else 'miss'.
SLOT_BEGIN = _CHARGE_FUNCTION + """
local version = tonumber(ARGV[3])
local first = 3
if ARGV[2] ~= '0' then
  first = 4
  if redis.call('SET', KEYS[3], '1', 'NX', 'EX', ARGV[2]) then charge(KEYS[2], 'hops', 1) end
end
local out = {}
local function begin(slot, entry_key)
  local parked = redis.call('HGET', KEYS[1], slot)
  if parked then return 'parked', parked end
  local deadline = tonumber(redis.call('HGET', KEYS[2], 'deadline_ts') or '0')
  if tonumber(ARGV[1]) > deadline then return 'deadline', false end
  if charge(KEYS[2], 'retrieval_calls', 1) ~= 1 then return 'budget', false end
  if version < 0 then return 'miss', false end
  local entry = redis.call('HMGET', entry_key, 'v', 'p')
  if entry[1] and tonumber(entry[1]) == version and entry[2] then return 'hit', entry[2] end
  return 'miss', false
end
for i = 4, #ARGV do
  local outcome, payload = begin(ARGV[i], KEYS[i - 4 + first])
  out[#out + 1] = outcome
  out[#out + 1] = payload
  out[#out + 1] = version
end
return out
"""
