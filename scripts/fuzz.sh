#!/usr/bin/env bash
# Fuzzes the trace reader with libFuzzer (clang, ASan + UBSan) for a bounded time.
#
#   scripts/fuzz.sh            60 seconds
#   scripts/fuzz.sh 600        ten minutes
#
# Builds build-fuzz/ (PIPESCOPE_SANITIZE=fuzz: the tracer and its fuzz target only), seeds the corpus
# with the foreign traces of tests/data, every saved regression input (tests/fuzz/regressions) and,
# if the plain build's CLI exists (build/cli/pipescope), small traces recorded under every policy,
# then runs the fuzzer. The working corpus (build-fuzz/corpus) is kept between runs, so a later run
# starts where the last one stopped. A crash, a leak, undefined behaviour, a timeout or an exception
# other than the reader's decode_error stops the run with exit status 1 and the input in
# build-fuzz/crashes/; put it into tests/fuzz/regressions/ (the Catch2 suite replays every file
# there in every build) and fix the reader.
# Environment: PIPESCOPE_SKIP_INSTALL_DEPS=1 skips scripts/install-deps.sh; JOBS=<n> build jobs.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo_root="$(pwd -P)"
me="fuzz.sh"
die() {
    echo "$me: ERROR: $*" >&2
    exit 2
}

seconds="${1:-60}"
case "$seconds" in
    -h|--help) sed -n '2,17s/^# \{0,1\}//p' "$0"; exit 0 ;;
    ''|*[!0-9]*) die "the fuzzing time must be a whole number of seconds, not '$seconds'" ;;
esac
[[ "$seconds" -ge 1 ]] || die "the fuzzing time must be at least 1 second"

if [[ "${PIPESCOPE_SKIP_INSTALL_DEPS:-0}" != 1 ]]; then
    scripts/install-deps.sh || die "installing dependencies failed"
fi
command -v clang++ >/dev/null || die "clang++ not found (Debian packages clang and libclang-rt-14-dev)"

build_dir="$repo_root/build-fuzz"
jobs="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
echo "==== $me: configure and build ($build_dir, clang, libFuzzer + ASan + UBSan)"
CXX=clang++ cmake -S "$repo_root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DPIPESCOPE_SANITIZE=fuzz -DPIPESCOPE_BUILD_TESTS=OFF -DPIPESCOPE_BUILD_VIEWER=OFF -DPIPESCOPE_BUILD_BENCH=OFF \
    || die "configuring $build_dir failed"
cmake --build "$build_dir" --parallel "$jobs" --target pipescope_fuzz_trace_reader || die "building the fuzz target failed"
fuzzer="$build_dir/tests/fuzz/pipescope_fuzz_trace_reader"

corpus="$build_dir/corpus"
seeds="$build_dir/seeds"
crashes="$build_dir/crashes"
mkdir -p "$corpus" "$seeds" "$crashes"
cp tests/data/*.pftrace "$seeds/"
cp tests/fuzz/regressions/* "$seeds/" 2>/dev/null || true
cli="$repo_root/build/cli/pipescope"
if [[ -x "$cli" ]]; then
    # Small traces of every policy, plain and compressed: the seeds that reach the most of the reader.
    while IFS= read -r policy; do
        [[ "$policy" == serial ]] && continue
        "$cli" run pipe-fib --policy "$policy" --workers 2 --param n=12 --param K=2 \
            -o "$seeds/pipe-fib-$policy.pftrace" >/dev/null 2>&1 || true
        "$cli" run ferret --policy "$policy" --workers 2 --size tiny --param queries=4 --trace-plain \
            -o "$seeds/ferret-$policy-plain.pftrace" >/dev/null 2>&1 || true
    done < <("$cli" list --json | python3 -c 'import json,sys; [print(p["name"]) for p in json.load(sys.stdin)["policies"]]')
else
    echo "$me: $cli not built: seeding with the test data only (run scripts/test.sh --quick first for richer seeds)"
fi
echo "==== $me: $(ls "$seeds" | wc -l) seed inputs, $(ls "$corpus" | wc -l) in the kept corpus; fuzzing for $seconds s"

log="$build_dir/fuzz.log"
status=0
# -timeout: one input taking 10 s is a hang. -rss_limit_mb: the reader's limits must keep memory bounded.
"$fuzzer" "$corpus" "$seeds" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=262144 \
    -print_final_stats=1 -artifact_prefix="$crashes/" >"$log" 2>&1 || status=$?
grep -E "INITED|DONE|Done [0-9]+ runs|stat::number_of_executed_units|ERROR|SUMMARY|Test unit written" "$log" || true
if [[ $status -ne 0 ]]; then
    echo "$me: the fuzzer found a problem (exit status $status); inputs in ${crashes#"$repo_root/"}/, log in build-fuzz/fuzz.log" >&2
    echo "$me: copy the input into tests/fuzz/regressions/ and fix the reader" >&2
    exit 1
fi
echo "$me: no crash in $seconds s ($(grep -o 'stat::number_of_executed_units: [0-9]*' "$build_dir/fuzz.log" | grep -o '[0-9]*$') executions)"
