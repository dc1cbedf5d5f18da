-- wrk script for Benchmarks/store_notice_bench.py: posts pre-signed App Store Server Notifications, each once.
-- Environment:
--   NOTICE_BODIES  prefix of the body files: thread N (from 0) of wrk reads NOTICE_BODIES.N, one JSON body
--                  ({"signedPayload": "<JWS>"}) a line, and posts them in order, each once, to NOTICE_PATH.
--   NOTICE_PATH    default /store/apple/quiosc.
-- Once a thread has posted all its bodies, a connection that asks for one more request gets GET /healthz (wrk
-- always wants a request), counted apart. As soon as every notification it posted is answered, the thread stops
-- and creates the file NOTICE_BODIES.done.N: wrk's main thread sleeps for -d whatever its threads do, so the caller
-- waits for these files and then sends wrk SIGINT, which ends the run (summary and done() as usual).
-- done() prints one line "NOTICEJSON {...}": the notifications answered per outcome (the 200 body: applied,
-- recorded, duplicate), those answered otherwise ("bad", the first of them shown), the filler /healthz calls,
-- wrk's errors and latency percentiles.

local prefix = assert(os.getenv("NOTICE_BODIES"), "NOTICE_BODIES is not set")
local path = os.getenv("NOTICE_PATH") or "/store/apple/quiosc"
local threads = {}
local created = 0

function setup(thread)
  thread:set("id", created)
  created = created + 1
  table.insert(threads, thread)
end

function init(args)
  bodies = {}
  for line in io.lines(prefix .. "." .. id) do
    bodies[#bodies + 1] = line
  end
  total = #bodies
  sent, filler_sent = 0, 0
  -- wrk calls request() once on thread 0 before the run, to check the request it makes: that one is not sent.
  checked = id ~= 0
  applied, recorded, duplicate, bad, filler, first_bad = 0, 0, 0, 0, 0, ""
end

function request()
  if not checked then
    checked = true
    return wrk.format("POST", path, {["Content-Type"] = "application/json"}, bodies[1])
  end
  if sent < total then
    sent = sent + 1
    return wrk.format("POST", path, {["Content-Type"] = "application/json"}, bodies[sent])
  end
  filler_sent = filler_sent + 1
  return wrk.format("GET", "/healthz")
end

local function finished()
  return applied + recorded + duplicate + bad >= total
end

function response(status, headers, body)
  if status == 200 and body == "applied\n" then
    applied = applied + 1
  elseif status == 200 and body == "recorded\n" then
    recorded = recorded + 1
  elseif status == 200 and body == "duplicate\n" then
    duplicate = duplicate + 1
  elseif status == 200 and body == "ok\n" and filler < filler_sent then
    filler = filler + 1
  else
    bad = bad + 1
    if first_bad == "" then
      first_bad = status .. " " .. string.sub(body or "", 1, 200)
    end
  end
  if finished() then
    wrk.thread:stop()
    assert(io.open(prefix .. ".done." .. id, "w")):close()
  end
end

local function quoted(text)
  return '"' .. text:gsub('[%c"\\]', function(c) return string.format("\\u%04x", c:byte()) end) .. '"'
end

function done(summary, latency, requests)
  local sums = {total = 0, applied = 0, recorded = 0, duplicate = 0, bad = 0, filler = 0}
  local shown = ""
  for _, t in ipairs(threads) do
    for name, _ in pairs(sums) do
      sums[name] = sums[name] + (t:get(name) or 0)
    end
    if shown == "" then shown = t:get("first_bad") or "" end
  end
  local e = summary.errors
  io.write(string.format(
    'NOTICEJSON {"notices":%d,"applied":%d,"recorded":%d,"duplicate":%d,"bad":%d,"first_bad":%s,"filler":%d,' ..
    '"requests":%d,"duration_us":%d,"errors":%d,"p50_us":%d,"p99_us":%d,"max_us":%d}\n',
    sums.total, sums.applied, sums.recorded, sums.duplicate, sums.bad, quoted(shown), sums.filler,
    summary.requests, summary.duration, e.connect + e.read + e.write + e.status + e.timeout,
    latency:percentile(50), latency:percentile(99), latency.max))
end
