#!/usr/bin/env bash
# Installs what the real-Emacs end-to-end test needs, idempotently, from Debian packages:
# emacs-nox (Emacs 28 on bookworm), elpa-eglot (eglot 1.9) and elpa-markdown-mode (the
# mode memories open in; eglot picks its server by major mode). Nothing is installed when
# they are present. Usage: tests/e2e/emacs/setup.sh
set -euo pipefail

say() { printf '[emacs setup] %s\n' "$*" >&2; }

APT_PACKAGES=(emacs-nox elpa-eglot elpa-markdown-mode)
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
else
  say "up to date"
fi
command -v emacs >/dev/null || { say "emacs is missing after the install"; exit 1; }
say "ready: $(emacs --version | head -1), eglot $(dpkg-query -W -f='${Version}' elpa-eglot)"
