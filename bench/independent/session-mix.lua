-- wrk: the session mix. POST (the URL's path) {"serviceId": S, "type": "Dial"} with token T for each line
-- "T S" of MIX_FILE in turn (many identities, each dialling the services it may use; after the first round each
-- answer is the identity's existing session, 201). Asked of the bare server (a URL path under /same/), the n-th
-- line goes to /same/KEY.n, which serve.ts primed with the controller's own answer to that line: both servers
-- send the same bytes request for request.
-- Usage: wrk ... -s session-mix.lua URL -- MIX_FILE
local common = dofile("bench/independent/common.lua")
local reqs = {}

function init(args)
  local bare = wrk.path:match("^/same/") ~= nil
  common.fill(reqs, args[1], function(line)
    local token, service = line:match("^(%S+) (%S+)$")
    if not token then return nil end
    local path = bare and (wrk.path .. "." .. (#reqs + 1)) or wrk.path
    return wrk.format("POST", path, {
      ["zt-session"] = token,
      ["accept"] = "application/json",
      ["content-type"] = "application/json",
    }, string.format('{"serviceId":"%s","type":"Dial"}', service))
  end)
end

request = common.cycle(reqs)

function done(summary, latency, requests)
  common.report(summary, latency)
end
