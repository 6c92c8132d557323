#!/bin/sh
# Your own records through the admin API: a user, a game and a live stream in one transaction, then
# the stream changed, listed and deleted (and the user and game with it, so that it runs again).
# Needs curl, and a helixd at HELIXD_URL (default http://127.0.0.1:8080) started with
# --admin-token "$HELIXD_ADMIN_TOKEN".
set -eu
HELIXD_URL=${HELIXD_URL:-http://127.0.0.1:8080}
: "${HELIXD_ADMIN_TOKEN:?set HELIXD_ADMIN_TOKEN to the server's --admin-token}"
admin() { curl -s -w '\n' -H "Authorization: Bearer $HELIXD_ADMIN_TOKEN" "$@"; }

admin -H 'Content-Type: application/json' "$HELIXD_URL/admin/batch" -d '[
  {"kind": "user", "data": {"id": "900001", "login": "ada", "display_name": "Ada",
    "broadcaster_type": "partner", "description": "", "created_at": "2024-01-01T00:00:00Z"}},
  {"kind": "game", "data": {"id": "990001", "name": "Admin Quest"}},
  {"kind": "stream", "data": {"id": "77000001", "user_id": "900001", "game_id": "990001",
    "title": "Hello", "tags": [], "viewer_count": 42, "started_at": "2024-06-01T10:00:00Z",
    "language": "en", "is_mature": false}}
]'
admin -X PATCH -H 'Content-Type: application/json' -d '{"viewer_count": 99}' \
  "$HELIXD_URL/admin/streams/77000001"
admin "$HELIXD_URL/admin/streams/77000001"
# Offline, then gone: a record still named by another is a 409 that names them, so the stream
# first, then the user (its channel, which keeps the stream's game, goes with it), then the game.
admin -X DELETE "$HELIXD_URL/admin/streams/77000001"
admin "$HELIXD_URL/admin/channels/900001"
admin -X DELETE "$HELIXD_URL/admin/users/900001"
admin -X DELETE "$HELIXD_URL/admin/games/990001"
echo deleted
