-- wrk: POST (the URL's path) {"username": …, "password": …} as each load user in turn (a password login each
-- request; the bare server's /argon2/KEY route runs one Argon2id verification and answers the same bytes).
-- Usage: wrk ... -s authenticate.lua URL -- LOGINS_FILE   (lines "username password")
local reqs, i = {}, 0

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

function request()
  i = i % #reqs + 1
  return reqs[i]
end

function done(summary, latency, requests)
  io.write(string.format("requests %d non2xx %d sockerr %d p50us %d p99us %d\n", summary.requests,
    summary.errors.status, summary.errors.connect + summary.errors.read + summary.errors.write + summary.errors.timeout,
    latency:percentile(50), latency:percentile(99)))
end
