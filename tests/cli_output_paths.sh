#!/bin/bash
# Output paths at the CLI (docs/tracing.md, "Output files"): what cannot be a file is refused before
# the workload runs (exit 2, one line naming the path and why, nothing on stdout) and left as it
# was; a planted link at the old temporary name redirects nothing; a 0600 trace stays 0600; two
# recordings of one path at once leave one whole trace; as root, a full tmpfs gives "no space left
# on device" as the first line. Usage: cli_output_paths.sh PIPESCOPE_CLI DIR
set -u
cli=$1; dir=$2/output-paths
rm -rf "$dir"; mkdir -p "$dir"
fail() { echo "FAIL: $*"; exit 1; }

# refused EXPECTED_STDERR_LINE ARGS...: exit 2, exactly that one line on stderr, nothing on stdout.
refused() {
    local want=$1; shift
    "$cli" "$@" >"$dir/stdout" 2>"$dir/stderr"; local rc=$?
    [[ $rc == 2 ]] || fail "pipescope $*: exit $rc, expected 2; stderr: $(cat "$dir/stderr")"
    [[ $(cat "$dir/stderr") == "$want" && $(wc -l <"$dir/stderr") == 1 ]] ||
        fail "pipescope $*: stderr is '$(cat "$dir/stderr")', expected the one line '$want'"
    [[ ! -s $dir/stdout ]] || fail "pipescope $*: the command did its work first: $(cat "$dir/stdout")"
}
run=(run pipe-fib-256 --size tiny --workers 2)

refused 'pipescope: cannot write "": the output path is empty' "${run[@]}" -o ""
mkdir "$dir/adir"
refused "pipescope: cannot write $dir/adir: is a directory" "${run[@]}" -o "$dir/adir"
[[ -d $dir/adir && -z $(ls -A "$dir/adir") ]] || fail "the directory was changed"
refused "pipescope: cannot write /dev/null: is a character device" "${run[@]}" -o /dev/null
[[ -c /dev/null ]] || fail "/dev/null is no longer a character device"
mkfifo "$dir/fifo"
refused "pipescope: cannot write $dir/fifo: is a FIFO" "${run[@]}" -o "$dir/fifo"
[[ -p $dir/fifo ]] || fail "the FIFO was replaced"
refused "pipescope: cannot write $dir/missing/run.pftrace: the directory $dir/missing does not exist" \
    "${run[@]}" -o "$dir/missing/run.pftrace"
echo precious >"$dir/victim"
ln -s "$dir/victim" "$dir/link.pftrace"
refused "pipescope: cannot write $dir/link.pftrace: is a symbolic link (to $dir/victim); write to $dir/victim itself" \
    "${run[@]}" -o "$dir/link.pftrace"
[[ -L $dir/link.pftrace && $(cat "$dir/victim") == precious ]] || fail "the link or its target was changed"
# The other commands that write a file refuse the same way, before reading or measuring anything.
refused "pipescope: export-json: cannot write /dev/null: is a character device" export-json no-such.pftrace /dev/null
refused "pipescope: dedup-restore: cannot write $dir/adir: is a directory" dedup-restore no-such.archive "$dir/adir"
refused "pipescope: cannot write $dir/adir: is a directory" calibrate --out "$dir/adir"
refused 'pipescope: cannot write "": the output path is empty' calibrate --out ""
refused 'pipescope: cannot write "": the output path is empty' scale pipe-fib --policies piper --workers 1 --out ""
refused "pipescope: cannot write $dir/fifo: is a FIFO" run dedup --size tiny --param "output=$dir/fifo"

# A link planted at the old fixed temporary name is neither followed nor replaced.
ln -s "$dir/victim" "$dir/planted.pftrace.tmp"
"$cli" "${run[@]}" -o "$dir/planted.pftrace" >/dev/null || fail "recording next to a planted link failed"
[[ $(cat "$dir/victim") == precious && -L $dir/planted.pftrace.tmp ]] || fail "the planted link redirected the write"
"$cli" validate "$dir/planted.pftrace" >/dev/null || fail "the trace next to the planted link does not validate"

# A re-recorded private trace stays private.
(umask 022; echo old >"$dir/private.pftrace"; chmod 600 "$dir/private.pftrace")
"$cli" "${run[@]}" -o "$dir/private.pftrace" >/dev/null || fail "re-recording the 0600 trace failed"
[[ $(stat -c %a "$dir/private.pftrace") == 600 ]] || fail "the 0600 trace came back $(stat -c %a "$dir/private.pftrace")"

# Two recordings of one path at once: both succeed, the file is one of them, whole.
for round in 1 2 3; do
    "$cli" "${run[@]}" -o "$dir/shared.pftrace" >/dev/null 2>"$dir/a.err" & a=$!
    "$cli" "${run[@]}" --workers 1 -o "$dir/shared.pftrace" >/dev/null 2>"$dir/b.err" & b=$!
    wait $a || fail "round $round: the first recording failed: $(cat "$dir/a.err")"
    wait $b || fail "round $round: the second recording failed: $(cat "$dir/b.err")"
    "$cli" validate "$dir/shared.pftrace" >"$dir/validate.out" || fail "round $round: $(cat "$dir/validate.out")"
done
[[ -z $(compgen -G "$dir/*.tmp" | grep -v planted.pftrace.tmp) ]] || fail "temporary files left: $(ls "$dir")"

# A real full disk, where this runs as root and may mount a tmpfs.
if [[ $(id -u) == 0 ]] && mkdir -p "$dir/full" && mount -t tmpfs -o size=64k tmpfs "$dir/full" 2>/dev/null; then
    echo "the previous recording" >"$dir/full/run.pftrace"
    "$cli" run pipe-fib-256 --size small --workers 2 --trace-plain -o "$dir/full/run.pftrace" >/dev/null 2>"$dir/full.err"
    rc=$?
    first=$(head -n 1 "$dir/full.err")
    leftovers=$(compgen -G "$dir/full/*.tmp")
    old=$(cat "$dir/full/run.pftrace")
    umount "$dir/full"
    [[ $rc == 3 ]] || fail "full disk: exit $rc, expected 3; stderr: $(cat "$dir/full.err")"
    [[ $first == "pipescope: error: cannot write $dir/full/run.pftrace: no space left on device" ]] ||
        fail "full disk: the first line is '$first'"
    [[ -z $leftovers && $old == "the previous recording" ]] || fail "full disk: old file '$old', leftovers '$leftovers'"
    echo "full disk: $first"
else
    echo "full disk: skipped (needs root and a tmpfs mount)"
fi
echo "output paths: ok"
