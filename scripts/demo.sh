#!/usr/bin/env bash
# The pipescope demo: builds the plain configuration (build/, same as scripts/test.sh), runs the
# demo workloads under each scheduling policy, printing each result, then puts the ferret runs of
# the parallel policies side by side: `pipescope compare` prints the table, and the viewer opens on
# them (with a display), or writes screenshots of every view into out/screenshots/ (without one);
# then a stage graph under three graph schedulers, and one lesson (imbalance) told in the terminal.
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
policies=(serial piper piper-earliest tbb bind-to-stage)
traced_workloads=(ferret pipe-fib-256 x264 pipe-fib)
size=small
# The runs the viewer compares at the end (ferret, recorded above).
compared_policies=(piper tbb bind-to-stage)
# A stage graph (seed 004 Fig. 1: the ray tracer with its bounce cycle) under the graph schedulers
# whose footprints seed 004 Table III sets apart.
graph_workload=ray-1
graph_policies=(gramps breadth-first danbi)

build_dir="$repo_root/build"
trace_dir="$repo_root/out"   # traces the demo records (git-ignored)
cli="$build_dir/cli/pipescope"
viewer="$build_dir/viewer/pipescope-viewer"
shot_dir="$trace_dir/screenshots"

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
    # Parallel runs are recorded as Perfetto traces (the serial elision runs on the calling thread
    # and has no workers to record). Fine-grained pipe-fib runs one-bit stages of about 2.5 ns: its
    # trace folds them into runs (--trace-detail auto, the default; docs/tracing.md, "Detail levels").
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

# The ferret traces of the compared policies: the table, then the viewer on them.
show_comparison() {
    local -a traces=()
    local p
    for p in "${compared_policies[@]}"; do
        [[ -f "$trace_dir/ferret-$p.pftrace" ]] && traces+=("$trace_dir/ferret-$p.pftrace")
    done
    [[ ${#traces[@]} -ge 2 ]] || die "fewer than two ferret traces were recorded; nothing to compare"
    echo ""
    echo "==== $me: ferret under ${compared_policies[*]}, side by side"
    "$cli" compare "${traces[@]}" || die "pipescope compare failed"
    echo ""
    echo "==== $me: why the piper run took as long as it did"
    "$cli" stats "$trace_dir/ferret-piper.pftrace" || die "pipescope stats failed"
    if [[ ! -x "$viewer" ]]; then
        echo "$me: the viewer was not built ($viewer); skipping it"
        return
    fi
    if [[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]]; then
        echo ""
        echo "==== $me: opening the viewer on the comparison (close the window to finish)"
        "$viewer" "${traces[@]}" --view compare || die "the viewer failed (exit status $?)"
        return
    fi
    command -v xvfb-run >/dev/null || die "no display and no xvfb-run: cannot render the viewer"
    echo ""
    echo "==== $me: no display: the viewer renders each view headless into ${shot_dir#"$repo_root/"}/"
    mkdir -p "$shot_dir"
    local view
    for view in compare timeline breakdown dag; do
        "$repo_root/scripts/under-xvfb.sh" xvfb-run "-screen 0 1600x1000x24" "$viewer" "${traces[@]}" --view "$view" \
            --screenshot "$shot_dir/ferret-$view.png" || die "the viewer failed on view $view"
    done
}

# The stage graph under the graph schedulers: their queues and footprints, and the stage graph view.
show_graph() {
    local -a traces=()
    local p
    echo ""
    echo "==== $me: the stage graph $graph_workload under ${graph_policies[*]} (size $size)"
    mkdir -p "$trace_dir"
    for p in "${graph_policies[@]}"; do
        echo ""
        echo "---- $graph_workload, graph policy $p"
        "$cli" run "$graph_workload" --size "$size" --policy "$p" -o "$trace_dir/$graph_workload-$p.pftrace" \
            || die "pipescope run $graph_workload --policy $p failed"
        traces+=("$trace_dir/$graph_workload-$p.pftrace")
    done
    echo ""
    echo "==== $me: queue fills and peak footprint, from the traces (seed 004 Table III)"
    "$cli" stats "${traces[@]}" | grep -E "^==|^queues|^  [a-z]|footprint|stopped by" || die "pipescope stats failed"
    if [[ ! -x "$viewer" ]]; then return; fi
    if [[ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]]; then
        echo "==== $me: opening the viewer's stage graph view (close the window to finish)"
        "$viewer" "${traces[@]}" --view graph || die "the viewer failed (exit status $?)"
        return
    fi
    command -v xvfb-run >/dev/null || die "no display and no xvfb-run: cannot render the viewer"
    mkdir -p "$shot_dir"
    local view
    for view in graph timeline; do
        "$repo_root/scripts/under-xvfb.sh" xvfb-run "-screen 0 1600x1000x24" "$viewer" "${traces[@]}" --view "$view" --time 20000000 \
            --screenshot "$shot_dir/$graph_workload-$view.png" || die "the viewer failed on view $view"
    done
}

# One lesson, told in the terminal (docs/lessons/): ferret's imbalance under bind-to-stage against work
# stealing, measured from its own traces. Headless (--no-viewer): the story with its numbers, and a
# screenshot of each step when xvfb-run or a display is there; the viewer opens it on request.
show_lesson() {
    local out="$trace_dir/lessons/imbalance"
    echo ""
    echo "==== $me: a lesson — pipescope lesson imbalance (every lesson: pipescope lesson --list)"
    "$cli" lesson imbalance --size "$size" --out "$out" --no-viewer || die "pipescope lesson imbalance failed"
    echo "     open it in the viewer: ${viewer#"$repo_root/"} ${out#"$repo_root/"}/lesson.json"
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
    show_comparison
    show_graph
    show_lesson
    echo ""
    echo "==== $me: done. Traces in ${trace_dir#"$repo_root/"}/ — open them in ui.perfetto.dev;"
    echo "     example traces that ship with pipescope are in traces/ (see traces/README.md)."
    echo "     Each seed paper's finding, live: ${cli#"$repo_root/"} lesson --list (docs/lessons/)."
}

main
