#!/bin/bash
# `pipescope sql` (docs/perfetto-sql.md, "Many traces at once"): one query, the module loaded, over
# several traces in Perfetto's trace processor: one row per run with its file, CSV and JSON forms, a bad query named with its file (exit 1), usage
# errors (exit 2). Skipped (77) without the trace processor. Usage: cli_sql.sh PIPESCOPE_CLI DIR
set -u
cli=$1; dir=$2/sql-work
rm -rf "$dir"; mkdir -p "$dir"
fail() { echo "FAIL: $*"; exit 1; }

"$cli" run ferret --policy tbb --workers 2 --size tiny -o "$dir/a.pftrace" >/dev/null || fail "recording a"
"$cli" run mergesort --policy gramps --workers 2 --size tiny -o "$dir/b.pftrace" >/dev/null || fail "recording b"
"$cli" sql --no-module "select 1" "$dir/a.pftrace" >"$dir/probe" 2>&1; rc=$?
if [[ $rc == 1 ]] && grep -q "not installed here" "$dir/probe"; then echo "SKIP: $(cat "$dir/probe")"; exit 77; fi

"$cli" sql --csv "select title, workers, makespan_ns from pipescope_run" "$dir/a.pftrace" "$dir/b.pftrace" >"$dir/out.csv" ||
    fail "sql over two traces: $(cat "$dir/out.csv")"
[[ $(head -1 "$dir/out.csv") == "file,title,workers,makespan_ns" ]] || fail "header: $(head -1 "$dir/out.csv")"
[[ $(wc -l <"$dir/out.csv") == 3 ]] || fail "expected one row per trace: $(cat "$dir/out.csv")"
for t in a b; do
    row=$(grep "^$dir/$t.pftrace," "$dir/out.csv") || fail "no row for $t"
    makespan=${row##*,}
    [[ $makespan =~ ^[0-9]+$ && $makespan -gt 0 ]] || fail "$t: makespan '$makespan'"
done
"$cli" sql --json "select title, workers from pipescope_run" "$dir/b.pftrace" >"$dir/out.json" || fail "--json"
python3 -c 'import json,sys; o=json.loads(open(sys.argv[1]).read()); assert o["file"].endswith("b.pftrace") and o["workers"] == 2, o' "$dir/out.json" ||
    fail "--json row: $(cat "$dir/out.json")"

"$cli" sql "select nope from pipescope_run" "$dir/a.pftrace" >/dev/null 2>"$dir/err"; rc=$?
[[ $rc == 1 ]] && grep -q "^pipescope: $dir/a.pftrace: " "$dir/err" && grep -q "no such column: nope" "$dir/err" || fail "a bad query: exit $rc, $(cat "$dir/err")"
"$cli" sql "select 1" >/dev/null 2>"$dir/err"; rc=$?
[[ $rc == 2 ]] && grep -q "sql: which traces?" "$dir/err" || fail "no traces: exit $rc, $(cat "$dir/err")"
echo "sql: one table over the traces, bad queries named"
