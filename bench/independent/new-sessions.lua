-- wrk: POST (the URL's path) {"serviceId": S, "type": "Dial"} with a fresh API session T, a new (T, S) pair each
-- request, so every answer is a new session (201). The pairs file has one "token serviceId" a line; wrk thread
-- n of N (N: $WRK_THREADS) takes lines base + n, base + n + N, … where base is where the previous wrk run over
-- the same file stopped (kept in PAIRS_FILE.next), so no pair is sent twice while the file lasts; past its end
-- it starts again and those answers are repeats, reported on the "reused" line.
-- Usage: wrk ... -s new-sessions.lua URL -- PAIRS_FILE
local common = dofile("bench/independent/common.lua")
local threads = {}
-- Globals, so the main state can read them from each thread (thread:get) when the run is done.
list, at, step, reused, file = {}, 0, 1, 0, nil

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

local function base_of(path)
  local f = io.open(path .. ".next", "r")
  if not f then return 0 end
  local n = tonumber(f:read("*l") or "0") or 0
  f:close()
  return n
end

function init(args)
  file = args[1]
  for line in io.lines(file) do
    local token, service = line:match("^(%S+) (%S+)$")
    if token then list[#list + 1] = { token, service } end
  end
  step = tonumber(os.getenv("WRK_THREADS") or "2")
  at = base_of(file) + (tid or 1) - step
end

function request()
  at = at + step
  if at > #list then
    at = (tid or 1)
    reused = reused + 1
  end
  local p = list[at]
  return wrk.format("POST", wrk.path, {
    ["zt-session"] = p[1],
    ["accept"] = "application/json",
    ["content-type"] = "application/json",
  }, string.format('{"serviceId":"%s","type":"Dial"}', p[2]))
end

function done(summary, latency, requests)
  local again, last, path = 0, 0, nil
  for _, t in ipairs(threads) do
    again = again + (t:get("reused") or 0)
    last = math.max(last, t:get("at") or 0)
    path = path or t:get("file")
  end
  if path then
    local f = io.open(path .. ".next", "w")
    f:write(tostring(last) .. "\n")
    f:close()
  end
  common.report(summary, latency)
  io.write(string.format("reused %d\n", again))
end
