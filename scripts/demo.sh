#!/usr/bin/env bash
# The pipescope demo: builds the plain configuration (build/, same as scripts/test.sh) and runs the
# demo workloads under each scheduling policy, printing each result.
#
#   scripts/demo.sh
#   scripts/demo.sh --no-build     use the existing build/ as it is
#
# Environment: PIPESCOPE_SKIP_INSTALL_DEPS=1 skips scripts/install-deps.sh; JOBS=<n> build jobs.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo_root="$(pwd -P)"
me="demo.sh"

# What the demo runs: every workload under every policy, at this size.
workloads=(ferret pipe-fib-256 dedup x264 pipe-fib)
policies=(serial piper piper-earliest tbb)
traced_workloads=(ferret pipe-fib-256 x264)
size=small

build_dir="$repo_root/build"
trace_dir="$repo_root/out"   # traces the demo records (git-ignored)
cli="$build_dir/cli/pipescope"

die() {
    echo "$me: ERROR: $*" >&2
    exit 1
}

do_build=1
case "${1:-}" in
    "") ;;
    --no-build) do_build=0 ;;
    -h|--help) sed -n '2,8s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) die "unknown argument '$1' (try --help)" ;;
esac

build() {
    local jobs="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
    if [[ "${PIPESCOPE_SKIP_INSTALL_DEPS:-0}" != 1 ]]; then
        scripts/install-deps.sh || die "installing dependencies failed"
    fi
    echo "==== $me: configure and build ($build_dir)"
    # Same cache settings as scripts/test.sh's plain configuration, so neither reconfigures the other.
    cmake -S "$repo_root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          -DPIPESCOPE_BUILD_TESTS=ON -DPIPESCOPE_SANITIZE= -DPIPESCOPE_BUILD_BENCH=ON \
        || die "configuring $build_dir failed"
    cmake --build "$build_dir" --parallel "$jobs" || die "building $build_dir failed"
}

# run_job WORKLOAD POLICY: one run of the CLI, its output shown as it comes.
run_job() {
    local workload="$1" policy="$2"
    local -a cmd=("$cli" run "$workload" --size "$size" --policy "$policy")
    # Parallel runs of the coarse-grained workloads are recorded as Perfetto traces. (The serial
    # elision runs on the calling thread and has no workers to record; fine-grained pipe-fib makes
    # hundreds of millions of events at this size — one per 2.5 ns stage — faster than any writer
    # can stream them, so its trace would mostly say where events were dropped.)
    if [[ "$policy" != serial && " ${traced_workloads[*]} " == *" $workload "* ]]; then
        mkdir -p "$trace_dir"
        cmd+=(-o "$trace_dir/$workload-$policy.pftrace")
    fi
    echo ""
    echo "---- $workload, policy $policy: ${cmd[*]#"$repo_root/"}"
    local status=0
    "${cmd[@]}" || status=$?
    # Exit status 2 with the reason is a refusal (a construct-and-run policy cannot run a program
    # whose structure is decided on the fly): part of the demo, not a failure.
    [[ $status -eq 0 || $status -eq 2 ]] || die "'${cmd[*]}' failed (exit status $status)"
}

main() {
    if [[ $do_build -eq 1 ]]; then
        build
    fi
    if [[ ! -x "$cli" ]]; then
        die "the pipescope CLI was not built: $cli does not exist (no pipescope_cli target yet?)"
    fi
    echo ""
    echo "==== $me: running ${workloads[*]} under policies ${policies[*]} (size $size)"
    for workload in "${workloads[@]}"; do
        for policy in "${policies[@]}"; do
            run_job "$workload" "$policy"
        done
    done
    echo ""
    echo ""
    echo "==== $me: the recorded traces"
    local t
    for t in "$trace_dir"/*.pftrace; do
        "$cli" validate "$t" | head -1
    done
    echo ""
    echo "==== $me: done. Traces in ${trace_dir#"$repo_root/"}/ — open them in ui.perfetto.dev;"
    echo "     example traces that ship with pipescope are in traces/ (see traces/README.md)"
}

main
