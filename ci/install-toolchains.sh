#!/usr/bin/env bash
# Installs what isaforge needs on Debian 12 (bookworm): cross GCC for aarch64 and armhf, clang/lld/llvm 19,
# qemu-user >= 10 from bookworm-backports (and, for SME2, Debian testing's static qemu-aarch64 >= 10.1 beside it), and
# a .venv with isaforge installed editable, its Python packages pinned
# by ci/constraints.txt so that every machine and the CI image (ci/Dockerfile) run the same versions.
# Idempotent: every step checks first, so `make` can call it on every run at almost no cost.
#
#   install-toolchains.sh [--python-only]   install what is missing
#   install-toolchains.sh --versions        what is installed (the peers too), one `name version` line each (the
#                                           image is compared with the host through this)
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
# apt-get and dpkg-query follow APT_CONFIG and DPKG_ADMINDIR, which tests/ci/test_install_toolchains.py points at an
# apt state of its own; sourced (not run), the script only defines its functions, for that test.
#
# Every path installs through apt_install: an `apt-get update` that fetches only some indexes (one mid-sync on the
# mirror, a 404 on a foreign architecture's, a hash-sum mismatch) is not a failure in itself; a needed package that
# then cannot be installed is, with one line naming it and why.
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

# Outputs are read whole before they are matched: under pipefail, a `grep -q` or `awk … exit` that stops reading
# early can kill the writer with SIGPIPE and turn a match into a failure.
installed() { [ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" = "install ok installed" ]; }

missing_apt_packages() {
  local p
  for p in "${apt_packages[@]}"; do installed "$p" || printf '%s\n' "$p"; done
}

# apt knows a version of the package it could install.
has_candidate() {
  local policy
  policy=$(apt-cache policy "$1" 2>/dev/null || true)
  [[ $policy == *"Candidate:"* && $policy != *"Candidate: (none)"* ]]
}

apt_updated=0       # the indexes were fetched in this run (a source or an architecture added since resets it)
apt_update_errors=  # what that fetch missed, for the line of a package that then cannot be installed

# Runs a command with its output shown and kept in a file; its own exit status, not tee's.
tee_to() {
  local file=$1
  shift
  "$@" 2>&1 | tee "$file"
  return "${PIPESTATUS[0]}"
}

# The first error of apt-get's output in $1: a fetch that failed as `what: why`, else the first `E:` line.
apt_first_error() {
  local found
  found=$(sed -n 's/^[EW]: Failed to fetch \([^ ]*\) *\(.*\)/\1: \2/p' "$1" | sed -n 1p)
  printf '%s\n' "${found:-$(sed -n 's/^E: //p' "$1" | sed -n 1p)}"
}

# apt-get update. An index it cannot fetch leaves apt with the others (and its old copy of that one): the script goes
# on, and whether that index mattered shows when a needed package is looked for, whose line then quotes the error.
apt_update() {
  local out
  out=$(mktemp)
  apt_updated=1
  if tee_to "$out" as_root apt-get update -q; then
    apt_update_errors=
  else
    apt_update_errors=$(apt_first_error "$out")
    log "apt-get update could not fetch every index (first: $apt_update_errors); going on with the indexes there are"
  fi
  rm -f "$out"
}

# The package a failed `apt-get install` (its output in $1) stopped on, and why, as `package: why`: a download that
# failed names its .deb, an unmet dependency the package that has it; else the packages asked for and the error.
apt_install_failure() {
  local out=$1 found
  shift
  found=$(sed -n 's|^E: Failed to fetch [^ ]*/\([^/_ ]*\)_[^/ ]*\.deb *\(.*\)|\1: download failed: \2|p' "$out" \
    | sed -n 1p)
  [ -n "$found" ] || found=$(sed -n 's/^ *\([^ ]*\) : \(Depends: .*\)/\1: \2/p' "$out" | sed -n 1p)
  printf '%s\n' "${found:-$*: $(apt_first_error "$out")}"
}

# The one line for a needed package that cannot be installed: which (and what for: the caller's `apt_for`), why, and
# what apt-get update could not fetch, which is often the cause.
cannot_install() {
  local missed="${apt_update_errors:+ (apt-get update could not fetch $apt_update_errors)}"
  log "cannot install $1${apt_for:+ ($apt_for)}: $2$missed"
}

# apt-get install [OPTION...] -- PACKAGE... (name or name:arch), fetching the indexes first once per run. A package
# no index offers, or an install that fails, is one line (cannot_install) and status 1; the caller decides whether
# that stops the script.
apt_install() {
  local opts=() p out why
  while [ "$1" != -- ]; do opts+=("$1"); shift; done
  shift
  [ "$apt_updated" -eq 1 ] || apt_update
  for p; do
    has_candidate "$p" || { cannot_install "$p" "no apt source offers it"; return 1; }
  done
  log "installing${apt_for:+ $apt_for}: $*"
  out=$(mktemp)
  if tee_to "$out" as_root env DEBIAN_FRONTEND=noninteractive \
    apt-get install -y -q --no-install-recommends "${opts[@]}" "$@"; then
    rm -f "$out"
    return 0
  fi
  why=$(apt_install_failure "$out" "$@")
  rm -f "$out"
  cannot_install "${why%%: *}" "${why#*: }"
  return 1
}

# Fetches one package's .deb into $1/archives through an apt state of its own ($1/parts holds its sources; lists go
# in $1/lists): the system's sources, lists and packages stay as they are. As apt_update, an index it cannot fetch is
# not a failure in itself; as apt_install, a package that then cannot be fetched is, with one line.
apt_download() {
  local state=$1 package=$2 out
  local opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$state/parts"
    -o "Dir::State::Lists=$state/lists" -o "Dir::Cache::Archives=$state/archives" -o "Dir::Cache::pkgcache="
    -o "Dir::Cache::srcpkgcache=" -o "APT::Sandbox::User=root")
  mkdir -p "$state/lists/partial" "$state/archives/partial"
  out=$(mktemp)
  tee_to "$out" apt-get -q "${opts[@]}" update >/dev/null \
    || log "apt-get update for $package could not fetch every index (first: $(apt_first_error "$out")); going on"
  if ! (cd "$state/archives" && tee_to "$out" apt-get -q "${opts[@]}" download "$package" >/dev/null); then
    cannot_install "$package" "$(apt_first_error "$out")"
    rm -f "$out"
    return 1
  fi
  rm -f "$out"
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
  apt_updated=0
}

install_system_packages() {
  local need
  need=$(missing_apt_packages)
  # shellcheck disable=SC2086
  [ -z "$need" ] || apt_install -- $need || exit 1
  if [ "$(qemu_major)" -lt "$qemu_min_major" ]; then
    ensure_backports_suite
    apt_for="from bookworm-backports" apt_install -t bookworm-backports -- qemu-user || exit 1
  fi
  if [ "$(qemu_major)" -lt "$qemu_min_major" ]; then
    apt_for="from bookworm-backports" cannot_install "qemu-user >= $qemu_min_major" "it gave version $(qemu_major)"
    exit 1
  fi
}

# The SME2-capable QEMU ([qemu_sme] of src/isaforge/isa.toml): the static binaries of Debian testing's qemu-user,
# fetched through the mirror this machine already uses, with an apt state of their own (the system's sources, lists
# and packages stay as they are), extracted into the catalogue's folder and version-checked. Only SME2 runs use it.
qemu_sme_field() {
  python3 -c 'import sys, tomllib; v = tomllib.load(open(sys.argv[1], "rb"))["qemu_sme"][sys.argv[2]]
print(" ".join(v) if isinstance(v, list) else v)' "$here/src/isaforge/isa.toml" "$1"
}

qemu_sme_current() {
  local dir=$1 min=$2 bin v
  for bin in $(qemu_sme_field binaries); do
    v=$("$dir/$bin" --version 2>/dev/null | sed -n 's/.*version \([0-9]*\.[0-9]*\).*/\1/p' | head -n1)
    [ -n "$v" ] && [ "$(printf '%s\n%s\n' "$min" "$v" | sort -V | head -n1)" = "$min" ] || return 1
  done
}

install_sme_qemu() {
  local dir min suite package uri state bin deb
  dir=$(qemu_sme_field dir) min=$(qemu_sme_field min_version) suite=$(qemu_sme_field suite)
  package=$(qemu_sme_field package)
  if qemu_sme_current "$dir" "$min"; then return 0; fi
  uri=$(debian_mirror_uri) || { log "no apt source serves 'bookworm'; add one, then rerun"; exit 1; }
  state=$(mktemp -d)
  mkdir -p "$state/parts"
  printf 'Types: deb\nURIs: %s\nSuites: %s\nComponents: main\nSigned-By: %s\n' "$uri" "$suite" \
    /usr/share/keyrings/debian-archive-keyring.gpg >"$state/parts/isaforge-qemu-sme.sources"
  log "fetching $package from Debian $suite for SME2 (QEMU >= $min), into $dir"
  apt_for="from Debian $suite" apt_download "$state" "$package" || { rm -rf "$state"; exit 1; }
  deb=$(ls "$state/archives"/*.deb)
  as_root mkdir -p "$dir"
  for bin in $(qemu_sme_field binaries); do
    dpkg-deb --fsys-tarfile "$deb" | tar -x -O "./usr/bin/$bin" >"$state/$bin"
    chmod 755 "$state/$bin"
    as_root mv "$state/$bin" "$dir/$bin"
  done
  rm -rf "$state"
  qemu_sme_current "$dir" "$min" || {
    log "$dir: $package from Debian $suite is older than $min or does not run ($("$dir/qemu-aarch64" --version 2>&1 | head -n1))"
    exit 1
  }
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
  apt_install -- "${need[@]}" || exit 1
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

# Every peer group with an architecture it is installed for, one `arch|name:packages` a line.
peer_selection() {
  local arch group
  for arch in arm64 armhf; do
    for group in "${peer_groups[@]}"; do
      [ "$arch" = arm64 ] || [[ $peer_armhf_groups == *" ${group%%:*} "* ]] || continue
      printf '%s|%s\n' "$arch" "$group"
    done
  done
}

# The packages of one group (name:packages) missing for one architecture, on one line.
peer_missing() {
  local arch=$1 group=$2 p out=()
  for p in ${group#*:}; do installed "$p:$arch" || out+=("$p:$arch"); done
  echo "${out[*]}"
}

install_peers() {
  local arch group name what foreign todo=()
  while IFS='|' read -r arch group; do
    [ -z "$(peer_missing "$arch" "$group")" ] || todo+=("$arch|$group")
  done < <(peer_selection)
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
      apt_updated=0
    fi
  done
  for what in "${todo[@]}"; do
    arch=${what%%|*}; group=${what#*|}; name=${group%%:*}
    [ "$arch" = arm64 ] || name="$name ($arch)"
    # shellcheck disable=SC2046
    apt_for="peer $name" apt_install --no-remove -- $(peer_missing "$arch" "$group") || true
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
  local p arch group packages=("${apt_packages[@]}" qemu-user)
  while IFS='|' read -r arch group; do
    for p in ${group#*:}; do packages+=("$p:$arch"); done
  done < <(peer_selection)
  for p in "${packages[@]}"; do
    printf '%s %s\n' "$p" "$(dpkg-query -W -f='${Version}' "$p" 2>/dev/null || echo missing)"
  done
  printf 'python %s\n' "$("$venv/bin/python" -c 'import sys; print(*sys.version_info[:2], sep=".")')"
  "$venv/bin/pip" freeze --exclude-editable --all | grep -v '^setuptools==' | sed 's/==/ /'
}

main() {
  case "${1:-}" in
    --versions) versions ;;
    --lock) lock ;;
    --docker) install_docker ;;
    --apt-uri) debian_mirror_uri "${2:-bookworm}" || { log "no apt source serves '${2:-bookworm}'"; exit 1; } ;;
    --python-only) install_python_env ;;
    --peers) install_peers; keep_sysroot_libc_first ;;
    "") install_system_packages; install_sme_qemu; keep_sysroot_libc_first; install_python_env ;;
    *)
      log "unknown option $1 (options: --python-only, --peers, --versions, --lock, --docker, --apt-uri SUITE)"
      exit 2
      ;;
  esac
}

[ "${BASH_SOURCE[0]}" != "$0" ] || main "$@"
