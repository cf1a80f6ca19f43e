-- wrk: POST (the URL's path) {"username": …, "password": …} as each load user in turn (a password login each
-- request; the bare server's /argon2/KEY route runs one Argon2id verification and answers the same bytes).
-- Usage: wrk ... -s authenticate.lua URL -- LOGINS_FILE   (lines "username password")
local common = dofile("bench/independent/common.lua")
local reqs = {}

function init(args)
  common.fill(reqs, args[1], function(line)
    local user, pass = line:match("^(%S+) (%S+)$")
    return user and wrk.format("POST", wrk.path, {
      ["accept"] = "application/json",
      ["content-type"] = "application/json",
    }, string.format('{"username":"%s","password":"%s"}', user, pass))
  end)
end

request = common.cycle(reqs)

function done(summary, latency, requests)
  common.report(summary, latency)
end
