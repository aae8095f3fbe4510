#!/bin/bash
# `pipescope run --progress json` (what the viewer's run panel reads): every stderr line of a
# successful run is a JSON object {"pipescope_progress": PHASE, "elapsed_s": ...}, the phases come in
# the order reference, measured, writing, done, the measured line says reference_s, done names the
# trace, and stdout is the usual summary. A bad --progress value is a usage error (exit 2).
# Usage: cli_progress_json.sh CLI DIR
set -u
cli=$1; dir=$2
out="$dir/progress.pftrace"
rm -f "$out"
"$cli" run pipe-fib --size tiny --workers 2 --param K=2 -o "$out" --progress json >"$dir/progress.out" 2>"$dir/progress.err"
rc=$?
cat "$dir/progress.err"
[[ $rc == 0 ]] || { echo "exit status $rc"; exit 1; }
grep -q "pipe-fib · piper · P=2" "$dir/progress.out" || { echo "no run summary on stdout"; exit 1; }
python3 - "$dir/progress.err" "$out" <<'PY' || exit 1
import json, sys
phases, elapsed, lines = [], -1.0, open(sys.argv[1]).read().splitlines()
for line in lines:
    j = json.loads(line)
    p = j["pipescope_progress"]
    assert j["elapsed_s"] >= elapsed, line
    elapsed = j["elapsed_s"]
    if p == "measured" and "reference_s" in j: assert j["reference_s"] > 0, line
    if not phases or phases[-1] != p: phases.append(p)
assert phases == ["reference", "measured", "writing", "done"], phases
assert json.loads(lines[-1])["trace"] == sys.argv[2], lines[-1]
PY
"$cli" run pipe-fib --size tiny --progress yaml >/dev/null 2>"$dir/progress-bad.err"
[[ $? == 2 ]] || { echo "--progress yaml: expected exit status 2"; exit 1; }
grep -q "expected json" "$dir/progress-bad.err" || { echo "--progress yaml: no reason given"; exit 1; }
echo "progress json: phases in order"
