-- wrk: GET (the URL's path and query: the management identity search) as the admin.
-- Usage: wrk ... -s identity-search.lua URL -- ADMIN_TOKEN
local req

function init(args)
  req = wrk.format("GET", wrk.path, { ["zt-session"] = args[1], ["accept"] = "application/json" })
end

function request()
  return req
end

function done(summary, latency, requests)
  io.write(string.format("requests %d non2xx %d sockerr %d p50us %d p99us %d\n", summary.requests,
    summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
