#!/usr/bin/env bash
# Installs what isaforge needs on Debian 12 (bookworm): cross GCC for aarch64 and armhf, clang/lld/llvm 19,
# qemu-user >= 10 from bookworm-backports, and a .venv with isaforge installed editable, its Python packages pinned
# by ci/constraints.txt so that every machine and the CI image (ci/Dockerfile) run the same versions.
# Idempotent: every step checks first, so `make` can call it on every run at almost no cost.
#
#   install-toolchains.sh [--python-only]   install what is missing
#   install-toolchains.sh --versions        what is installed, one `name version` line each (the image is compared
#                                           with the host through this)
#   install-toolchains.sh --lock            rewrite ci/constraints.txt from the venv's packages
#   install-toolchains.sh --docker          a Docker engine and debootstrap, for make docker-image
#   install-toolchains.sh --apt-uri SUITE   the URI this machine's apt sources use for SUITE
#   install-toolchains.sh --peers           the peer libraries `isaforge bench --peers` compares libisaforge with:
#                                           Debian's arm64 OpenBLAS (serial), BLIS (serial) and XNNPACK, with
#                                           libc6:arm64 (the harnesses run under QEMU without -L); armhf OpenBLAS
#                                           and BLIS too, best effort. Adds the arm64 and armhf architectures. Each
#                                           peer installs on its own: one that cannot is reported by name and the
#                                           others still install; exits 0 either way (the bench reports a missing
#                                           peer itself)
#
# ISAFORGE_VENV puts the venv elsewhere (the image keeps it outside the mounted checkout); ISAFORGE_WHEELHOUSE also
# saves every wheel the venv needs there, plus the build backend, so pip works with no index (the image is offline).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${ISAFORGE_VENV:-$here/.venv}
constraints=$here/ci/constraints.txt
qemu_min_major=10

apt_packages=(
  gcc-aarch64-linux-gnu g++-aarch64-linux-gnu binutils-aarch64-linux-gnu libc6-dev-arm64-cross
  gcc-arm-linux-gnueabihf g++-arm-linux-gnueabihf binutils-arm-linux-gnueabihf libc6-dev-armhf-cross
  clang-19 lld-19 llvm-19 pkg-config ninja-build make python3-venv ccache cmake gcc libc6-dev git
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

# The URI that already serves a suite (`bookworm` by default), from deb822 .sources files or one-line sources.list.
debian_mirror_uri() {
  local f suite=${1:-bookworm}
  for f in /etc/apt/sources.list.d/*.sources; do
    [ -f "$f" ] || continue
    awk -v want="$suite" '
      /^[[:space:]]*$/ { if (uri != "" && suite) { print uri; exit } uri=""; suite=0; next }
      /^URIs:/ { uri=$2 }
      /^Suites:/ { for (i = 2; i <= NF; i++) if ($i == want) suite=1 }
      END { if (uri != "" && suite) print uri }
    ' "$f" | head -n1
  done | head -n1 | grep . && return 0
  # One-line format: `deb [options] URI suite components`.
  { cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null || true; } \
    | sed 's/\[[^]]*\]//' | awk -v want="$suite" '$1 == "deb" && $3 == want { print $2; exit }' | grep .
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

# What the venv was made from: a change to the project's dependencies or their pins, or a venv made for another
# checkout (an editable install points at one path), means it must be made again.
venv_recipe() {
  printf '%s %s\n' "$here" "$(cat "$here/pyproject.toml" "$constraints" | sha256sum | cut -d' ' -f1)"
}

install_python_env() {
  local stamp=$venv/.isaforge-installed
  if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$(venv_recipe)" ]; then return 0; fi
  if [ -e "$venv" ] && [ ! -w "$venv" ]; then
    log "$venv was made for another checkout or other dependencies, and is not writable here (a CI image's);"
    log "rebuild the image (make docker-image), or point ISAFORGE_VENV at a writable directory"
    exit 1
  fi
  log "creating $venv"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade -c "$constraints" pip
  "$venv/bin/pip" install -q -c "$constraints" -e "$here[test]"
  if [ -n "${ISAFORGE_WHEELHOUSE:-}" ]; then save_wheelhouse "$ISAFORGE_WHEELHOUSE"; fi
  venv_recipe >"$stamp"
}

# Every package of the venv, and the build backend pyproject.toml names (a wheel of isaforge is built with build
# isolation), as wheels in one folder: `PIP_FIND_LINKS=<dir> PIP_NO_INDEX=1` then installs with no network.
save_wheelhouse() {
  local dir=$1
  log "saving the venv's wheels in $dir"
  mkdir -p "$dir"
  "$venv/bin/pip" freeze --exclude-editable --all >"$dir/.requirements"
  "$venv/bin/pip" download -q --no-deps -d "$dir" -r "$dir/.requirements"
  "$venv/bin/pip" download -q -d "$dir" \
    "$(sed -n 's/^requires = \["\([^"]*\)"\]/\1/p' "$here/pyproject.toml")"
  rm "$dir/.requirements"
}

# A Docker engine (Debian's docker.io, unless some dockerd is there already) and debootstrap, which builds the CI
# image's base where no image registry is reachable (make docker-image).
install_docker() {
  local need=()
  command -v dockerd >/dev/null || docker info >/dev/null 2>&1 || need+=(docker.io)
  command -v debootstrap >/dev/null || need+=(debootstrap)
  [ "${#need[@]}" -eq 0 ] && return 0
  log "installing: ${need[*]}"
  as_root apt-get update -q
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends "${need[@]}"
}

# The peers, one group each (name:packages), installed per architecture. armhf gets OpenBLAS and BLIS only: Debian
# 12's libxnnpack-dev and libpthreadpool-dev are not Multi-Arch: same, so the armhf ones would replace the arm64 ones
# (and apt-get runs with --no-remove, so that nothing installed is ever taken away).
peer_groups=(
  "libc:libc6"
  "openblas:libopenblas-serial-dev libopenblas-dev"
  "blis:libblis-serial-dev"
  "xnnpack:libxnnpack-dev libcpuinfo-dev libpthreadpool-dev"
)
peer_armhf_groups=" libc openblas blis "

# Outputs are read whole before they are matched: under pipefail, a `grep -q` or `awk … exit` that stops reading
# early can kill the writer with SIGPIPE and turn a match into a failure.
installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" = "install ok installed" ]; }

# apt knows a version of the package it could install.
has_candidate() {
  local policy
  policy=$(apt-cache policy "$1" 2>/dev/null || true)
  [[ $policy == *"Candidate:"* && $policy != *"Candidate: (none)"* ]]
}

# The packages of one group (name:packages) missing for one architecture, on one line.
peer_missing() {
  local arch=$1 group=$2 p out=()
  for p in ${group#*:}; do installed "$p:$arch" || out+=("$p:$arch"); done
  echo "${out[*]}"
}

# One mirror index that fails to download (a foreign architecture mid-sync) makes apt-get update fail while every
# other index is fresh: go on with what it has.
apt_update_tolerant() {
  as_root apt-get update -q || log "apt-get update reported errors (an index mid-sync?); going on with the indexes it has"
}

install_peers() {
  local arch group name what missing p unavailable foreign need_update=0 updated=0 todo=()
  for arch in arm64 armhf; do
    for group in "${peer_groups[@]}"; do
      name=${group%%:*}
      [ "$arch" = arm64 ] || [[ $peer_armhf_groups == *" $name "* ]] || continue
      [ -z "$(peer_missing "$arch" "$group")" ] || todo+=("$arch|$group")
    done
  done
  [ "${#todo[@]}" -gt 0 ] || return 0
  # Best effort, so never a password prompt (make test runs this in the CI image as a user without sudo).
  if [ "$(id -u)" -ne 0 ] && ! sudo -n true 2>/dev/null; then
    log "peers not installed: installing them needs root or password-less sudo"
    return 0
  fi
  foreign=" $(dpkg --print-foreign-architectures | tr '\n' ' ') "
  for arch in arm64 armhf; do
    if [[ $foreign != *" $arch "* ]]; then
      log "adding the $arch architecture (peer libraries)"
      as_root dpkg --add-architecture "$arch"
      need_update=1
    fi
    compgen -G "/var/lib/apt/lists/*binary-${arch}_Packages*" >/dev/null || need_update=1
  done
  if [ "$need_update" -eq 1 ]; then apt_update_tolerant; updated=1; fi
  for what in "${todo[@]}"; do
    arch=${what%%|*}; group=${what#*|}; name=${group%%:*}
    [ "$arch" = arm64 ] || name="$name ($arch)"
    missing=$(peer_missing "$arch" "$group")
    unavailable=
    for p in $missing; do has_candidate "$p" || { unavailable=$p; break; }; done
    if [ -n "$unavailable" ]; then
      log "peer $name not installed: $unavailable is not available here"
      continue
    fi
    log "installing peer $name: $missing"
    # shellcheck disable=SC2086
    if ! DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends --no-remove $missing; then
      # Stale indexes name versions the mirror no longer has: refresh them once, then try again.
      if [ "$updated" -eq 0 ]; then
        apt_update_tolerant
        updated=1
        # shellcheck disable=SC2086
        DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -q --no-install-recommends --no-remove $missing \
          && continue
      fi
      log "peer $name not installed: apt-get install $missing failed (above)"
    fi
  done
  return 0
}

# With a multiarch libc (libc6:arm64, libc6:armhf: the peers' loader and libc) installed, the cross sysroot's
# loader, run as `qemu-<arch> -L /usr/<triple>`, would find that libc first (the host's ld.so.cache and its first
# system path both name /lib/<triple>, which QEMU maps into the sysroot only where that exists, else takes the
# host's): a loader and a libc of two builds, which hangs in pthread_create. /usr/<triple>/lib/<triple> -> . makes
# those paths land in the sysroot itself. Needs no package; kept on every run (idempotent).
keep_sysroot_libc_first() {
  local triple dir
  for triple in aarch64-linux-gnu arm-linux-gnueabihf; do
    dir=/usr/$triple/lib
    [ -d "$dir" ] && [ ! -e "$dir/$triple" ] || continue
    log "linking $dir/$triple -> . (the sysroot's libc before any multiarch one under qemu -L)"
    as_root ln -s . "$dir/$triple"
  done
  return 0
}

lock() {
  {
    echo "# The versions of every Python package isaforge's venv holds, for ci/install-toolchains.sh (pip -c): the"
    echo "# same on every machine and in the CI image. Rewrite with: bash ci/install-toolchains.sh --lock"
    "$venv/bin/pip" freeze --exclude-editable --all | grep -v '^setuptools=='
  } >"$constraints"
  log "wrote $constraints"
}

versions() {
  local p
  for p in "${apt_packages[@]}" qemu-user; do
    printf '%s %s\n' "$p" "$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || echo missing)"
  done
  printf 'python %s\n' "$("$venv/bin/python" -c 'import sys; print(*sys.version_info[:2], sep=".")')"
  "$venv/bin/pip" freeze --exclude-editable --all | grep -v '^setuptools==' | sed 's/==/ /'
}

case "${1:-}" in
  --versions) versions ;;
  --lock) lock ;;
  --docker) install_docker ;;
  --apt-uri) debian_mirror_uri "${2:-bookworm}" || { log "no apt source serves '${2:-bookworm}'"; exit 1; } ;;
  --python-only) install_python_env ;;
  --peers) install_peers; keep_sysroot_libc_first ;;
  "") install_system_packages; keep_sysroot_libc_first; install_python_env ;;
  *) log "unknown option $1 (options: --python-only, --peers, --versions, --lock, --docker, --apt-uri SUITE)"; exit 2 ;;
esac
