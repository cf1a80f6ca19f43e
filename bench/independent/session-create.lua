-- wrk: POST (the URL's path) {"serviceId": SERVICE_ID, "type": "Dial"} as each load user in turn (the repeat path: the
-- user's existing session for the service is returned, 201).
-- Usage: wrk ... -s session-create.lua URL -- TOKENS_FILE SERVICE_ID
local reqs, i = {}, 0

function init(args)
  local body = string.format('{"serviceId":"%s","type":"Dial"}', args[2])
  for token in io.lines(args[1]) do
    if token ~= "" then
      reqs[#reqs + 1] = wrk.format("POST", wrk.path, {
        ["zt-session"] = token,
        ["accept"] = "application/json",
        ["content-type"] = "application/json",
      }, body)
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
