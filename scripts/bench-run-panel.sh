#!/usr/bin/env bash
# The run panel's recording must not stall the viewer's frames (issue 37: p99 frame time while a run
# records <= 2x idle). Each session opens the K=2 example, opens the run panel, draws 300 idle
# frames, starts a run of pipe-fib (size large, 2 workers, K default) with Run, draws 300 frames while
# it records, cancels it, then draws 300 idle frames again; PIPESCOPE_FRAME_LOG (viewer/app/frame_log.hpp)
# logs every frame's build time and whether a recording was going on. The idle frames compared are
# those before the run (the same document on screen; after it a second trace is open, or a cancelled
# run's row). Sessions are repeated, so idle and recording frames are interleaved in time; the load
# average is printed before each.
#   scripts/bench-run-panel.sh [BUILD_DIR] [SESSIONS] [LOG_DIR]   (default build, 5, a temporary one)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${1:-build}
sessions=${2:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
logs=${3:-$tmp}
mkdir -p "$logs"
cat >"$tmp/script.txt" <<'SCRIPT'
wait-loaded
key ctrl+r
frames 300
# size large, then Run (the panel's default place in a 1600x1000 window): pipe-fib large records
# far longer than the 300 frames drawn while it does; its row's Cancel then stops it
click 297 677
click 107 749
frames 300
click 549 800
wait-loaded
frames 300
SCRIPT
for i in $(seq 1 "$sessions"); do
    echo "session $i: load average $(cut -d' ' -f1-3 /proc/loadavg)"
    PIPESCOPE_FRAME_LOG="$logs/frames-$i.txt" PIPESCOPE_RUNS_DIR="$tmp/runs" XDG_CONFIG_HOME="$tmp/config" \
        sh scripts/under-xvfb.sh xvfb-run "-screen 0 1600x1000x24" "$build/viewer/pipescope-viewer" \
        traces/pipe-fib-256-piper-K2.pftrace --script "$tmp/script.txt" >/dev/null
done
python3 - "$logs" "$sessions" <<'PY'
import statistics, sys
tmp, n = sys.argv[1], int(sys.argv[2])
def pct(v, q):
    v = sorted(v)
    return v[min(len(v) - 1, int(q * (len(v) - 1) + 0.5))]
rows = []
for i in range(1, n + 1):
    idle, rec = [], []
    for line in open(f"{tmp}/frames-{i}.txt"):
        ms, recording = line.split()
        if recording == "1": rec.append(float(ms))
        elif not rec: idle.append(float(ms))   # before the run
    rows.append((pct(idle, .5), pct(idle, .99), pct(rec, .5), pct(rec, .99), len(idle), len(rec)))
    print(f"session {i}: idle p50 {rows[-1][0]:.2f} ms p99 {rows[-1][1]:.2f} ms ({len(idle)} frames); "
          f"recording p50 {rows[-1][2]:.2f} ms p99 {rows[-1][3]:.2f} ms ({len(rec)} frames); "
          f"p99 ratio {rows[-1][3] / rows[-1][1]:.2f}")
med = [statistics.median(r[k] for r in rows) for k in range(4)]
print(f"median of {n}: idle p50 {med[0]:.2f} ms p99 {med[1]:.2f} ms; recording p50 {med[2]:.2f} ms p99 {med[3]:.2f} ms; "
      f"p99 ratio {med[3] / med[1]:.2f} (the bound: 2)")
PY
