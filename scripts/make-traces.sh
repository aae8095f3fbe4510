#!/usr/bin/env bash
# Regenerates the example traces in traces/ (listed, with what each shows, in traces/README.md).
# Uses an existing build of the `pipescope` CLI (build/ by default, as scripts/test.sh and
# scripts/demo.sh make it); builds it there if it is missing.
#
#   scripts/make-traces.sh                 regenerate every example trace
#   scripts/make-traces.sh --check         only check that every listed trace exists and validates
#
# Environment: PIPESCOPE_CLI=<path> uses that pipescope binary instead.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
me="make-traces.sh"
die() {
    echo "$me: ERROR: $*" >&2
    exit 1
}

cli="${PIPESCOPE_CLI:-build/cli/pipescope}"
out=traces

# name | pipescope run arguments. Small on purpose: these ship with the project.
examples=(
    "pipe-fib-piper|pipe-fib --policy piper --workers 2 --size tiny --param n=400 --param K=4"
    "pipe-fib-256-piper|pipe-fib-256 --policy piper --workers 2 --size tiny --param n=6000"
    "pipe-fib-256-piper-K2|pipe-fib-256 --policy piper --workers 2 --size tiny --param n=6000 --param K=2"
    "ray-1-gramps|ray-1 --policy gramps --workers 2 --size tiny --param width=32 --param height=32 --param samples=2"
)

mode=make
case "${1:-}" in
    "") ;;
    --check) mode=check ;;
    -h|--help) sed -n '2,10s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (try --help)" ;;
esac

if [[ ! -x "$cli" ]]; then
    [[ -n "${PIPESCOPE_CLI:-}" ]] && die "PIPESCOPE_CLI=$cli is not an executable"
    echo "==== $me: building the CLI in build/"
    cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || die "configuring build/ failed"
    cmake --build build --target pipescope_cli --parallel "${JOBS:-2}" || die "building the CLI failed"
fi

mkdir -p "$out"
for example in "${examples[@]}"; do
    name="${example%%|*}"
    read -r -a args <<<"${example#*|}"
    file="$out/$name.pftrace"
    if [[ $mode == make ]]; then
        echo "==== $me: $file"
        "$cli" run "${args[@]}" -o "$file" || die "recording $file failed"
    fi
    [[ -f "$file" ]] || die "$file is missing (run $0)"
    "$cli" validate "$file" >/dev/null || die "$file does not validate: $("$cli" validate "$file" | tail -3)"
done
echo "$me: ${#examples[@]} example traces in $out/ are valid"
