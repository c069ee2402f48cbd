# Sourced by the setup scripts that install pinned npm packages (tests/e2e/vscode/setup.sh,
# tests/mcp/node/setup.sh); the caller defines `say`.
#
# install_locked SRC_DIR DEST_DIR: copies package.json + package-lock.json and runs `npm ci`
# there, unless DEST_DIR already holds an install of exactly these two files (its stamp).
stamp_of() { cat "$1/package.json" "$1/package-lock.json" | sha256sum | cut -d' ' -f1; }
install_locked() {
  local src="$1" dest="$2" want
  want="$(stamp_of "$src")"
  if [ -f "$dest/.installed" ] && [ "$(cat "$dest/.installed")" = "$want" ] && [ -d "$dest/node_modules" ]; then
    say "$(basename "$dest"): up to date"
    return 0
  fi
  say "$(basename "$dest"): npm ci (node $(node --version))"
  rm -rf "$dest"
  mkdir -p "$dest"
  cp "$src/package.json" "$src/package-lock.json" "$dest/"
  (cd "$dest" && npm ci --no-audit --no-fund --loglevel=warn)
  echo "$want" >"$dest/.installed"
}
