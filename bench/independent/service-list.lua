-- wrk: GET PATH as each load user in turn (the zt-session header of each token).
-- Usage: wrk ... -s service-list.lua URL -- TOKENS_FILE
local reqs, i = {}, 0

function init(args)
  for token in io.lines(args[1]) do
    if token ~= "" then
      reqs[#reqs + 1] = wrk.format("GET", wrk.path, { ["zt-session"] = token, ["accept"] = "application/json" })
    end
  end
end

function request()
  i = i % #reqs + 1
  return reqs[i]
end

function done(summary, latency, requests)
  io.write(string.format("requests %d non2xx %d sockerr %d p50us %d p99us %d\n", summary.requests,
    summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
