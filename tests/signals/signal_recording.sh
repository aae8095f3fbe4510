#!/bin/bash
# SIGINT and SIGTERM to a program recording through trace_session's signal path (finish_on_signal,
# and PIPESCOPE_TRACE): the trace is finished and renamed into place, validates, and its run's
# outcome says "interrupted by SIG..."; then the program's own handling proceeds: by default it dies
# of the signal (exit status 128 + n), with a handler of its own the handler runs (here: the loop
# stops and the program exits 3). Usage: signal_recording.sh PROGRAM CLI DIR
set -u
set -m   # job control: a background job's SIGINT is not ignored (the program sees a terminal's default)
prog=$1; cli=$2; dir=$3
failed=0

# run_case NAME SIGNAL EXPECTED_STATUS MODE [env assignments...]
run_case() {
    local name=$1 sig=$2 want=$3 mode=$4
    shift 4
    local out="$dir/signal-$name.pftrace" log="$dir/signal-$name.log"
    rm -f "$out" "$out".*tmp "$out.json"
    if [[ $mode == plain ]]; then
        env "$@" PIPESCOPE_TRACE="$out" "$prog" plain >"$log" 2>&1 &
    else
        env "$@" "$prog" "$mode" "$out" >"$log" 2>&1 &
    fi
    local pid=$!
    (sleep 240; kill -KILL $pid) >/dev/null 2>&1 &   # never hang: a program that ignores the signal dies here
    local watchdog=$!
    for _ in $(seq 1 2400); do   # up to 120 s: its loop runs (and the handlers are installed)
        grep -q '^recording$' "$log" && break
        kill -0 $pid 2>/dev/null || break
        sleep 0.05
    done
    sleep 0.5   # some work recorded (the trace is finished whatever the amount)
    kill -"$sig" $pid
    wait $pid
    local rc=$?
    kill -- -$watchdog 2>/dev/null; wait $watchdog 2>/dev/null   # its own process group (set -m)
    echo "--- $name: exit $rc"; cat "$log"
    local bad=0
    [[ $rc == "$want" ]] || { echo "FAIL $name: expected exit status $want after SIG$sig, got $rc"; bad=1; }
    ls "$out".*tmp >/dev/null 2>&1 && { echo "FAIL $name: a temporary file was left behind"; bad=1; }
    if ! "$cli" validate "$out"; then echo "FAIL $name: the trace does not validate"; bad=1; fi
    if "$cli" export-json "$out" "$out.json" >/dev/null && grep -q "\"outcome\":\"interrupted by SIG$sig\"" "$out.json"; then :
    else echo "FAIL $name: the run's outcome is not 'interrupted by SIG$sig'"; bad=1; fi
    if "$cli" stats "$out" | grep -q "until signalled\|signal"; then :; else echo "FAIL $name: stats cannot read the run"; bad=1; fi
    rm -f "$out.json"
    ((bad)) && failed=1
}

run_case session-int INT 130 session
run_case session-term TERM 143 session
run_case own-handler INT 3 own-handler
run_case environment INT 130 plain
run_case environment-term TERM 143 plain PIPESCOPE_TRACE_DETAIL=nodes
((failed)) && exit 1
echo "signal recording: finished traces, the program's own handling after"
