-- What every script of the independent bench shares (loaded with dofile; run.sh runs wrk from the repository
-- root): cycling through prepared requests, and the one result line run.sh reads.
local common = {}

-- A request() that sends the prepared requests in turn.
function common.cycle(reqs)
  local i = 0
  return function()
    i = i % #reqs + 1
    return reqs[i]
  end
end

-- Fills `reqs` with make(line) for each non-empty line of a file (make may answer nil to skip a line).
function common.fill(reqs, path, make)
  for line in io.lines(path) do
    if line ~= "" then reqs[#reqs + 1] = make(line) end
  end
end

-- The result line: requests, non-2xx answers, socket errors, p50 and p99 latency in µs.
function common.report(summary, latency)
  local e = summary.errors
  io.write(string.format("requests %d non2xx %d sockerr %d p50us %d p99us %d\n", summary.requests, e.status,
    e.connect + e.read + e.write + e.timeout, latency:percentile(50), latency:percentile(99)))
end

return common
