-- wrk: GET PATH as each load user in turn (the zt-session header of each token).
-- Usage: wrk ... -s service-list.lua URL -- TOKENS_FILE
local common = dofile("bench/independent/common.lua")
local reqs = {}

function init(args)
  common.fill(reqs, args[1], function(token)
    return wrk.format("GET", wrk.path, { ["zt-session"] = token, ["accept"] = "application/json" })
  end)
end

request = common.cycle(reqs)

function done(summary, latency, requests)
  common.report(summary, latency)
end
