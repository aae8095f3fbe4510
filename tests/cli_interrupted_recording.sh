#!/bin/bash
# Ctrl-C (SIGINT) during a recorded run cancels the loop: exit status 130, the trace is finished (no
# .tmp left), validates, and holds the "cancelled" marker. Usage: cli_interrupted_recording.sh CLI DIR
set -u
cli=$1; dir=$2
out="$dir/interrupted.pftrace"
rm -f "$out" "$out".*.tmp "$dir/interrupted.json"
partial() { compgen -G "$out.*.tmp" | head -n 1; }   # the writer's temporary file (NAME.XXXXXX.tmp)
# A 1 MiB pool: the writer drains when half of it is full (docs/tracing.md, "When the writer works"),
# so the file grows while the run goes on.
"$cli" run pipe-fib-256 --size large --workers 2 --trace-buffer 1 -o "$out" >"$dir/interrupted.log" 2>&1 &
pid=$!
for i in $(seq 1 4800); do   # up to 240 s (sanitizers, a loaded machine): wait until the measured run is being recorded
    tmp=$(partial)
    if [[ -n $tmp && $(stat -c %s "$tmp" 2>/dev/null || echo 0) -gt 200000 ]]; then break; fi
    sleep 0.05
done
kill -INT $pid; wait $pid; rc=$?
cat "$dir/interrupted.log"
[[ $rc == 130 ]] || { echo "expected exit status 130 after SIGINT, got $rc"; exit 1; }
grep -q "cancelled after" "$dir/interrupted.log" || { echo "the run did not say it was cancelled"; exit 1; }
[[ -n $(partial) ]] && { echo "a partial .tmp was left behind"; exit 1; }
"$cli" validate "$out" || { echo "the interrupted run's trace does not validate"; exit 1; }
"$cli" export-json "$out" "$dir/interrupted.json" >/dev/null || { echo "export-json failed"; exit 1; }
grep -q '"name":"cancelled"' "$dir/interrupted.json" || { echo "no 'cancelled' instant in the trace"; exit 1; }
echo "interrupted recording: cancelled, finished trace"
