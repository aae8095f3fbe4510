#!/bin/bash
# `pipescope annotate` (docs/perfetto-sql.md, "Annotated traces"): the annotated trace holds the
# original's analysis unchanged (stats --json equal but for the file name), a critical-path track with
# exactly the slices of stats' critical path and a verdicts track with one instant per verdict (read
# back through Perfetto's own trace processor, which must import it without a load error, when the
# tooling is there); a second annotate, an existing output without --force and a cut-short file are
# refused and change nothing.
# Usage: cli_annotate.sh PIPESCOPE_CLI DIR [WEB_DIST]
set -u
cli=$1; dir=$2; web_dist=${3:-}
work=$dir/annotate-work
rm -rf "$work"; mkdir -p "$work"
fail() { echo "FAIL: $*"; exit 1; }

for spec in "pipe-fib --policy piper" "ferret --policy tbb" "mergesort --policy danbi"; do
    read -r workload _ policy <<<"$spec"
    trace=$work/$workload-$policy.pftrace
    "$cli" run $workload --policy $policy --workers 2 --size tiny -o "$trace" >/dev/null || fail "recording $spec"
    out=$work/annotated-$workload-$policy.pftrace
    rm -f "$out"
    "$cli" annotate "$trace" -o "$out" >"$work/out" || fail "annotate $trace: $(cat "$work/out")"
    grep -q "^annotated $out: 1 run" "$work/out" || fail "annotate said: $(cat "$work/out")"
    "$cli" stats --json "$trace" | sed 's/"file": ".*"/"file": "F"/' >"$work/a.json"
    "$cli" stats --json "$out" | sed 's/"file": ".*"/"file": "F"/' >"$work/b.json"
    cmp -s "$work/a.json" "$work/b.json" || fail "$spec: stats of the annotated trace differ: $(diff "$work/a.json" "$work/b.json" | head -5)"

    # Refusals leave the files as they were.
    sum=$(md5sum <"$out")
    "$cli" annotate "$out" -o "$work/twice.pftrace" 2>"$work/err"; rc=$?
    [[ $rc == 1 ]] && grep -q "annotated already (it has a 'pipescope analysis' track)" "$work/err" ||
        fail "annotating twice: exit $rc, $(cat "$work/err")"
    [[ ! -e $work/twice.pftrace ]] || fail "annotating twice wrote a file"
    "$cli" annotate "$trace" -o "$out" 2>"$work/err"; rc=$?
    [[ $rc == 1 ]] && grep -q "exists already (--force replaces it)" "$work/err" || fail "existing output: exit $rc"
    [[ $(md5sum <"$out") == "$sum" ]] || fail "a refused annotate changed $out"

    [[ -z $web_dist ]] && continue
    want_path=$(python3 -c 'import json,sys; r=json.load(open(sys.argv[1]))["runs"][0]; print(len(r["dag"].get("critical_path") or []), len(r["verdicts"]))' "$work/a.json")
    node "$(dirname "$0")/perfetto/tp_query.js" "$web_dist" "$out" \
        "select count(*) from slice s join track t on s.track_id = t.id where t.name like 'critical path · %'" \
        "select count(*) from slice s join track t on s.track_id = t.id where t.name like 'verdicts · %'" >"$work/tp.json" 2>/dev/null ||
        fail "the trace processor did not import $out cleanly: $(head -c 400 "$work/tp.json")"
    got=$(python3 -c 'import json,sys; q=json.load(open(sys.argv[1]))["queries"]; print(q[0]["rows"][0][0], q[1]["rows"][0][0])' "$work/tp.json")
    [[ $got == "$want_path" ]] || fail "$spec: Perfetto sees '$got' critical-path slices and verdicts, stats says '$want_path'"
    echo "ok: $spec: critical path and verdicts in Perfetto ($got)"
done

# A file cut short is refused (recover it first), and nothing is written.
head -c 3000 "$work/pipe-fib-piper.pftrace" >"$work/cut.pftrace"
"$cli" annotate "$work/cut.pftrace" 2>"$work/err"; rc=$?
[[ $rc == 1 ]] && grep -q "pipescope recover" "$work/err" || fail "a cut-short file: exit $rc, $(cat "$work/err")"
[[ ! -e $work/cut.annotated.pftrace ]] || fail "a cut-short file was annotated"
echo "annotate: analysis tracks added, stats unchanged, refusals change nothing"
