#!/usr/bin/env bash
# The independent bench (docs/policy-engine.md, "An independent bench: wrk"): a second measurement of the hot
# requests by different code.
# The servers come from bench/independent/serve.ts (the project's model build, built controller and bare
# same-bytes server); the load is wrk's (C, its own TLS and HTTP code, Lua scripts in this directory) and the
# CPU per request is read here, from /proc/<pid>/stat, around each wrk run. Nothing of the project's load
# generator or accounting (bench/cannon.ts, bench/proc.ts, bench/report.ts) is on this path.
#
# Usage: [WRK_THREADS=1] [MODEL=KEPT_DATA_DIR] bench/independent/run.sh [SIZE=small] [SECONDS=5] [CONNECTIONS=16] [WARMUP=1]   (after npm run build;
# needs wrk: apt-get install wrk; MODEL: a data dir of that size kept by `bench/run.ts --keep`, measured instead
# of a new build). Each scenario: controller then bare server, SECONDS each after WARMUP.
set -euo pipefail
cd "$(dirname "$0")/../.."
size=${1:-small}
seconds=${2:-5}
connections=${3:-16}
warmup=${4:-1}
here=bench/independent
command -v wrk > /dev/null || { echo "wrk is not installed (apt-get install wrk)" >&2; exit 2; }
[ -f dist/cli/main.js ] || { echo "dist/ is missing: npm run build first" >&2; exit 2; }

work=$(mktemp -d)
node --import tsx "$here/serve.ts" "$size" "$work" "$seconds" &
serve=$!
trap 'kill -TERM "$serve" 2> /dev/null || true; wait "$serve" 2> /dev/null || true; rm -rf "$work"' EXIT
until [ -f "$work/env" ]; do
  kill -0 "$serve" 2> /dev/null || { echo "the servers did not start" >&2; exit 1; }
  sleep 0.2
done
# shellcheck disable=SC1091
. "$work/env"
hz=$(getconf CLK_TCK)
# wrk's threads (WRK_THREADS, default 1: one core for the load, as the project's bench; 2 competes with the
# server for both cores of the 2-core machine and inflates both servers' p99); new-sessions.lua
# splits its pairs between them.
export WRK_THREADS=${WRK_THREADS:-1}

# utime + stime (fields 14 and 15) of a process, in clock ticks; fields are counted after the command name's
# closing parenthesis, which may itself hold spaces.
ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }

# run NAME PID URL SCRIPT ARGS... → one result line: requests, non-2xx, socket errors, p50/p99 µs, CPU ticks.
run() {
  local who=$1 pid=$2 url=$3 script=$4
  shift 4
  wrk -t"$WRK_THREADS" -c"$connections" -d"${warmup}s" -s "$here/$script" "$url" -- "$@" > /dev/null
  local t0 t1 line
  t0=$(ticks "$pid")
  local out
  out=$(wrk -t"$WRK_THREADS" -c"$connections" -d"${seconds}s" -s "$here/$script" "$url" -- "$@")
  t1=$(ticks "$pid")
  line=$(grep '^requests ' <<< "$out")
  # new-sessions.lua: pairs sent again once the file ran out are repeats, not new sessions (the controller's
  # matter; the bare server answers the same bytes either way).
  if [ "$who" = edgectl ] && grep -q '^reused [1-9]' <<< "$out"; then echo "  ! $who: the pairs ran out; later requests were repeats" >&2; fi
  echo "$line ticks $((t1 - t0))"
}

printf '\nindependent bench (wrk -t%s -c%s, %s s after %s s warm-up), size %s\n\n' "$WRK_THREADS" "$connections" "$seconds" "$warmup" "$size"
printf '%-36s %9s %9s %9s %9s %9s %8s\n' 'scenario / server' 'req/s' 'p50 ms' 'p99 ms' 'CPU µs' 'ticks' 'errors'
scenario() {
  local title=$1 key=$2 script=$3 path=$4
  shift 4
  local ctl bare
  ctl=$(run edgectl "$CTL_PID" "$CTL_URL$path" "$script" "$@")
  bare=$(run bare "$BARE_PID" "$BARE_URL/${BARE_ROUTE:-same}/$key" "$script" "$@")
  printf '%s\n%s\n%s\n' "$title" "$ctl" "$bare" | awk -v hz="$hz" -v s="$seconds" '
    NR == 1 { title = $0; next }
    {
      # requests N non2xx N sockerr N p50us N p99us N ticks N
      n[NR] = $2; err[NR] = $4 + $6; p50[NR] = $8 / 1000; p99[NR] = $10 / 1000; t[NR] = $12
      cpu[NR] = n[NR] > 0 ? $12 * 1e6 / hz / n[NR] : 0
    }
    END {
      print title
      split("edgectl bare", who, " ")
      for (i = 2; i <= 3; i++)
        printf "  %-34s %9.0f %9.2f %9.2f %9.0f %9d %8d\n", who[i - 1], n[i] / s, p50[i], p99[i], cpu[i], t[i], err[i]
      printf "  -> throughput %.0f %% of bare; CPU per request %.2fx bare\n", 100 * n[2] / n[3], cpu[2] / cpu[3]
    }'
}
# The bare server is asked the same request (headers, JSON body) on its /same/KEY route: the Lua scripts take
# the path from the URL.
scenario 'client service list (default page)' service-list service-list.lua "$SERVICE_LIST_PATH" \
  "$work/tokens"
# The session mix (100 identities, up to 512 (identity, service) pairs, cycled; the bare server answers each line
# with the controller's answer to it), then the one-service repeat as an extra line.
scenario "session create (Dial, mix of $MIX_PAIRS pairs)" session-dial-mix session-mix.lua "$SESSION_PATH" \
  "$work/mix"
scenario 'session create (Dial, repeat)' session-dial session-create.lua "$SESSION_PATH" \
  "$work/tokens" "$SERVICE_ID"
scenario 'management identity search' identity-search identity-search.lua "$SEARCH_PATH" \
  "$ADMIN_TOKEN"
scenario 'client service list (limit 500)' service-list-500 service-list.lua "$SERVICE_LIST_PATH?limit=500" \
  "$work/tokens"
# A fresh (API session, service) pair each request, none sent twice (new-sessions.lua); the bare server is
# sent the same requests on its same-bytes route.
scenario 'session create (new session each request)' new-sessions new-sessions.lua "$SESSION_PATH" \
  "$work/pairs"
# A password login each request; the bare server verifies one Argon2id hash with the same parameters first.
BARE_ROUTE=argon2 scenario 'authenticate (password)' authenticate authenticate.lua "$AUTH_PATH" "$work/logins"
