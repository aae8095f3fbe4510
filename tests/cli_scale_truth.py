#!/usr/bin/env python3
"""`pipescope scale` and `stats` on virtual runs: every speedup in one currency (docs/virtual.md).

usage: cli_scale_truth.py PIPESCOPE_CLI WORK_DIR CHECK, CHECK one of:
  serial  the serial time of a sweep counts the CPU of the whole serial elision: x264 (size small)
          forks its B-frames as tasks onto the pool worker, so the calling thread's CPU time alone
          (the old serial time) is about a third of the work. The sweep's speedup at P = 4 must
          agree with the virtual runs' own T1 / T4 (the P = 1 row's makespan over the P = 4 row's)
          within a factor of 2 (the old serial time was 3x off); both are ratios of CPU-time
          costs, so this is no timing test. dedup's fan-out form (tasks too) at P = 1: speedup
          within a factor of 2 of 1.
  params  a policy parameter can be swept: `scale mergesort --policies danbi,gramps --param
          config=ws` runs (the serial elision, graph-serial, gets only the program's parameters;
          gramps does not get DANBI's config) and prints its rows; a parameter no swept policy
          takes is a usage error. `run --costs` takes a recording made under another DANBI config
          (a scheduler parameter) and refuses one of another packet size (a program parameter),
          naming it.
  stats   `stats --json` of a virtual trace (ferret tiny, 8 virtual workers, K = 4) and of one priced
          from it (`--costs`, 16 workers): the observed speedup is T1 / makespan (not the serial
          reference's wall time over the virtual makespan), never above the parallelism T1/Tinf or
          P; a verdict saying the throttle "would limit with more workers" only when the throttled
          parallelism is at least P, "already limits" only when it is below.
  costs   `scale --costs RECORDING`: a sweep of ferret (tiny) under piper and piper-earliest at
          P = 1, 2, 4, 16, every point priced from one virtual recording, run twice: the two
          scale.json have the same serial time (the recording's T1) and the same rows
          (makespans, steals, peaks); a recording of another seed is refused (exit 3, no DIR).
"""
import json
import os
import shutil
import subprocess
import sys

cli, work, check = sys.argv[1], sys.argv[2], sys.argv[3]
work = os.path.join(work, check)
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def fail(msg):
    sys.exit(f"cli_scale_truth {check}: {msg}")


def run(*args, expect=0):
    p = subprocess.run([cli, *args], capture_output=True, text=True, timeout=600)
    if expect is not None and p.returncode != expect:
        fail(f"{' '.join(args)}: exit {p.returncode} (expected {expect}): {p.stderr}\n{p.stdout}")
    return p


def sweep(name, *args):
    out = os.path.join(work, name)
    run("scale", *args, "--out", out)
    return json.load(open(os.path.join(out, "scale.json"))), out


def rows_by_workers(m, policy):
    return {r["workers"]: r for r in m["rows"] if r["policy"] == policy}


# The serial time and the virtual runs' costs are CPU times measured at different moments: on a
# machine at load 10 (2 cores) single measurements of x264 and dedup (small) differed by up to 35 %,
# and under ThreadSanitizer dedup's fan-out at P = 1 came out at 1.56 (its serial elision's pool
# worker spins between the forks, instrumented too). The bug this guards against is a factor of 3,
# so a factor of 2 still catches it.
def within(a, b, factor=2.0):
    return 1 / factor <= a / b <= factor


if check == "serial":
    m, _ = sweep("x264", "x264", "--policies", "piper", "--workers", "1,4", "--size", "small")
    rows = rows_by_workers(m, "piper")
    self_relative = rows[1]["makespan_ns"] / rows[4]["makespan_ns"]   # the virtual runs' T1 / T4
    if not within(rows[4]["speedup"], self_relative):
        fail(f"x264 at P = 4: scale's speedup {rows[4]['speedup']:.2f}, the virtual runs' T1/T4 "
             f"{self_relative:.2f} (serial {m['serial_ns'] / 1e6:.3f} ms, T1 {rows[1]['makespan_ns'] / 1e6:.3f} ms)")
    m, _ = sweep("dedup", "dedup", "--policies", "piper", "--workers", "1", "--size", "small", "--param", "form=fanout")
    one = rows_by_workers(m, "piper")[1]
    if not within(one["speedup"], 1.0):
        fail(f"dedup form=fanout at P = 1: speedup {one['speedup']:.2f}, expected about 1 "
             f"(serial {m['serial_ns'] / 1e6:.3f} ms, makespan {one['makespan_ns'] / 1e6:.3f} ms)")
    print(f"x264 speedup at P = 4 {rows[4]['speedup']:.2f} against T1/T4 {self_relative:.2f}; "
          f"dedup fan-out at P = 1 {one['speedup']:.2f}")
elif check == "params":
    p = run("scale", "mergesort", "--policies", "danbi,gramps", "--param", "config=ws", "--workers", "1,2",
            "--size", "tiny", "--out", os.path.join(work, "config"))
    m = json.load(open(os.path.join(work, "config", "scale.json")))
    if [(r["policy"], r["workers"]) for r in m["rows"]] != [("danbi", 1), ("danbi", 2), ("gramps", 1), ("gramps", 2)]:
        fail(f"the config sweep's rows: {m['rows']}")
    if "danbi on virtual workers" not in p.stdout or m["params"] != ["config=ws"]:
        fail(f"the config sweep: params {m['params']}, output\n{p.stdout}")
    p = run("scale", "mergesort", "--policies", "gramps", "--param", "config=ws", "--workers", "1", "--size", "tiny",
            "--out", os.path.join(work, "nobody"), expect=2)
    if "--param config=ws: a scheduler parameter none of the policies swept takes" not in p.stderr:
        fail(f"config for gramps alone: {p.stderr}")

    # On one worker, qes+pss resumes mergesort's serial stages as ws does (a serial stage's nodes are
    # its resumptions, numbered in the order they happen: other configs at other P differ in them) —
    # with queues that hold a few packets. DANBI's own rule gives one packet per queue at P = 1
    # (docs/virtual.md, "Queue capacities"), where the two configs interleave source, pair and sink
    # differently; the capacity is the program's parameter, the same in every run here.
    costs = os.path.join(work, "qes+pss.pftrace")
    run("run", "mergesort", "--policy", "danbi", "--param", "config=qes+pss", "--param", "capacity=16", "--workers", "1",
        "--virtual", "--size", "tiny", "--trace-detail", "nodes", "-o", costs)
    priced = os.path.join(work, "priced.pftrace")
    run("run", "mergesort", "--policy", "danbi", "--param", "config=ws", "--param", "capacity=16", "--workers", "1",
        "--virtual", "--size", "tiny", "--costs", costs, "-o", priced)
    p = run("run", "mergesort", "--policy", "danbi", "--param", "capacity=16", "--param", "packet=2048", "--workers", "1",
            "--virtual", "--size", "tiny", "--costs", costs, expect=3)
    if ("recorded mergesort (size tiny, seed 1, capacity=16), but this run is mergesort (size tiny, seed 1, "
            "capacity=16, packet=2048)") not in p.stderr:
        fail(f"another packet size: {p.stderr}")
    print("danbi config sweep ran; --costs across configs taken, across packet sizes refused")
elif check == "stats":
    measured = os.path.join(work, "ferret-8.pftrace")
    run("run", "ferret", "--size", "tiny", "--workers", "8", "--virtual", "--param", "K=4", "-o", measured)
    priced = os.path.join(work, "ferret-16.pftrace")
    run("run", "ferret", "--size", "tiny", "--workers", "16", "--virtual", "--param", "K=4", "--costs", measured, "-o", priced)
    for trace in (measured, priced):
        r = json.loads(run("stats", trace, "--json").stdout)["runs"][0]
        d, P = r["dag"], r["run"]["workers"]
        if d["observed_from_reference"] or abs(d["observed_speedup"] - d["work_ns"] / d["makespan_ns"]) > 1e-6:
            fail(f"{trace}: observed speedup {d['observed_speedup']:.2f} is not T1 / makespan "
                 f"({d['work_ns'] / d['makespan_ns']:.2f}); from the reference: {d['observed_from_reference']}")
        if d["observed_speedup"] > d["parallelism"] * (1 + 1e-9) or d["observed_speedup"] > P * (1 + 1e-9):
            fail(f"{trace}: observed speedup {d['observed_speedup']:.2f} above the parallelism {d['parallelism']:.2f} "
                 f"or P = {P}")
        for v in r["verdicts"]:
            if "would limit" in v["text"] and d["parallelism"] < P or "already limits" in v["text"] and d["parallelism"] >= P:
                fail(f"{trace}: the throttle hint '{v['text']}' with parallelism {d['parallelism']:.2f} at P = {P}")
        print(f"{os.path.basename(trace)}: observed {d['observed_speedup']:.2f}, parallelism {d['parallelism']:.2f}, P {P}")
elif check == "costs":
    recording = os.path.join(work, "ferret-2.pftrace")
    run("run", "ferret", "--size", "tiny", "--workers", "2", "--virtual", "-o", recording)
    sweeps = []
    for n in (1, 2):
        m, out = sweep(f"priced-{n}", "ferret", "--policies", "piper,piper-earliest", "--workers", "1,2,4,16",
                       "--size", "tiny", "--costs", recording)
        sweeps.append(m)
    a, b = sweeps
    if len(a["rows"]) != 8 or a["serial_ns"] != b["serial_ns"]:
        fail(f"{len(a['rows'])} rows, serial times {a['serial_ns']} and {b['serial_ns']}")
    strip = lambda rows: [{k: v for k, v in r.items() if k != "trace"} for r in rows]
    if strip(a["rows"]) != strip(b["rows"]):
        fail(f"two sweeps priced from one recording differ:\n{a['rows']}\n{b['rows']}")
    one = rows_by_workers(a, "piper")[1]
    print(f"serial {a['serial_ns'] / 1e6:.3f} ms (the recording's T1), makespans "
          + ", ".join(f"{r['makespan_ns'] / 1e6:.3f}" for r in a["rows"]) + " ms, twice")
    where = os.path.join(work, "other-seed")
    p = run("scale", "ferret", "--policies", "piper", "--workers", "1", "--size", "tiny", "--seed", "2", "--costs",
            recording, "--out", where, expect=3)
    if "but this run is ferret (size tiny, seed 2)" not in p.stderr or os.path.exists(where):
        fail(f"a recording of another seed: {p.stderr}")
else:
    fail(f"unknown check {check}")
print(f"scale truth: {check} checked")
