-- wrk script for tools/serve/bench.sh: each request POSTs one sentence to `ordo serve`.
--   ORDO_BENCH_SENTENCES  file, one sentence per line (cycled; each wrk thread starts elsewhere)
--   ORDO_BENCH_API        "libre" (POST /translate, en -> de) or "v1" (POST /v1/translate)
--   ORDO_BENCH_MODEL      model name for "v1"
--   ORDO_BENCH_OPTIONS    extra JSON members for "v1", e.g. ', "max_new_tokens": 64'
-- Prints one line "ORDO_RESULT requests=... rps=... p50_ms=... p95_ms=... p99_ms=... errors=..."

local sentences = {}
for line in io.lines(os.getenv("ORDO_BENCH_SENTENCES")) do
  if #line > 0 then sentences[#sentences + 1] = line end
end
local api = os.getenv("ORDO_BENCH_API") or "libre"
local model = os.getenv("ORDO_BENCH_MODEL") or ""
local options = os.getenv("ORDO_BENCH_OPTIONS") or ""

local function json_string(s)
  local escaped = s:gsub('[%c"\\]', function(c)
    if c == '"' then return '\\"' end
    if c == "\\" then return "\\\\" end
    return string.format("\\u%04x", c:byte())
  end)
  return '"' .. escaped .. '"'
end

local thread_count = 0
function setup(thread)
  thread:set("thread_index", thread_count)
  thread_count = thread_count + 1
end

local next_sentence = 0
function init(args)
  next_sentence = (thread_index or 0) * 101
end

local headers = { ["Content-Type"] = "application/json" }
function request()
  next_sentence = next_sentence + 1
  local s = json_string(sentences[(next_sentence % #sentences) + 1])
  if api == "v1" then
    return wrk.format("POST", "/v1/translate", headers, '{"model":"' .. model .. '","text":' .. s .. options .. "}")
  end
  return wrk.format("POST", "/translate", headers, '{"q":' .. s .. ',"source":"en","target":"de"}')
end

function done(summary, latency, requests)
  local seconds = summary.duration / 1e6
  local e = summary.errors
  io.write(string.format(
    "ORDO_RESULT requests=%d seconds=%.2f rps=%.2f p50_ms=%.0f p95_ms=%.0f p99_ms=%.0f errors=%d\n",
    summary.requests, seconds, summary.requests / seconds, latency:percentile(50) / 1000,
    latency:percentile(95) / 1000, latency:percentile(99) / 1000,
    e.connect + e.read + e.write + e.status + e.timeout))
end
