#!/bin/sh
# The driven clock: read it, move it forward (development profile). Needs curl and jq, and a
# helixd at HELIXD_URL (default http://127.0.0.1:8080) started with --admin-token "$HELIXD_ADMIN_TOKEN".
set -eu
HELIXD_URL=${HELIXD_URL:-http://127.0.0.1:8080}
: "${HELIXD_ADMIN_TOKEN:?set HELIXD_ADMIN_TOKEN to the server's --admin-token}"
clock() {
  curl -s -w '\n' -H "Authorization: Bearer $HELIXD_ADMIN_TOKEN" -H 'Content-Type: application/json' \
    "$@" "$HELIXD_URL/admin/clock"
}

clock                           # {"now":"...","real_now":"...","offset_ms":...,"speed":1}
clock -d '{"advance": "4h"}'    # four hours later: every user token minted before has expired
# to an instant: a week after the server's now
week=$(clock | jq -r '.now | sub("\\.[0-9]+Z$"; "Z") | fromdate + 7 * 86400 | todate')
clock -d "{\"to\": \"$week\"}"
clock -d '{"to": "2020-01-01T00:00:00Z"}'   # a 400: the clock only moves forward
