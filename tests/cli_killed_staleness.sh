#!/bin/bash
# SIGKILL during a recording with the default 64 MiB buffer: the drain thread writes what was
# recorded at least once a second (docs/tracing.md, "Signals"), so the temporary file left behind
# holds the run's slices up to about a second before the kill — not only the header, as when the
# writer waited for half the pool to fill. Usage: cli_killed_staleness.sh CLI DIR
set -u
cli=$1; dir=$2
out="$dir/killed-staleness.pftrace"
rm -f "$out" "$out".*tmp
# n = 100000: a measured run of several seconds.
"$cli" run pipe-fib-256 --size large --param n=100000 --workers 2 -o "$out" >"$dir/killed-staleness.log" 2>&1 &
pid=$!
tmp=""
for _ in $(seq 1 12000); do   # up to 600 s: until the temporary holds more than the header (~800 bytes)
    tmp=$(ls "$out".*tmp 2>/dev/null | head -1)
    [[ -n $tmp && $(stat -c %s "$tmp") -gt 4096 ]] && break
    kill -0 $pid 2>/dev/null || break
    sleep 0.05
done
kill -KILL $pid 2>/dev/null; wait $pid 2>/dev/null
[[ -f $out ]] && { echo "the run ended before anything but the header reached its temporary file"; exit 1; }
[[ -n $tmp && -f $tmp ]] || { echo "no temporary file left"; exit 1; }
echo "left: $tmp, $(stat -c %s "$tmp") bytes"
report=$("$cli" validate "$tmp"); rc=$?
echo "$report"
[[ $rc == 1 && $report == *"PARTIAL: 1 of 1 recorded runs"* ]] || { echo "validate did not report a partial recording"; exit 1; }
slices=$(sed -n 's/.* packets, [0-9,]* tracks, \([0-9,]*\) slices .*/\1/p' <<<"$report" | tr -d ,)
[[ -n $slices && $slices -gt 0 ]] || { echo "the temporary file holds no slice"; exit 1; }
echo "killed recording: slices up to the last second ($slices)"
