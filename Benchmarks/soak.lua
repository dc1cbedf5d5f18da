-- wrk script for Benchmarks/soak.sh: one kind of request per wrk process, at a steady pace.
-- Environment:
--   SOAK_BODY   file with an XML-RPC methodCall to POST to the path given to wrk; "@DEVICE@" in it is
--               replaced by a random device id on every request (new identities keep arriving).
--               Unset: plain GET of the URL given to wrk (a signed file link).
--   SOAK_AUTH   base64 user:password for the XML-RPC calls.
--   SOAK_DELAY  milliseconds each connection waits after an answer before its next request.
-- done() prints one line "SOAKJSON {...}": counts, latency percentiles, errors and faults.

local body_file = os.getenv("SOAK_BODY")
local template = nil
if body_file and body_file ~= "" then
  local f = assert(io.open(body_file, "rb"))
  template = f:read("*a")
  f:close()
end
local pause = tonumber(os.getenv("SOAK_DELAY") or "0")
local threads = {}

function setup(thread)
  table.insert(threads, thread)
end

function init(args)
  faults, bad = 0, 0
  math.randomseed(os.time() + math.floor(os.clock() * 1e6))
  if template then
    wrk.method = "POST"
    wrk.headers["Content-Type"] = "text/xml"
    wrk.headers["Authorization"] = "Basic " .. os.getenv("SOAK_AUTH")
  end
end

function request()
  if template then
    local body = template:gsub("@DEVICE@", "soak-" .. math.random(1, 1000000))
    return wrk.format("POST", nil, nil, body)
  end
  return wrk.format("GET")
end

function delay()
  return pause
end

function response(status, headers, resp)
  if status ~= 200 then
    bad = bad + 1
  elseif template then
    if resp:find("<fault>", 1, true) then
      faults = faults + 1
    elseif not resp:find("</methodResponse>", 1, true) then
      bad = bad + 1
    end
  end
end

function done(summary, latency, requests)
  local fa, ba = 0, 0
  for _, t in ipairs(threads) do
    fa = fa + (t:get("faults") or 0)
    ba = ba + (t:get("bad") or 0)
  end
  local e = summary.errors
  io.write(string.format(
    'SOAKJSON {"requests":%d,"duration_us":%d,"bytes":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d,' ..
    '"errors":%d,"faults":%d,"bad":%d}\n',
    summary.requests, summary.duration, summary.bytes, latency:percentile(50), latency:percentile(90),
    latency:percentile(99), latency.max, e.connect + e.read + e.write + e.status + e.timeout, fa, ba))
end
