-- wrk: GET (the URL's path and query: the management identity search) as the admin.
-- Usage: wrk ... -s identity-search.lua URL -- ADMIN_TOKEN
local common = dofile("bench/independent/common.lua")
local reqs = {}

function init(args)
  reqs[1] = wrk.format("GET", wrk.path, { ["zt-session"] = args[1], ["accept"] = "application/json" })
end

request = common.cycle(reqs)

function done(summary, latency, requests)
  common.report(summary, latency)
end
