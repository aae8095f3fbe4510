#!/usr/bin/env bash
# Installs the Debian packages pipescope needs to build, test and (later) run the viewer.
# Idempotent: installs only what is missing, and runs `apt-get update` only in that case.
#
#   scripts/install-deps.sh           install what is missing
#   scripts/install-deps.sh --check   only report; exit 1 if something is missing
#   scripts/install-deps.sh --list    print the package list
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

packages=(
    # toolchain and build
    build-essential cmake ninja-build pkg-config git
    # libraries the runtime, tracer, tests and benchmarks use
    libtbb-dev catch2 nlohmann-json3-dev zlib1g-dev libssl-dev
    # viewer (GLFW + Dear ImGui + OpenGL) and its headless test environment
    libglfw3-dev libimgui-dev libgl-dev xvfb xauth mesa-utils libgl1-mesa-dri
    # trace validation scripts
    python3 python3-pip
)
# Python packages (pip): none yet.

me="install-deps"
die() {
    echo "$me: ERROR: $*" >&2
    exit 1
}

mode=install
case "${1:-}" in
    "") ;;
    --check) mode=check ;;
    --list) printf '%s\n' "${packages[@]}"; exit 0 ;;
    -h|--help) sed -n '2,8s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (try --help)" ;;
esac

command -v dpkg-query >/dev/null 2>&1 || die "dpkg-query not found: this script supports Debian/Ubuntu only"

is_installed() {
    [[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null || true)" == "install ok installed" ]]
}

missing=()
for p in "${packages[@]}"; do
    is_installed "$p" || missing+=("$p")
done

if [[ ${#missing[@]} -eq 0 ]]; then
    echo "$me: all ${#packages[@]} required Debian packages are installed"
    exit 0
fi

echo "$me: missing Debian packages: ${missing[*]}"
if [[ $mode == check ]]; then
    exit 1
fi

if [[ $(id -u) -eq 0 ]]; then
    as_root=(env DEBIAN_FRONTEND=noninteractive)
elif command -v sudo >/dev/null 2>&1; then
    as_root=(sudo env DEBIAN_FRONTEND=noninteractive)
else
    die "not root and sudo is not available; as root run: apt-get install ${missing[*]}"
fi
command -v apt-get >/dev/null 2>&1 || die "apt-get not found"

echo "$me: running apt-get update"
"${as_root[@]}" apt-get update -q \
    || die "'apt-get update' failed (network, apt sources or a held dpkg lock?)"

echo "$me: installing: ${missing[*]}"
"${as_root[@]}" apt-get install -y -q --no-install-recommends "${missing[@]}" \
    || die "'apt-get install ${missing[*]}' failed"

still_missing=()
for p in "${missing[@]}"; do
    is_installed "$p" || still_missing+=("$p")
done
if [[ ${#still_missing[@]} -gt 0 ]]; then
    die "still not installed after apt-get: ${still_missing[*]}"
fi
echo "$me: installed ${#missing[@]} package(s): ${missing[*]}"
