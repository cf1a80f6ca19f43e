-- wrk: POST (the URL's path) {"serviceId": SERVICE_ID, "type": "Dial"} as each load user in turn (the repeat path: the
-- user's existing session for the service is returned, 201).
-- Usage: wrk ... -s session-create.lua URL -- TOKENS_FILE SERVICE_ID
local common = dofile("bench/independent/common.lua")
local reqs = {}

function init(args)
  local body = string.format('{"serviceId":"%s","type":"Dial"}', args[2])
  common.fill(reqs, args[1], function(token)
    return wrk.format("POST", wrk.path, {
      ["zt-session"] = token,
      ["accept"] = "application/json",
      ["content-type"] = "application/json",
    }, body)
  end)
end

request = common.cycle(reqs)

function done(summary, latency, requests)
  common.report(summary, latency)
end
