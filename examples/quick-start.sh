#!/bin/sh
# The top games, with an app token minted from the demo client. Needs curl and jq, and a helixd
# in the development profile at HELIXD_URL (default http://127.0.0.1:8080).
set -eu
HELIXD_URL=${HELIXD_URL:-http://127.0.0.1:8080}
# The demo client and its secret, as GET /units/clients lists them, unless given.
CLIENT_ID=${CLIENT_ID:-$(curl -sf "$HELIXD_URL/units/clients" | jq -r '.data[0].ID')}
CLIENT_SECRET=${CLIENT_SECRET:-$(curl -sf "$HELIXD_URL/units/clients" | jq -r '.data[0].Secret')}
TOKEN=$(curl -sf -X POST "$HELIXD_URL/oauth2/token" -d grant_type=client_credentials \
  -d "client_id=$CLIENT_ID" -d "client_secret=$CLIENT_SECRET" | jq -r .access_token)

curl -s -H "Authorization: Bearer $TOKEN" -H "Client-Id: $CLIENT_ID" \
  "$HELIXD_URL/helix/games/top?first=5"
echo
