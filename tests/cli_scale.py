#!/usr/bin/env python3
"""`pipescope scale`: a small sweep, its directory and its refusals.

A sweep of ferret (tiny) under piper and piper-earliest at P = 1, 2, 4: the serial time is the median
of three serial runs, all in the manifest; the manifest lists every row
with its trace, each trace exists, each speedup is the serial time over the row's makespan and each
efficiency the speedup over P; the SVG parses as XML with one polyline per policy (three points each)
and the ideal line; the PNG has the PNG signature and the plot's size. pipe-fib under tbb is refused
(its stages are decided on the fly) and listed as such, exit 1. bind-to-stage's idle share is its cores'
idle time, not its threads'. Bad input: an unknown policy, P = 0, --serial-runs 0,
a directory that cannot be created, a DIR that is not a sweep; each exits with a message naming it
and leaves no directory behind.
usage: cli_scale.py PIPESCOPE_CLI WORK_DIR
"""
import json
import os
import shutil
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET

cli, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)


def fail(msg):
    sys.exit(f"cli_scale: {msg}")


def scale(*args):
    return subprocess.run([cli, "scale", *args], capture_output=True, text=True, timeout=600)


def leftovers(name):
    return [f for f in os.listdir(work) if f.startswith(name)]


# A sweep.
out = os.path.join(work, "sweep")
p = scale("ferret", "--policies", "piper,piper-earliest", "--workers", "4,1,2", "--size", "tiny", "--out", out)
if p.returncode != 0:
    fail(f"the sweep exited {p.returncode}: {p.stderr}\n{p.stdout}")
m = json.load(open(os.path.join(out, "scale.json")))
if m["format"] != "pipescope-scale/1" or m["workload"] != "ferret" or m["size"] != "tiny" or m["seed"] != 1:
    fail(f"manifest header: {m}")
serial = m["serial_ns"]
samples = sorted(m["serial_samples_ns"])
if not serial > 0 or len(samples) != 3 or serial != samples[1]:
    fail(f"serial_ns {serial} is not the median of three serial runs {m['serial_samples_ns']}")
rows = [(r["policy"], r["workers"]) for r in m["rows"]]
expected = [(pol, w) for pol in ("piper", "piper-earliest") for w in (1, 2, 4)]
if rows != expected:
    fail(f"rows {rows}, expected {expected}")
if m["refused"] != []:
    fail(f"refused {m['refused']}")
for r in m["rows"]:
    if not os.path.isfile(os.path.join(out, r["trace"])):
        fail(f"missing trace {r['trace']}")
    if not r["makespan_ns"] > 0:
        fail(f"makespan of {r}")
    if abs(r["speedup"] - serial / r["makespan_ns"]) > 1e-9 * r["speedup"]:
        fail(f"speedup {r['speedup']} is not serial / makespan = {serial / r['makespan_ns']}")
    if abs(r["efficiency"] - r["speedup"] / r["workers"]) > 1e-9:
        fail(f"efficiency {r['efficiency']} of {r}")
    if not 0 <= r["idle_share"] <= 1 or r["peak_live"] is None or not r["peak_live"] >= 1:
        fail(f"idle share or peak of {r}")
    if r["workers"] == 1 and r["steals"] != 0:
        fail(f"steals on one worker: {r}")
print(f"rows: {len(rows)}, speedups " + ", ".join(f"{r['speedup']:.2f}" for r in m["rows"]))

svg = ET.parse(os.path.join(out, m["plot"]["svg"])).getroot()
ns = "{http://www.w3.org/2000/svg}"
lines = svg.findall(f"{ns}polyline")
policies = [pl.get("data-policy") for pl in lines if pl.get("class") == "policy"]
if policies != ["piper", "piper-earliest"]:
    fail(f"SVG polylines of {policies}")
for pl in lines:
    if len(pl.get("points").split()) != 3:
        fail(f"polyline of {pl.get('data-policy')}: {pl.get('points')}")
if len([ln for ln in svg.findall(f"{ns}line") if ln.get("class") == "ideal"]) != 1:
    fail("no ideal line in the SVG")
png = open(os.path.join(out, m["plot"]["png"]), "rb").read()
if png[:8] != b"\x89PNG\r\n\x1a\n" or png[12:16] != b"IHDR":
    fail("the PNG has no PNG signature")
width, height = struct.unpack(">II", png[16:24])
if (width, height) != (int(svg.get("width")), int(svg.get("height"))) or (width, height) != (800, 500):
    fail(f"PNG {width}x{height}, SVG {svg.get('width')}x{svg.get('height')}")
if leftovers("sweep.") != []:
    fail(f"temporary directories left: {leftovers('sweep.')}")

# Run again into the same DIR: a sweep is replaced by the new one.
p = scale("ferret", "--policies", "piper", "--workers", "2", "--size", "tiny", "--out", out)
if p.returncode != 0 or [r["workers"] for r in json.load(open(os.path.join(out, "scale.json")))["rows"]] != [2]:
    fail(f"replacing a sweep: exit {p.returncode}: {p.stderr}")

# A policy the workload refuses is listed, not skipped: exit 1, the other policy's rows written.
refused = os.path.join(work, "refused")
p = scale("pipe-fib", "--policies", "piper,tbb", "--workers", "1,2", "--size", "tiny", "--out", refused)
m = json.load(open(os.path.join(refused, "scale.json")))
if p.returncode != 1 or [r["policy"] for r in m["refused"]] != ["tbb"] or len(m["rows"]) != 2:
    fail(f"refusal: exit {p.returncode}, manifest {m['refused']}, {len(m['rows'])} rows")
if "refused: pipe-fib cannot run under tbb" not in p.stdout:
    fail(f"no refusal in the output:\n{p.stdout}")


# bind-to-stage runs 6 threads (one per stage) on P virtual cores: its idle share is the cores' idle
# time, not its threads' (which wait most of the time). Priced from one recording (--costs), the
# serial time is the nodes' work T1 and the cores were busy at least for it, so idle <= 1 - efficiency
# exactly. (Measured, the serial time and the nodes' costs are CPU times taken at different moments:
# on a loaded machine P = 1 once showed 145 % efficiency, which says nothing about idle time.)
bound = os.path.join(work, "bound")
recording = os.path.join(work, "bound-costs.pftrace")
p = subprocess.run([cli, "run", "ferret", "--policy", "bind-to-stage", "--size", "tiny", "--param", "c=1", "--workers",
                    "2", "--virtual", "-o", recording], capture_output=True, text=True, timeout=600)
if p.returncode != 0:
    fail(f"recording bind-to-stage's costs: exit {p.returncode}: {p.stderr}")
p = scale("ferret", "--policies", "bind-to-stage", "--workers", "1,2", "--size", "tiny", "--param", "c=1", "--costs",
          recording, "--out", bound)
m = json.load(open(os.path.join(bound, "scale.json")))
if p.returncode != 0 or len(m["rows"]) != 2:
    fail(f"bind-to-stage sweep: exit {p.returncode}: {p.stderr}")
for r in m["rows"]:
    if not 0 <= r["idle_share"] <= 1 - r["efficiency"] + 1e-6:
        fail(f"bind-to-stage idle share {r['idle_share']:.4f} with efficiency {r['efficiency']:.4f} at P = {r['workers']}")


# A stage graph's serial time comes from graph-serial; its policies run on virtual workers too.
graph = os.path.join(work, "graph")
p = scale("ray-1", "--policies", "gramps,danbi", "--workers", "1,4", "--size", "tiny", "--out", graph)
m = json.load(open(os.path.join(graph, "scale.json")))
if not m["serial_ns"] > 0 or len(m["rows"]) != 4 or m["refused"] or p.returncode != 0:
    fail(f"stage graph: exit {p.returncode}, serial {m['serial_ns']}, rows {m['rows']}, refused {m['refused']}")

# Bad input: a message naming what is wrong, no directory.
def bad(args, rc, words, where, existed=False):
    p = scale(*args)
    if p.returncode != rc or words not in p.stderr:
        fail(f"{args}: exit {p.returncode}, stderr {p.stderr!r} (expected {rc} and {words!r})")
    left = leftovers(os.path.basename(where) + ".")
    if left or (os.path.exists(where) and not existed) or (existed and os.listdir(where)):
        fail(f"{args}: left {left or where}")


bad(["ferret", "--policies", "piper,nope", "--workers", "1", "--out", os.path.join(work, "a")], 2,
    "unknown policy 'nope'", os.path.join(work, "a"))
bad(["ferret", "--policies", "piper", "--workers", "1,0", "--out", os.path.join(work, "b")], 2, "--workers 0",
    os.path.join(work, "b"))
bad(["ferret", "--policies", "piper", "--workers", "1", "--serial-runs", "0", "--out", os.path.join(work, "d")], 2,
    "--serial-runs 0", os.path.join(work, "d"))
bad(["ferret", "--policies", "piper", "--workers", "1", "--size", "tiny", "--out", os.path.join(work, "no", "such", "c")],
    3, "cannot create the sweep's directory", os.path.join(work, "no"))
os.makedirs(os.path.join(work, "plain"))
bad(["ferret", "--policies", "piper", "--workers", "1", "--size", "tiny", "--out", os.path.join(work, "plain")], 3,
    "is not a sweep", os.path.join(work, "plain"), existed=True)
print("scale command: sweep, replacement, refusal and bad input checked")
