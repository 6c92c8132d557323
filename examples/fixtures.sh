#!/bin/sh
# Against a helixd started from the example fixture world:
#   npx helixd serve --fixtures fixtures/example-world.json --db test.db
# the fixture's client (its secret is in the file) and a user token of alice (id 1001), who has
# exactly three subscribers. Needs curl and jq; HELIXD_URL defaults to http://127.0.0.1:8080.
set -eu
HELIXD_URL=${HELIXD_URL:-http://127.0.0.1:8080}
CLIENT_ID=examplefixtureclient0000000001
CLIENT_SECRET=example-fixture-secret-0001

# An app token of the fixture's client
curl -s -X POST "$HELIXD_URL/oauth2/token" -d grant_type=client_credentials \
  -d "client_id=$CLIENT_ID" -d "client_secret=$CLIENT_SECRET"
echo
# A user token of alice, minted by the development profile's POST /auth/authorize
TOKEN=$(curl -sf -X POST "$HELIXD_URL/auth/authorize" -d grant_type=user_token -d user_id=1001 \
  -d "client_id=$CLIENT_ID" -d "client_secret=$CLIENT_SECRET" -d scope=channel:read:subscriptions |
  jq -r .access_token)
curl -s -H "Authorization: Bearer $TOKEN" -H "Client-Id: $CLIENT_ID" \
  "$HELIXD_URL/helix/subscriptions?broadcaster_id=1001" | jq -c '{total, users: [.data[].user_login]}'
