#!/usr/bin/env python3
"""The `pipescope` command's manners, as git's: what a user sees when something is wrong.

Every error path below prints at most two lines on stderr: "pipescope: WHAT" and, for a usage error,
"see 'pipescope help CMD'" (exit 2); no usage dump. A mistyped command, workload or policy gets
"did you mean"; a word far from every name gets none. `pipescope help CMD` prints CMD's usage and
`help` of a mistyped command says so. The recording's summary gives its size in the unit that fits
(KiB for a small trace, never "0.0 MB"). `pipescope perfetto` says when it gives up (300 s by default)
and how to use it offline.
usage: cli_manners.py PIPESCOPE_CLI WORK_DIR
"""
import os
import shutil
import subprocess
import sys

cli, work = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
missing = os.path.join(work, "no-such.pftrace")


def fail(msg):
    sys.exit(f"cli_manners: {msg}")


def pipescope(*args, timeout=120):
    return subprocess.run([cli, *args], capture_output=True, text=True, timeout=timeout, cwd=work)


# (arguments, exit status, first line, second line or None)
cases = [
    (["sttas", "x"], 2, "pipescope: unknown command 'sttas' (did you mean 'stats'?)", "see 'pipescope help'"),
    (["hlep"], 2, "pipescope: unknown command 'hlep' (did you mean 'help'?)", "see 'pipescope help'"),
    (["xyzzy"], 2, "pipescope: unknown command 'xyzzy'", "see 'pipescope help'"),
    (["help", "runn"], 2, "pipescope: no command 'runn' (did you mean 'run'?)", "see 'pipescope help'"),
    (["run", "feret"], 2, "pipescope: unknown workload 'feret' (did you mean 'ferret'?)", "see 'pipescope help run'"),
    (["run", "quux"], 2, "pipescope: unknown workload 'quux' (see `pipescope list`)", "see 'pipescope help run'"),
    (["run", "ferret", "--policy", "pipr"], 2, "pipescope: unknown policy 'pipr' (did you mean 'piper'?)",
     "see 'pipescope help run'"),
    (["run", "ferret", "--policy", "gramsp"], 2, "pipescope: unknown policy 'gramsp' (did you mean 'gramps'?)",
     "see 'pipescope help run'"),
    (["scale", "ferret", "--policies", "piper,danbbi", "--workers", "1"], 2,
     "pipescope: unknown policy 'danbbi' (did you mean 'danbi'?)", "see 'pipescope help scale'"),
    (["run"], 2, "pipescope: run: which workload? (see `pipescope list`)", "see 'pipescope help run'"),
    (["run", "ferret", "--workers", "x"], 2, "pipescope: --workers x: expected a number of workers between 1 and 1024",
     "see 'pipescope help run'"),
    (["run", "ferret", "--size", "huge"], 2, "pipescope: --size huge: expected tiny, small or large",
     "see 'pipescope help run'"),
    (["stats"], 2, "pipescope: stats: which trace?", "see 'pipescope help stats'"),
    (["stats", missing, "--run"], 2, "pipescope: stats: --run needs a run's name", "see 'pipescope help stats'"),
    (["stats", missing, "--bogus"], 2, "pipescope: stats: unknown option '--bogus'", "see 'pipescope help stats'"),
    (["compare"], 2, "pipescope: compare: which traces?", "see 'pipescope help compare'"),
    (["export-json", missing], 2, "pipescope: export-json: give the trace and the JSON file to write",
     "see 'pipescope help export-json'"),
    (["dedup-restore"], 2, "pipescope: dedup-restore: give the archive and the file to restore it into",
     "see 'pipescope help dedup-restore'"),
    (["perfetto"], 2, "pipescope: perfetto: which trace?", "see 'pipescope help perfetto'"),
    (["validate"], 2, "pipescope: validate: give exactly one trace file", "see 'pipescope help validate'"),
    (["lesson"], 2, "pipescope: lesson: which lesson? (see `pipescope lesson --list`)", "see 'pipescope help lesson'"),
    (["calibrate", "--repetitions", "x"], 2, None, "see 'pipescope help calibrate'"),
    (["list", "--bogus"], 2, "pipescope: list: unexpected argument '--bogus' (only --json)", "see 'pipescope help list'"),
    # A file that cannot be read: one line with the OS reason, the same for every reader.
    (["stats", missing], 1, f"pipescope: cannot open {missing}: no such file or directory", None),
    (["validate", missing], 1, f"pipescope: cannot open {missing}: no such file or directory", None),
    (["perfetto", missing, "--no-browser"], 1, f"pipescope: cannot open {missing}: no such file or directory", None),
    (["run", "pipe-fib", "--size", "tiny", "-o", work], 2, f"pipescope: cannot write {work}: is a directory", None),
]
for args, rc, first, second in cases:
    p = pipescope(*args)
    lines = p.stderr.splitlines()
    if p.returncode != rc or not 1 <= len(lines) <= 2:
        fail(f"pipescope {' '.join(args)}: exit {p.returncode} (expected {rc}), {len(lines)} lines:\n{p.stderr}")
    if first is not None and lines[0] != first:
        fail(f"pipescope {' '.join(args)}: first line {lines[0]!r}, expected {first!r}")
    if not lines[0].startswith("pipescope: "):
        fail(f"pipescope {' '.join(args)}: {lines[0]!r} does not say who speaks")
    if (lines[1] if len(lines) > 1 else None) != second:
        fail(f"pipescope {' '.join(args)}: second line {lines[1:]}, expected {second!r}")

p = pipescope("help", "run")
if p.returncode != 0 or not p.stdout.startswith("usage: pipescope run <workload>") or "pipescope stats" in p.stdout:
    fail(f"help run: exit {p.returncode}:\n{p.stdout}")

# The summary's size: a tiny trace in KB.
trace = os.path.join(work, "small.pftrace")
p = pipescope("run", "pipe-fib-256", "--size", "tiny", "--workers", "2", "-o", trace)
size_line = [ln for ln in p.stdout.splitlines() if "bytes per event" in ln]
kib = os.path.getsize(trace) / 1024 if os.path.exists(trace) else -1
if p.returncode != 0 or len(size_line) != 1 or f"{kib:.1f} KiB," not in size_line[0]:
    fail(f"summary of a {kib:.1f} KiB trace: {size_line or p.stdout}")

# perfetto: the timeout it will keep, and the offline hint; stopped once it has said them.
server = subprocess.Popen([cli, "perfetto", trace, "--no-browser", "--port", "19347"], stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True, cwd=work)
try:
    said = [server.stdout.readline() for _ in range(4)]
finally:
    server.terminate()
    server.wait(timeout=30)
if not any("or 300 s without a fetch" in ln for ln in said) or not any(ln.startswith("offline?") for ln in said):
    fail(f"perfetto did not say its timeout and how to work offline:\n{''.join(said)}")

print(f"cli manners: {len(cases)} error paths checked, help, sizes and perfetto's hints too")
