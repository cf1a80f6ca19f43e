-- wrk: POST (the URL's path) {"username": …, "password": …} as each load user in turn (a password login each
-- request; the bare server's /argon2/KEY route runs one Argon2id verification and answers the same bytes).
-- Usage: wrk ... -s authenticate.lua URL -- LOGINS_FILE   (lines "username password")
local common = dofile("bench/independent/common.lua")
local reqs = {}

function init(args)
  for line in io.lines(args[1]) do
    local user, pass = line:match("^(%S+) (%S+)$")
    if user then
      reqs[#reqs + 1] = wrk.format("POST", wrk.path, {
        ["accept"] = "application/json",
        ["content-type"] = "application/json",
      }, string.format('{"username":"%s","password":"%s"}', user, pass))
    end
  end
end

request = common.cycle(reqs)

function done(summary, latency, requests)
  common.report(summary, latency)
end
