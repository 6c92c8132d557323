#!/usr/bin/env bash
# scripts/ci-sqlite.sh BIN: node_modules/better-sqlite3 made to load in the Node.js of the folder BIN
# (as scripts/ci-node.sh prints it). better-sqlite3 is a native addon built for one Node.js ABI
# (process.versions.modules: 127 for Node 22, 137 for Node 24); `npm ci` builds it for the Node that
# runs npm, compiling SQLite from source where no prebuilt binary can be downloaded (minutes of one
# core). So each binary built is kept in a cache folder outside the checkout, named as
# better-sqlite3's own prebuilt downloads are:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/helixd-ci/prebuilds/better-sqlite3-v<version>-node-v<abi>-linux-x64.tar.gz
# and put back from there when that Node is switched to again; `npm ci` finds it there too, given
#   npm_config_better_sqlite3_local_prebuilds=${XDG_CACHE_HOME:-$HOME/.cache}/helixd-ci/prebuilds
# A binary is kept or put back only once it has opened a database in that Node.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=${1:?usage: scripts/ci-sqlite.sh BIN (a folder holding node, as scripts/ci-node.sh prints it)}
node="$bin/node"
module=node_modules/better-sqlite3
binary=build/Release/better_sqlite3.node
prebuilds="${XDG_CACHE_HOME:-$HOME/.cache}/helixd-ci/prebuilds"
[[ -f $module/package.json ]] || {
  echo "ci-sqlite: no $module here: run npm ci first" >&2
  exit 1
}
version=$("$node" -p "require('./$module/package.json').version")
abi=$("$node" -p process.versions.modules)
name="better-sqlite3-v$version-node-v$abi-$("$node" -p 'process.platform + "-" + process.arch').tar.gz"
nodever=$("$node" --version)

loads() { "$node" -e "new (require('./$module'))(':memory:').close()" 2>/dev/null; }

if loads; then
  echo "ci-sqlite: better-sqlite3 $version already built for Node.js $nodever (ABI $abi)" >&2
elif [[ -f $prebuilds/$name ]] && tar -xzf "$prebuilds/$name" -C "$module" "$binary" && loads; then
  echo "ci-sqlite: better-sqlite3 $version for Node.js $nodever (ABI $abi) taken from $prebuilds" >&2
else
  echo "ci-sqlite: compiling better-sqlite3 $version for Node.js $nodever (ABI $abi)" >&2
  start=$SECONDS
  PATH="$bin:$PATH" npm_config_nodedir="$(dirname "$bin")" npm rebuild better-sqlite3 >&2
  loads || {
    echo "ci-sqlite: better-sqlite3 built for $nodever does not load in it" >&2
    exit 1
  }
  echo "ci-sqlite: compiled in $((SECONDS - start)) s" >&2
fi
if [[ ! -f $prebuilds/$name ]]; then
  mkdir -p "$prebuilds"
  tar -czf "$prebuilds/$name.$$" -C "$module" "$binary"
  mv "$prebuilds/$name.$$" "$prebuilds/$name"
  echo "ci-sqlite: kept as $prebuilds/$name" >&2
fi
