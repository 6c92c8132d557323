#!/bin/sh
# Faults at random for a stretch of a run: PUT /admin/faults, then DELETE (development profile).
# Needs curl and jq, and a helixd at HELIXD_URL (default http://127.0.0.1:8080) started with
# --admin-token "$HELIXD_ADMIN_TOKEN".
set -eu
HELIXD_URL=${HELIXD_URL:-http://127.0.0.1:8080}
: "${HELIXD_ADMIN_TOKEN:?set HELIXD_ADMIN_TOKEN to the server's --admin-token}"
CLIENT_ID=${CLIENT_ID:-$(curl -sf "$HELIXD_URL/units/clients" | jq -r '.data[0].ID')}
CLIENT_SECRET=${CLIENT_SECRET:-$(curl -sf "$HELIXD_URL/units/clients" | jq -r '.data[0].Secret')}
# The token first: the rules refuse token calls too.
TOKEN=$(curl -sf -X POST "$HELIXD_URL/oauth2/token" -d grant_type=client_credentials \
  -d "client_id=$CLIENT_ID" -d "client_secret=$CLIENT_SECRET" | jq -r .access_token)
admin() { curl -s -w '\n' -H "Authorization: Bearer $HELIXD_ADMIN_TOKEN" "$@"; }

# 30% of requests refused with a 429, 10% 200 ms late, drawn from seed 7: the same requests in the
# same order get the same faults in every run.
admin -X PUT -H 'Content-Type: application/json' \
  -d '{"faults": "429:30%, latency:200ms:10%", "seed": 7}' "$HELIXD_URL/admin/faults"
trap 'admin -X DELETE "$HELIXD_URL/admin/faults"' EXIT   # rules left on would fail later runs
admin "$HELIXD_URL/admin/faults"   # {"faults":"429:30%, latency:200ms:10%","seed":7}

for i in 1 2 3 4 5 6 7 8 9 10; do
  curl -s -o /dev/null -w '%{http_code} ' -H "Authorization: Bearer $TOKEN" \
    -H "Client-Id: $CLIENT_ID" "$HELIXD_URL/helix/games/top?first=$i"
done
echo
