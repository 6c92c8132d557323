#!/bin/sh
# One request, one fault: the Helixd-Fault header (development profile). Needs curl and jq, and a
# helixd at HELIXD_URL (default http://127.0.0.1:8080).
set -eu
HELIXD_URL=${HELIXD_URL:-http://127.0.0.1:8080}
CLIENT_ID=${CLIENT_ID:-$(curl -sf "$HELIXD_URL/units/clients" | jq -r '.data[0].ID')}
CLIENT_SECRET=${CLIENT_SECRET:-$(curl -sf "$HELIXD_URL/units/clients" | jq -r '.data[0].Secret')}
TOKEN=$(curl -sf -X POST "$HELIXD_URL/oauth2/token" -d grant_type=client_credentials \
  -d "client_id=$CLIENT_ID" -d "client_secret=$CLIENT_SECRET" | jq -r .access_token)
get() { curl -s -i -w '\n' -H "Authorization: Bearer $TOKEN" -H "Client-Id: $CLIENT_ID" "$@"; }

# An empty bucket's 429, whose Ratelimit-Reset is a minute away...
get -H 'Helixd-Fault: status=429' "$HELIXD_URL/helix/games/top"
# ... or a second away, so that a retry waits a second
get -H 'Helixd-Fault: status=429, ratelimit-reset=1s' "$HELIXD_URL/helix/games/top"
# 800 ms late, then a 503
get -H 'Helixd-Fault: latency=800ms, status=503' "$HELIXD_URL/helix/clips?id=1"
# no answer at all: the connection is reset
get -H 'Helixd-Fault: reset' "$HELIXD_URL/helix/streams" || echo "curl exit $?: connection reset"
# a header helixd cannot read is a 400 that says why
get -H 'Helixd-Fault: status=404' "$HELIXD_URL/helix/games/top"
