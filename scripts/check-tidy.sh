#!/usr/bin/env bash
# Runs clang-tidy with the repository's .clang-tidy over the project's own sources (the ctest test
# lint.tidy runs it). Every finding is an error.
#
#   scripts/check-tidy.sh BUILD_DIR              every .cpp of the rooms, compiled as BUILD_DIR's
#                                                compile_commands.json says
#   scripts/check-tidy.sh --no-db FILE...        these files alone, as C++20 (the selftest)
#
# The reference is Debian 12's clang-tidy 14 (scripts/install-deps.sh); CLANG_TIDY=<path> picks
# another. Exit status: 0 clean, 1 a finding (printed with file and line), 2 usage error, 77 no
# clang-tidy (ctest reports the test as skipped).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
me="check-tidy"

clang_tidy=${CLANG_TIDY:-}
if [[ -z $clang_tidy ]]; then
    for c in clang-tidy-14 clang-tidy; do
        if command -v "$c" >/dev/null 2>&1; then
            clang_tidy=$c
            break
        fi
    done
fi
if [[ -z $clang_tidy ]]; then
    echo "$me: clang-tidy not found (apt-get install clang-tidy-14, or set CLANG_TIDY)" >&2
    exit 77
fi

# GCC-only warning flags in the compile commands are not errors for clang.
common=(--quiet --extra-arg=-Wno-unknown-warning-option)
if [[ ${1:-} == --no-db ]]; then
    shift
    [[ $# -gt 0 ]] || { echo "$me: --no-db needs files" >&2; exit 2; }
    exec "$clang_tidy" "${common[@]}" "$@" -- -std=c++20
fi

build_dir=${1:-}
if [[ -z $build_dir || ! -f $build_dir/compile_commands.json ]]; then
    echo "$me: usage: $me BUILD_DIR (with compile_commands.json: configure with CMAKE_EXPORT_COMPILE_COMMANDS=ON)" >&2
    exit 2
fi
mapfile -t files < <(git ls-files 'runtime/*.cpp' 'tracer/*.cpp' 'analysis/*.cpp' 'workloads/*.cpp' 'recording/*.cpp' \
    'lessons/*.cpp' 'cli/*.cpp' 'viewer/*.cpp' 2>/dev/null || find runtime tracer analysis workloads recording lessons cli viewer -name '*.cpp')
# Only files the build compiles (a file of a disabled option, e.g. the viewer, is not in the database).
mapfile -t files < <(python3 - "$build_dir/compile_commands.json" "${files[@]}" <<'PY'
import json, os, sys
db = {os.path.realpath(e["file"]) for e in json.load(open(sys.argv[1]))}
for f in sys.argv[2:]:
    if os.path.realpath(f) in db:
        print(f)
PY
)
[[ ${#files[@]} -gt 0 ]] || { echo "$me: no source of the build found in $build_dir/compile_commands.json" >&2; exit 2; }
jobs=${PIPESCOPE_TIDY_JOBS:-$(nproc)}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
printf '%s\n' "${files[@]}" | xargs -P "$jobs" -n 4 "$clang_tidy" -p "$build_dir" "${common[@]}" >"$log" 2>/dev/null || status=$?
if grep -q "error:\|warning:" "$log"; then
    grep -A3 "error:\|warning:" "$log"
    echo "$me: findings above ($(grep -c 'error:\|warning:' "$log") in ${#files[@]} files)" >&2
    exit 1
fi
if [[ $status -ne 0 ]]; then
    echo "$me: clang-tidy failed (exit $status) without a finding" >&2
    exit 1
fi
echo "$me: ${#files[@]} files clean"
