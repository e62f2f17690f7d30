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

CHARGE = """
local limit = redis.call('HGET', KEYS[1], 'max_' .. ARGV[1])
if not limit then return -1 end
local used = tonumber(redis.call('HGET', KEYS[1], ARGV[1]) or '0')
local amount = tonumber(ARGV[2])
if used + amount > tonumber(limit) then return 0 end
redis.call('HINCRBY', KEYS[1], ARGV[1], amount)
return 1
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

MARK_SEEN = """
local new = {}
for i = 2, #ARGV do
  if redis.call('SADD', KEYS[1], ARGV[i]) == 1 then new[#new + 1] = ARGV[i] end
end
redis.call('EXPIRE', KEYS[1], ARGV[1])
return new
"""
