#!/usr/bin/env bash
# Installs what the benchmarks need, idempotently and only when missing:
#   - strace (Debian): bench/faults.py kills actions at each write with it (`make test` runs
#     `bench/setup.sh --tools`, which installs only this);
#   - golang-1.19-src (Debian): Go's own sources in /usr/share/go-1.19/src;
#   - openjdk-17-source (Debian), only when no JDK src.zip is on the machine at all.
# Nothing is downloaded when the benchmark runs; a language whose sources are still absent
# is skipped by it with a note. A second run with nothing missing does nothing.
# Usage: bench/setup.sh [--tools]
set -euo pipefail

say() { printf '[bench setup] %s\n' "$*"; }

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'install ok installed'; }

missing=()
command -v strace >/dev/null || missing+=(strace)
if [ "${1:-}" = "--tools" ]; then
  :
elif [ ! -d /usr/share/go-1.19/src ] && ! installed golang-1.19-src; then
  missing+=(golang-1.19-src)
fi
if [ "${1:-}" != "--tools" ] && [ ! -f /usr/lib/jvm/temurin-25-jdk-amd64/lib/src.zip ] \
  && [ ! -f /usr/lib/jvm/java-17-openjdk-amd64/lib/src.zip ] \
  && ! installed openjdk-17-source; then
  missing+=(openjdk-17-source)
fi
if ((${#missing[@]} == 0)); then
  say "nothing missing"
  exit 0
fi
command -v apt-get >/dev/null || { say "no apt-get: not installing ${missing[*]}"; exit 0; }
SUDO=()
if [ "$(id -u)" != 0 ]; then
  # Not an error: the benchmark skips a language whose sources are absent, with a note.
  command -v sudo >/dev/null || { say "need root (or sudo) to install: ${missing[*]}"; exit 0; }
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
