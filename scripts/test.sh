#!/usr/bin/env bash
# Builds pipescope and runs the test suite (what CI runs).
#
#   scripts/test.sh                      plain build (build/), then ASan+UBSan (build-asan/), then TSan
#                                        (build-tsan/), then the trace reader's fuzzer (build-fuzz/, 60 s)
#   scripts/test.sh --quick              plain build only
#   scripts/test.sh --sanitize address   only the ASan+UBSan build
#   scripts/test.sh --sanitize thread    only the TSan build
#   scripts/test.sh --fuzz               only the fuzzer (scripts/fuzz.sh)
#   scripts/test.sh --help
#
# Every configuration is built and tested even if an earlier one failed; the exit status is
# non-zero if any failed. Environment:
#   PIPESCOPE_SKIP_INSTALL_DEPS=1   do not run scripts/install-deps.sh
#   PIPESCOPE_CTEST_TIMEOUT=<s>     default per-test timeout for tests that set none (900)
#   JOBS=<n>                        build and test parallelism (default: nproc)
#   PIPESCOPE_FUZZ_SECONDS=<s>      how long the fuzz configuration fuzzes (60)
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo_root="$(pwd -P)"
me="test.sh"

usage() {
    sed -n '2,17s/^# \{0,1\}//p' "$0"
}
die() {
    echo "$me: ERROR: $*" >&2
    exit 2
}

configs=(plain address thread fuzz)
while [[ $# -gt 0 ]]; do
    case "$1" in
        --quick)
            configs=(plain) ;;
        --fuzz)
            configs=(fuzz) ;;
        --sanitize)
            [[ $# -ge 2 ]] || die "--sanitize needs an argument: address or thread"
            case "$2" in
                address|thread) configs=("$2") ;;
                *) die "--sanitize takes 'address' or 'thread', not '$2'" ;;
            esac
            shift ;;
        --sanitize=*)
            case "${1#--sanitize=}" in
                address|thread) configs=("${1#--sanitize=}") ;;
                *) die "--sanitize takes 'address' or 'thread', not '${1#--sanitize=}'" ;;
            esac ;;
        -h|--help)
            usage; exit 0 ;;
        *)
            usage >&2; die "unknown argument '$1'" ;;
    esac
    shift
done

jobs="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
ctest_timeout="${PIPESCOPE_CTEST_TIMEOUT:-900}"

if [[ "${PIPESCOPE_SKIP_INSTALL_DEPS:-0}" != 1 ]]; then
    scripts/install-deps.sh || die "installing dependencies failed (set PIPESCOPE_SKIP_INSTALL_DEPS=1 to skip)"
fi

# run_config NAME: configure, build and test one configuration. Returns non-zero on the first
# failing step (each step is checked explicitly: errexit does not apply inside `if` conditions).
run_config() {
    local name="$1" dir
    if [[ "$name" == fuzz ]]; then
        echo ""
        echo "==== $me: [fuzz] the trace reader under libFuzzer for ${PIPESCOPE_FUZZ_SECONDS:-60} s"
        PIPESCOPE_SKIP_INSTALL_DEPS=1 scripts/fuzz.sh "${PIPESCOPE_FUZZ_SECONDS:-60}" \
            || { echo "$me: [fuzz] FAILED" >&2; return 1; }
        return 0
    fi
    local -a cmake_args=(-G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPIPESCOPE_BUILD_TESTS=ON)
    local -a env_args=() ctest_args=()
    # The sanitizer builds compile at -O1 with line tables only (-g1): about half the compile time of
    # -O2 -g on this code (test_graph_danbi.cpp under ASan: 17-21 s against 39-42 s), and their
    # reports still name files and lines. Building is most of these configurations' time.
    local -r sanitizer_flags="-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG"
    case "$name" in
        plain)
            dir=build
            cmake_args+=(-DPIPESCOPE_SANITIZE= -DPIPESCOPE_BUILD_BENCH=ON) ;;
        address)
            dir=build-asan
            # gui: LeakSanitizer would report Mesa's and X11's own allocations. lesson: their findings are
            # ratios of a normal build's behaviour (a sanitizer's slowdown changes them); the runs they
            # record are the same code the other tests check here.
            ctest_args=(-LE "gui|lesson")
            cmake_args+=(-DPIPESCOPE_SANITIZE=address -DPIPESCOPE_BUILD_BENCH=OFF "$sanitizer_flags")
            # lsan.supp: fontconfig's process-lifetime caches (cairo loads it for pipescope scale's PNG).
            env_args=(ASAN_OPTIONS="detect_leaks=1"
                      LSAN_OPTIONS="suppressions=$repo_root/tests/lsan.supp"
                      UBSAN_OPTIONS="print_stacktrace=1 halt_on_error=1"
                      PIPESCOPE_TEST_SCALE=small) ;;
        thread)
            dir=build-tsan
            ctest_args=(-LE "perfetto|gui|lesson")   # Mesa and GLFW are not built with TSan; lesson: see above
            cmake_args+=(-DPIPESCOPE_SANITIZE=thread -DPIPESCOPE_BUILD_BENCH=OFF "$sanitizer_flags")
            env_args=(TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1"
                      PIPESCOPE_TEST_SCALE=small) ;;
    esac

    echo ""
    echo "==== $me: [$name] configure ($dir/)"
    cmake -S "$repo_root" -B "$repo_root/$dir" "${cmake_args[@]}" \
        || { echo "$me: [$name] configure FAILED" >&2; return 1; }

    echo ""
    echo "==== $me: [$name] build (-j$jobs)"
    cmake --build "$repo_root/$dir" --parallel "$jobs" \
        || { echo "$me: [$name] build FAILED" >&2; return 1; }

    echo ""
    echo "==== $me: [$name] test${env_args[*]:+ (${env_args[*]})}"
    (cd "$repo_root/$dir" && env "${env_args[@]}" \
        ctest --output-on-failure --no-tests=error --timeout "$ctest_timeout" -j"$jobs" "${ctest_args[@]}") \
        || { echo "$me: [$name] tests FAILED" >&2; return 1; }
}

fmt_duration() {
    printf '%dm%02ds' $(($1 / 60)) $(($1 % 60))
}

summary=()
failed=0
for name in "${configs[@]}"; do
    start=$SECONDS
    if run_config "$name"; then
        result=ok
    else
        result=FAILED
        failed=1
    fi
    summary+=("$(printf '  %-8s %-7s %s' "$name" "$result" "$(fmt_duration $((SECONDS - start)))")")
done

echo ""
echo "==== $me: summary (configuration, result, time)"
printf '%s\n' "${summary[@]}"
if [[ $failed -ne 0 ]]; then
    echo "$me: some configurations FAILED" >&2
    exit 1
fi
echo "$me: all configurations ok"
