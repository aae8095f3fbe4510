#!/bin/bash
# Ctrl-C during the serial reference (before the measured run) of `pipescope run -o FILE`: the
# reference stops at its next check, the command says nothing was written and exits 130, and an
# existing FILE is left byte for byte as it was (no trace of zero iterations replaces it).
# Usage: cli_interrupted_reference.sh CLI DIR
set -u
set -m
cli=$1; dir=$2
out="$dir/reference-interrupted.pftrace"
printf 'the trace the user already has\n' >"$out"
cp "$out" "$out.before"
rm -f "$out".*tmp
# n = 200000: a serial reference of minutes, so the signal surely comes during it.
"$cli" run pipe-fib-256 --size large --param n=200000 --workers 2 -o "$out" >"$dir/reference-interrupted.log" 2>&1 &
pid=$!
(sleep 600; kill -KILL $pid) >/dev/null 2>&1 &
watchdog=$!
caught_sigint() {   # the command's handler is installed (bit 2 of SigCgt: SIGINT)
    local mask
    mask=$(awk '/^SigCgt/ {print $2}' /proc/$pid/status 2>/dev/null) || return 1
    [[ -n $mask ]] && (( (0x$mask & 2) != 0 ))
}
for _ in $(seq 1 1200); do caught_sigint && break; sleep 0.05; done
sleep 0.5   # into the serial reference
ls "$out".*tmp >/dev/null 2>&1 && echo "note: a temporary file exists: the measured run had started"
kill -INT $pid
wait $pid; rc=$?
kill -- -$watchdog 2>/dev/null; wait $watchdog 2>/dev/null   # its own process group (set -m)
cat "$dir/reference-interrupted.log"
[[ $rc == 130 ]] || { echo "expected exit status 130 after SIGINT, got $rc"; exit 1; }
cmp "$out" "$out.before" || { echo "the existing trace file was changed"; exit 1; }
ls "$out".*tmp >/dev/null 2>&1 && { echo "a temporary file was left behind"; exit 1; }
grep -qF "interrupted before the measured run: $out not written (the existing file is unchanged)" \
    "$dir/reference-interrupted.log" || { echo "the command did not say the trace was not written"; exit 1; }
echo "interrupted reference: 130, the existing trace unchanged"
