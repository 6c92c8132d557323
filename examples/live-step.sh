#!/bin/sh
# Step the world of --live by hand: with --live-rate 0 it moves only when asked, so a run replays
# exactly by its --live-seed. Needs curl, and a helixd at HELIXD_URL (default http://127.0.0.1:8080)
# started with --live and --admin-token "$HELIXD_ADMIN_TOKEN".
set -eu
HELIXD_URL=${HELIXD_URL:-http://127.0.0.1:8080}
: "${HELIXD_ADMIN_TOKEN:?set HELIXD_ADMIN_TOKEN to the server's --admin-token}"
admin() { curl -s -w '\n' -H "Authorization: Bearer $HELIXD_ADMIN_TOKEN" "$@"; }

admin -X POST -H 'Content-Type: application/json' -d '{"events": 100}' "$HELIXD_URL/admin/live/step"
# {"events":100,"kinds":{"viewers":57,"live":6,...}}
admin "$HELIXD_URL/admin/live"   # {"rate":0,"seed":1234,"events":100}
