#!/usr/bin/env bash
# Installs what isaforge needs on Debian 12 (bookworm): cross GCC for aarch64 and armhf, clang/lld/llvm 19,
# qemu-user >= 10 from bookworm-backports, and a .venv with isaforge installed editable.
# Idempotent: every step checks first, so `make` can call it on every run at almost no cost.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${ISAFORGE_VENV:-$here/.venv}
qemu_min_major=10

apt_packages=(
  gcc-aarch64-linux-gnu g++-aarch64-linux-gnu binutils-aarch64-linux-gnu libc6-dev-arm64-cross
  gcc-arm-linux-gnueabihf g++-arm-linux-gnueabihf binutils-arm-linux-gnueabihf libc6-dev-armhf-cross
  clang-19 lld-19 llvm-19 pkg-config ninja-build make python3-venv ccache cmake gcc libc6-dev
)

log() { printf 'install-toolchains: %s\n' "$*" >&2; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

missing_apt_packages() {
  local p
  for p in "${apt_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || printf '%s\n' "$p"
  done
}

qemu_major() {
  local v
  v=$(qemu-aarch64 --version 2>/dev/null | sed -n 's/.*version \([0-9]*\)\..*/\1/p' | head -n1)
  printf '%s\n' "${v:-0}"
}

# The URI that already serves the plain `bookworm` suite, from deb822 .sources files or one-line sources.list.
debian_mirror_uri() {
  local f
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk '
      /^[[:space:]]*$/ { if (uri != "" && suite) { print uri; exit } uri=""; suite=0; next }
      /^URIs:/ { uri=$2 }
      /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == "bookworm") suite=1 }
      END { if (uri != "" && suite) print uri }
    ' "$f" | head -n1
  done | head -n1 | grep . && return 0
  # One-line format: `deb [options] URI suite components`.
  { cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true; } \
    | sed 's/\[[^]]*\]//' | awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' | grep .
}

ensure_backports_suite() {
  local list=/etc/apt/sources.list.d/isaforge-bookworm-backports.sources uri
  if grep -rqs 'bookworm-backports' /etc/apt/sources.list /etc/apt/sources.list.d/; then return 0; fi
  uri=$(debian_mirror_uri) || { log "no apt source serves 'bookworm'; add one, then rerun"; exit 1; }
  log "adding bookworm-backports from the configured mirror"
  as_root tee "$list" >/dev/null <<SRC
Types: deb
URIs: $uri
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
  as_root apt-get update -q
}

install_system_packages() {
  local need
  need=$(missing_apt_packages)
  if [ -n "$need" ]; then
    log "installing: $(echo $need)"
    as_root apt-get update -q
    # shellcheck disable=SC2086
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends $need
  fi
  if [ "$(qemu_major)" -lt "$qemu_min_major" ]; then
    ensure_backports_suite
    log "installing qemu-user from bookworm-backports"
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends \
      -t bookworm-backports qemu-user
  fi
  [ "$(qemu_major)" -ge "$qemu_min_major" ] || { log "qemu-user >= $qemu_min_major still missing"; exit 1; }
}

install_python_env() {
  local stamp=$venv/.isaforge-installed
  if [ -f "$stamp" ] && [ "$stamp" -nt "$here/pyproject.toml" ]; then return 0; fi
  log "creating $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q -e "$here[test]"
  touch "$stamp"
}

if [ "${1:-}" != "--python-only" ]; then install_system_packages; fi
install_python_env
