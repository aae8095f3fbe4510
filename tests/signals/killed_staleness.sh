#!/bin/bash
# SIGKILL while a program records (PIPESCOPE_TRACE) with a 1 GiB buffer, which its run never fills
# to half, so no burst of the drain thread writes anything: what reaches the temporary file comes
# from the once-a-second pass (docs/tracing.md, "Signals"). Before it, the file held only its header
# until the run ended. The program loops until killed. Usage: killed_staleness.sh PROGRAM CLI DIR
set -u
prog=$1; cli=$2; dir=$3
out="$dir/killed-staleness.pftrace"
rm -f "$out" "$out".*tmp
# 1 ms per iteration: about 10 000 events a second, far from the 16 M that half the pool holds.
PIPESCOPE_TRACE="$out" PIPESCOPE_TRACE_BUFFER=1024 "$prog" plain 1000 >"$dir/killed-staleness.log" 2>&1 &
pid=$!
tmp=""
for _ in $(seq 1 2400); do   # up to 120 s (a sanitizer build, a loaded machine): the file outgrows its header
    tmp=$(ls "$out".*tmp 2>/dev/null | head -1)
    [[ -n $tmp && $(stat -c %s "$tmp") -gt 4096 ]] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.05
done
kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
cat "$dir/killed-staleness.log"
[[ -n $tmp && -f $tmp ]] || { echo "no temporary file left"; exit 1; }
size=$(stat -c %s "$tmp")
echo "left: $tmp, $size bytes"
((size > 4096)) || { echo "the temporary file holds only its header: nothing was drained while the run went on"; exit 1; }
report=$("$cli" validate "$tmp"); rc=$?
echo "$report"
[[ $rc == 1 && $report == *"PARTIAL: 1 of 1 recorded runs"* ]] || { echo "validate did not report a partial recording"; exit 1; }
slices=$(sed -n 's/.* packets, [0-9,]* tracks, \([0-9,]*\) slices .*/\1/p' <<<"$report" | tr -d ,)
[[ -n $slices && $slices -gt 0 ]] || { echo "the temporary file holds no slice"; exit 1; }
echo "killed recording: slices up to the last second ($slices)"
