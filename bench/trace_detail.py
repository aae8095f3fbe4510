#!/usr/bin/env python3
"""Tracing fine-grained runs (issue 18's targets): traced vs untraced time, dropped events, file size,
bytes per event and counter values per queue operation, as `pipescope run` reports them.

    bench/trace_detail.py [--cli build-bench/cli/pipescope] [--runs 5] [--quick]

For every configuration it runs `pipescope run ... --no-trace` and `pipescope run ... -o FILE` (the
default options: --trace-detail auto) alternately, RUNS times each, so that the machine's drift hits
both alike, and prints medians with their spread (min-max) and the load average. The time is the
CLI's own measurement of the measured run (the serial reference is not in it); the traced time
includes recording and the writer thread streaming the file.

Stage graphs also get counter values per queue operation (issue 18: <= 0.5): the counter values the
default trace holds over the queue operations (reserves and commits, granted or refused) of the
same configuration, counted by `pipescope stats --json` in a third run recorded with
`--trace-detail nodes`, the level that records every operation. And since the trace model derives
a graph's footprint from the queue counters (docs/tracing.md, "Counters"), `fp peak` compares the
derived peak (`pipescope stats` of the default trace) with the runtime's exact one (`pipescope run`):
the largest difference over the runs, in packets.
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

PIPELINES = [  # (workload, size, policy)
    ("pipe-fib", "small", "piper"),
    ("pipe-fib-256", "large", "piper"),
    ("ferret", "large", "piper"),
    ("dedup", "large", "piper"),
    ("x264", "large", "piper"),
]
GRAPHS = [("ray-1", "small", "gramps"), ("fm-radio", "small", "gramps")]


def run_cli(cli, args):
    p = subprocess.run([cli, "run"] + args, capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"trace_detail.py: pipescope run {' '.join(args)} failed ({p.returncode}):\n{p.stderr}")
    out = p.stdout
    m = re.search(r"^\s+time\s+([0-9.]+) s", out, re.M)
    if not m:
        sys.exit(f"trace_detail.py: no time in the output of pipescope run {' '.join(args)}:\n{out}")
    r = {"time": float(m.group(1)), "dropped": 0}
    # "trace  F: 1 run, 84 slices, 0 flows, 14 counter values; 2.9 KiB, 16.98 bytes per event"
    if (m := re.search(r"trace\s+\S+: \d+ runs?, ([0-9,]+) slices, ([0-9,]+) flows, ([0-9,]+) counter values; "
                       r"([0-9.]+) (B|KiB|MiB|GiB), ([0-9.]+) bytes per event", out)):
        unit = {"B": 1e-6, "KiB": 1024 / 1e6, "MiB": 1024**2 / 1e6, "GiB": 1024**3 / 1e6}[m.group(5)]
        r.update(slices=int(m.group(1).replace(",", "")), counters=int(m.group(3).replace(",", "")),
                 mb=float(m.group(4)) * unit, bpe=float(m.group(6)))
    if (m := re.search(r"WARNING\s+(\d+) events were dropped", out)):
        r["dropped"] = int(m.group(1))
    if (m := re.search(r"folded runs hold (\d+) nodes", out)):
        r["folded_nodes"] = int(m.group(1))
    if (m := re.search(r"graph\s+(\d+) instances, (\d+) resumptions", out)):
        r["instances"] = int(m.group(1)) + int(m.group(2))
    if (m := re.search(r"peak footprint (\d+) packets", out)):
        r["peak_packets"] = int(m.group(1))
    return r


def graph_report(cli, path):
    """The analysis' graph report of the trace's first run (`pipescope stats --json`)."""
    p = subprocess.run([cli, "stats", "--json", path], capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"trace_detail.py: pipescope stats {path} failed ({p.returncode}):\n{p.stderr}")
    return json.loads(p.stdout)["runs"][0]["graph"]


def queue_operations(cli, args, path):
    """Reserves and commits of a run recorded with --trace-detail nodes (every operation is an instant)."""
    t = run_cli(cli, args + ["-o", path, "--trace-detail", "nodes"])
    if t["dropped"]:
        sys.exit(f"trace_detail.py: the nodes trace of {' '.join(args)} dropped {t['dropped']} events: its operations are incomplete")
    return graph_report(cli, path)["queue_operations"]


def med(xs):
    return statistics.median(xs) if xs else float("nan")


def spread(xs):
    return f"{min(xs):.3f}-{max(xs):.3f}" if xs else "-"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cli", default="build-bench/cli/pipescope")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="size small everywhere, 3 runs")
    ap.add_argument("--workers", default="1,2")
    ap.add_argument("--only", default="", help="comma-separated workloads to run (default: all)")
    a = ap.parse_args()
    runs = 3 if a.quick else a.runs
    tmp = tempfile.mkdtemp(prefix="pipescope-trace-detail-")
    print(f"# tracing fine-grained runs: traced (default options) vs untraced, medians of {runs} interleaved runs")
    print(f"# load average at start: {os.getloadavg()[0]:.2f}; cli {a.cli}")
    print(f"{'workload':14} {'size':5} {'policy':7} {'P':>2} {'untraced s':>10} {'traced s':>10} {'ratio':>6} "
          f"{'ratio spread':>13} {'dropped':>8} {'MB':>6} {'B/event':>7} {'slices':>8} {'counters':>9} {'ctr/inst':>8} "
          f"{'ctr/op':>6} {'ctr/op spread':>13} {'fp peak':>7}")
    for (workload, size, policy) in PIPELINES + GRAPHS:
        if a.only and workload not in a.only.split(","):
            continue
        if a.quick:
            size = "small" if size == "large" else size
        for P in [int(x) for x in a.workers.split(",")]:
            base = [workload, "--size", size, "--policy", policy, "--workers", str(P)]
            off, on, ratios, per_op, fp_diff = [], [], [], [], []
            for _ in range(runs):
                u = run_cli(a.cli, base + ["--no-trace"])
                t = run_cli(a.cli, base + ["-o", os.path.join(tmp, "t.pftrace")])
                off.append(u["time"])
                on.append(t)
                ratios.append(t["time"] / u["time"])
                if (workload, size, policy) in GRAPHS:
                    derived = graph_report(a.cli, os.path.join(tmp, "t.pftrace"))["footprint"]["peak_packets"]
                    fp_diff.append(derived - t["peak_packets"])
                    per_op.append(t["counters"] / queue_operations(a.cli, base, os.path.join(tmp, "nodes.pftrace")))
            last = on[-1]
            per_inst = (f"{last['counters'] / last['instances']:.2f}" if last.get("instances") else "-")
            op_med = f"{med(per_op):.3f}" if per_op else "-"
            fp = f"{max(fp_diff, key=abs):+d}" if fp_diff else "-"
            print(f"{workload:14} {size:5} {policy:7} {P:>2} {med(off):10.4f} {med([t['time'] for t in on]):10.4f} "
                  f"{med(ratios):6.3f} {spread(ratios):>13} {max(t['dropped'] for t in on):>8} {med([t['mb'] for t in on]):6.1f} "
                  f"{med([t['bpe'] for t in on]):7.2f} {last['slices']:>8} {last['counters']:>9} {per_inst:>8} "
                  f"{op_med:>6} {spread(per_op):>13} {fp:>7}", flush=True)
    print(f"# load average at end: {os.getloadavg()[0]:.2f}")
    print("# ratio = traced / untraced time of the same run (median of the per-pair ratios); dropped = the most any traced")
    print("# run lost; B/event counts a folded run as the events it replaces; ctr/inst = counter values per stage instance;")
    print("# ctr/op = counter values of the default trace per queue operation (reserve or commit; counted in a nodes trace);")
    print("# fp peak = the derived footprint peak minus the exact one, in packets (the largest difference of the runs)")


if __name__ == "__main__":
    main()
