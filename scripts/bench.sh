#!/usr/bin/env bash
# The benchmark matrix in one command: builds pipescope in Release (build-bench/), runs every
# benchmark program with a progress line per step, and writes bench/results.md — the machine, the
# conditions, the commands, and every table (medians with their spread; the programs take several
# runs per point themselves). Nothing here judges the numbers.
#
#   scripts/bench.sh              the default matrix (about 15 minutes on 2 cores)
#   scripts/bench.sh --quick      fewer runs and small inputs (a few minutes; for a smoke check)
#   scripts/bench.sh --full       large inputs everywhere (about 40 minutes on 2 cores)
#   scripts/bench.sh --out FILE   write the results elsewhere (default bench/results.md)
#
# What it runs (see bench/README.md for each program):
#   bench_pipelines_vs_tbb  ferret and dedup under every linear policy vs oneTBB's parallel_pipeline
#   bench_sps_vs_tbb        a serial-parallel-serial pipeline vs oneTBB, fine and coarse grains
#   bench_pipe_fib          seed 001 Fig. 14: T_S, T_1, T_P and dependency folding
#   bench_graph_schedulers  every stage-graph workload under every graph scheduler: time, peak footprint
#   bench_engine_cost       the runtime's own cost per step: graph instance, pipe_while boundary, hand-off
#   bench_trace_cost        tracing on vs off, ns and bytes per event
#   bench_virtual_validation  virtual makespans against measured runs at P = 1 and 2 (docs/virtual.md)
#   trace_detail.py         fine-grained runs traced with the default options vs untraced (through the CLI)
#   bench_reader_speed      trace reading speed (decode, full model)
#   pipescope-viewer        --bench on a generated 10-million-event trace: open time, frame time, memory
# Environment: PIPESCOPE_SKIP_INSTALL_DEPS=1 skips scripts/install-deps.sh; JOBS=<n> build jobs.
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."
repo_root="$(pwd -P)"
me="bench.sh"
die() {
    echo "$me: ERROR: $*" >&2
    exit 1
}

mode=default
out="$repo_root/bench/results.md"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --quick) mode=quick ;;
        --full) mode=full ;;
        --out)
            [[ $# -ge 2 ]] || die "--out needs a file name"
            out="$2"
            shift ;;
        -h|--help) sed -n '2,20s/^# \{0,1\}//p' "$0"; exit 0 ;;
        *) die "unknown argument '$1' (try --help)" ;;
    esac
    shift
done

case "$mode" in
    quick)
        pipelines=(--size small --runs 3)
        sps=(--runs 3 --run-ms 150)
        fib=(--runs 3 --n 20000)
        graphs=(--size tiny --runs 3)
        trace=(--runs 3 --n 10000)
        detail=(--quick)
        reader=(--runs 3 --iterations 125000)   # about 2 M events; the viewer opens the same trace
        engine=(--runs 3 --quick)
        virtual=(--size tiny --runs 3)
        ;;
    default)
        pipelines=(--size small --runs 5)
        sps=(--runs 5)
        fib=(--runs 5)
        graphs=(--size small --runs 5)
        trace=(--runs 5)
        detail=(--runs 5)
        reader=(--runs 5 --iterations 625000)   # about 10 M events; the viewer opens the same trace
        engine=(--runs 5)
        virtual=(--size small --runs 5)
        ;;
    full)
        pipelines=(--size large --runs 5)
        sps=(--runs 7)
        fib=(--runs 7)
        graphs=(--size large --runs 5)
        trace=(--runs 5)
        detail=(--runs 5)
        reader=(--runs 5 --iterations 625000)
        engine=(--runs 7)
        virtual=(--size small --runs 7)
        ;;
esac

if [[ "${PIPESCOPE_SKIP_INSTALL_DEPS:-0}" != 1 ]]; then
    scripts/install-deps.sh >/dev/null || die "installing dependencies failed"
fi

build_dir="$repo_root/build-bench"
jobs="${JOBS:-$(nproc 2>/dev/null || echo 2)}"
echo "$me: building Release into ${build_dir#"$repo_root/"}/ (-j$jobs)" >&2
cmake -S "$repo_root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DPIPESCOPE_BUILD_TESTS=OFF \
    -DPIPESCOPE_BUILD_BENCH=ON -DPIPESCOPE_BUILD_VIEWER=ON >/dev/null || die "configuring $build_dir failed"
cmake --build "$build_dir" --parallel "$jobs" >/dev/null || die "building $build_dir failed"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The steps: name, then the command. Programs that were not built (no oneTBB) are reported as such.
names=() cmds=()
add_step() {
    names+=("$1")
    shift
    cmds+=("$(printf '%q ' "$@")")
}
b="$build_dir/bench"
add_step "bench_pipelines_vs_tbb" "$b/bench_pipelines_vs_tbb" "${pipelines[@]}"
add_step "bench_sps_vs_tbb" "$b/bench_sps_vs_tbb" "${sps[@]}"
add_step "bench_pipe_fib" "$b/bench_pipe_fib" "${fib[@]}"
add_step "bench_graph_schedulers" "$b/bench_graph_schedulers" "${graphs[@]}"
add_step "bench_engine_cost" "$b/bench_engine_cost" "${engine[@]}"
add_step "bench_trace_cost" "$b/bench_trace_cost" "${trace[@]}"
add_step "bench_virtual_validation" "$b/bench_virtual_validation" "${virtual[@]}"
add_step "trace_detail.py" python3 "$repo_root/bench/trace_detail.py" --cli "$build_dir/cli/pipescope" "${detail[@]}"
add_step "bench_reader_speed" "$b/bench_reader_speed" "${reader[@]}" --save "$work/synthetic"
viewer="$build_dir/viewer/pipescope-viewer"
viewer_cmd=("$viewer" "$work/synthetic-compressed.pftrace" --bench 200)
if [[ -z "${DISPLAY:-}" ]]; then
    command -v xvfb-run >/dev/null || die "no display and no xvfb-run: cannot run the viewer benchmark"
    viewer_cmd=("$repo_root/scripts/under-xvfb.sh" xvfb-run "-screen 0 1600x1000x24" "${viewer_cmd[@]}")
fi

machine() {
    echo "- CPU: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), $(nproc) hardware threads"
    echo "- memory: $(free -g 2>/dev/null | awk '/^Mem:/ {print $2 " GiB"}')"
    echo "- system: $(uname -sr), $(. /etc/os-release 2>/dev/null && echo "$PRETTY_NAME")"
    echo "- compiler: $(c++ --version | head -1)"
    echo "- pipescope: $(git -C "$repo_root" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$repo_root" diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
    echo "- load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
}

progress() {   # progress K N NAME ELAPSED
    local k=$1 n=$2 name=$3 elapsed=$4 width=30
    local filled=$((k * width / n))
    printf '\r%s: [%-*s] %d/%d %-24s %4ds' "$me" "$width" "$(printf '%*s' "$filled" '' | tr ' ' '#')" "$k" "$n" \
        "$name" "$elapsed" >&2
}

steps=$(( ${#names[@]} + 1 ))
started=$SECONDS
{
    echo "# pipescope benchmark results"
    echo
    echo "Written by \`scripts/bench.sh${mode:+ --$mode}\` on $(date -u '+%Y-%m-%d %H:%M UTC'). Each program runs every point"
    echo "several times and prints medians with their spread ((max - min) / median); see"
    echo "\`bench/README.md\` for what each one measures and how to read it."
    echo
    echo "## Machine"
    echo
    machine
} > "$work/results.md"

for k in "${!names[@]}"; do
    progress "$k" "$steps" "${names[$k]}" $((SECONDS - started))
    {
        echo
        echo "## ${names[$k]}"
        echo
        echo '```'
        echo "\$ ${cmds[$k]//"$repo_root/"/}"
    } >> "$work/results.md"
    prog="${cmds[$k]%% *}"
    if [[ ! -x "$(eval echo "$prog")" ]]; then
        echo "not built (oneTBB missing? install libtbb-dev)" >> "$work/results.md"
    elif ! eval "${cmds[$k]}" >> "$work/results.md" 2> "$work/err.txt"; then
        echo "FAILED (exit status $?):" >> "$work/results.md"
        tail -20 "$work/err.txt" >> "$work/results.md"
    fi
    echo '```' >> "$work/results.md"
done

progress $((steps - 1)) "$steps" "pipescope-viewer --bench" $((SECONDS - started))
{
    echo
    echo "## pipescope-viewer --bench"
    echo
    echo "The synthetic trace bench_reader_speed wrote (compressed), opened and panned by the viewer:"
    echo "load time, CPU time per frame at full zoom-out and at 1/1000 of the trace, resident memory."
    echo
    echo '```'
    local_cmd="${viewer_cmd[*]//"$work/"/}"
    echo "\$ ${local_cmd//"$repo_root/"/}"
    for run in 1 2 3 4 5; do
        "${viewer_cmd[@]}" 2>&1 | grep '^bench:' || echo "run $run FAILED"
    done
    echo '```'
    echo
    echo "Finished in $((SECONDS - started)) s; load average after: $(cut -d' ' -f1-3 /proc/loadavg)."
} >> "$work/results.md"
progress "$steps" "$steps" "done" $((SECONDS - started))
echo >&2

mkdir -p "$(dirname "$out")"
cp "$work/results.md" "$out.tmp" && mv "$out.tmp" "$out"   # never a half-written results file
echo "$me: wrote ${out#"$repo_root/"}" >&2
