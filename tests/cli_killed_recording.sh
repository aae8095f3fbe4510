#!/bin/bash
# SIGKILL during recording: the NAME.XXXXXX.tmp left behind is readable and says it is partial, no
# complete-looking NAME appears, and `pipescope recover` turns it into a clean trace.
# Usage: cli_killed_recording.sh PIPESCOPE_CLI DIR
set -u
cli=$1; dir=$2
rm -f "$dir/killed.pftrace" "$dir"/killed.pftrace.*.tmp
partial() { compgen -G "$dir/killed.pftrace.*.tmp" | head -n 1; }   # the writer's temporary file
# A 1 MiB pool: the writer drains when half of it is full (docs/tracing.md, "When the writer works"),
# so the file grows while the run goes on.
"$cli" run pipe-fib-256 --size large --workers 2 --trace-buffer 1 -o "$dir/killed.pftrace" >/dev/null 2>&1 &
pid=$!
for i in $(seq 1 4800); do   # up to 240 s: sanitizer builds on a loaded machine run the serial reference slowly
    tmp=$(partial)
    if [[ -n $tmp && $(stat -c %s "$tmp" 2>/dev/null || echo 0) -gt 200000 ]]; then break; fi
    sleep 0.05
done
kill -KILL $pid; wait $pid 2>/dev/null
[[ -f "$dir/killed.pftrace" ]] && { echo "a complete-looking file appeared"; exit 1; }
tmp=$(partial)
[[ -n $tmp && -f $tmp ]] || { echo "no partial file left"; exit 1; }
out=$("$cli" validate "$tmp"); rc=$?
echo "$out"
[[ $rc == 1 && $out == *"PARTIAL: 1 of 1 recorded runs"* ]] || { echo "validate did not report a partial recording (exit $rc)"; exit 1; }
# recover writes its complete packets to a clean file that validate reads without a cut.
rm -f "$dir/killed-recovered.pftrace"
rec=$("$cli" recover "$tmp" -o "$dir/killed-recovered.pftrace"); rc=$?
rm -f "$tmp"
echo "$rec"
[[ $rc == 0 && $rec == *"recovered $dir/killed-recovered.pftrace: "* ]] || { echo "recover failed (exit $rc)"; exit 1; }
out=$("$cli" validate "$dir/killed-recovered.pftrace")
[[ $out == *"PARTIAL: 1 of 1 recorded runs"* && $out != *"CUT SHORT"* ]] || { echo "the recovered file: $out"; exit 1; }
echo "killed recording: readable partial file"
