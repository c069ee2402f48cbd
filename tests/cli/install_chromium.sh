#!/usr/bin/env bash
# Installs Debian's chromium when it is missing: the atlas's tests load the page in headless
# Chromium (tests/cli/browser.py). The same apt steps as tests/e2e/vscode/setup.sh.
set -euo pipefail
[ -x /usr/bin/chromium ] && exit 0
SUDO=()
if [ "$(id -u)" != 0 ]; then
  command -v sudo >/dev/null || { echo "need root (or sudo) to install chromium" >&2; exit 1; }
  SUDO=(sudo)
fi
export DEBIAN_FRONTEND=noninteractive
if ! "${SUDO[@]}" apt-get install -y --no-install-recommends chromium; then
  "${SUDO[@]}" apt-get update
  "${SUDO[@]}" apt-get install -y --no-install-recommends chromium
fi
[ -x /usr/bin/chromium ] || { echo "/usr/bin/chromium is missing after the install" >&2; exit 1; }
