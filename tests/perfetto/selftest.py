#!/usr/bin/env python3
"""Self-test of check_trace.py: it must pass sound traces and fail broken ones, naming the problem.

    selftest.py [--tools-dir DIR] [--keep DIR]

Builds small traces with the official schema (perfetto==0.59.1's perfetto_trace_pb2), laid out like
pipescope's (a process track per run with a "run summary" instant, a thread track and a sequence per
worker, interned names, flows, a counter track), plus deliberately broken variants, and runs
check_trace.py on each. Exit status 0 if every verdict is as expected.
"""

import argparse
import os
import re
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check_trace  # noqa: E402

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--tools-dir", default=check_trace.default_tools_dir())
ap.add_argument("--keep", help="write the traces into this directory and keep them")
ARGS = ap.parse_args()
pb2, _ = check_trace.ensure_schema(ARGS.tools_dir)
check_trace.find_web_dist(ARGS.tools_dir)      # exits 2 with "run scripts/install-deps.sh" if missing
if not check_trace.shutil.which("node"):
    check_trace.tooling_error("node not found on PATH")
TE = pb2.TrackEvent


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def serialize(packets):
    """A trace from TracePacket messages or raw serialized TracePacket bytes."""
    out = bytearray()
    for p in packets:
        b = p if isinstance(p, (bytes, bytearray)) else p.SerializeToString()
        out += b"\x0a" + varint(len(b)) + b
    return bytes(out)


def with_raw_track_event_bytes(packet, extra):
    """`packet` serialized with `extra` raw bytes appended inside its track_event (field 11)."""
    te = packet.track_event.SerializeToString() + extra
    rest = pb2.TracePacket()
    rest.CopyFrom(packet)
    rest.ClearField("track_event")
    return rest.SerializeToString() + b"\x5a" + varint(len(te)) + te


class Builder:
    """A pipescope-like trace; remembers what it wrote, as the runtime's run summary does."""

    def __init__(self):
        self.packets = []
        self.counts = dict.fromkeys(check_trace.SUMMARY_KEYS, 0)
        self.names = {}

    def packet(self, **fields):
        p = pb2.TracePacket(**fields)
        self.packets.append(p)
        return p

    def descriptors(self, run, workers):
        proc = 100 + run
        self.packet(track_descriptor=pb2.TrackDescriptor(
            uuid=proc, process=pb2.ProcessDescriptor(pid=1000 + run, process_name=f"run {run}")))
        for w in range(workers):
            self.packet(track_descriptor=pb2.TrackDescriptor(
                uuid=self.worker_track(run, w), parent_uuid=proc,
                thread=pb2.ThreadDescriptor(pid=1000 + run, tid=1000 + run * 10 + w + 1, thread_name=f"worker {w}")))
        self.packet(track_descriptor=pb2.TrackDescriptor(
            uuid=self.counter_track(run), parent_uuid=proc, name="live iterations", counter=pb2.CounterDescriptor()))

    @staticmethod
    def worker_track(run, w):
        return 200 + run * 10 + w

    @staticmethod
    def counter_track(run):
        return 300 + run

    def start_sequence(self, seq, ts, names):
        """First packet of a sequence: clears incremental state and interns the event names."""
        self.names[seq] = {n: i + 1 for i, n in enumerate(names)}
        self.packet(timestamp=ts, trusted_packet_sequence_id=seq, sequence_flags=1,
                    interned_data=pb2.InternedData(
                        event_names=[pb2.EventName(iid=i, name=n) for n, i in self.names[seq].items()]))

    def event(self, seq, ts, kind, track, name=None, flows=(), terminating=(), value=None, annotations=None):
        ev = pb2.TrackEvent(type=kind, track_uuid=track)
        if name is not None:
            ev.name_iid = self.names[seq][name]
        ev.flow_ids.extend(flows)
        ev.terminating_flow_ids.extend(terminating)
        if value is not None:
            ev.counter_value = value
        for k, v in (annotations or {}).items():
            ev.debug_annotations.add(name=k, uint_value=v)
        p = self.packet(timestamp=ts, trusted_packet_sequence_id=seq, sequence_flags=2, track_event=ev)
        key = {TE.TYPE_SLICE_BEGIN: "slices", TE.TYPE_INSTANT: "instants", TE.TYPE_COUNTER: "counter_values"}.get(kind)
        if key:
            self.counts[key] += 1
        return p

    def run(self, run, t0, summary=True, fix_summary=None):
        """One run on two workers: nested and zero-length slices, instants, a steal flow, a flow with
        a step, counter values, and the run summary."""
        self.descriptors(run, 2)
        names = ["stage 0", "stage 1", "idle", "stolen", "steal", "woken", "wake worker 1"]
        s0, s1 = 10 * run + 1, 10 * run + 2
        w0, w1 = self.worker_track(run, 0), self.worker_track(run, 1)
        self.start_sequence(s0, t0, names)
        self.start_sequence(s1, t0, names)
        steal, wake = (run << 32) | 1, (run << 32) | 2
        B, E, I, C = TE.TYPE_SLICE_BEGIN, TE.TYPE_SLICE_END, TE.TYPE_INSTANT, TE.TYPE_COUNTER
        # worker 0: stage 0 [10, 50) containing stage 1 [20, 30) with a "stolen" instant; a zero-length slice
        self.event(s0, t0 + 10, B, w0, "stage 0")
        self.event(s0, t0 + 20, B, w0, "stage 1")
        self.event(s0, t0 + 25, I, w0, "stolen", flows=[steal])
        self.event(s0, t0 + 26, I, w0, "wake worker 1", flows=[wake])
        self.event(s0, t0 + 30, E, w0)
        self.event(s0, t0 + 50, E, w0)
        self.event(s0, t0 + 60, B, w0, "stage 0")
        self.event(s0, t0 + 60, E, w0)
        # worker 1: idle, woken (a flow step), then steals the task
        self.event(s1, t0 + 5, B, w1, "idle")
        self.event(s1, t0 + 27, E, w1)
        self.event(s1, t0 + 27, I, w1, "woken", flows=[wake])
        self.event(s1, t0 + 35, B, w1, "steal", terminating=[steal, wake])
        self.event(s1, t0 + 45, E, w1)
        self.counts["flows"] += 3                      # stolen->steal, wake->woken, woken->steal
        for i, v in enumerate((1, 2, 1)):
            self.event(s0, t0 + 10 + 20 * i, C, self.counter_track(run), value=v)
        if summary:
            values = dict(self.counts)
            values["instants"] += 1                    # the writer counts its "run summary" too
            for k in self.counts:
                self.counts[k] = 0
            if fix_summary:
                fix_summary(values)
            seq = 10 * run + 9
            self.start_sequence(seq, t0 + 100, ["run summary"])
            self.event(seq, t0 + 100, TE.TYPE_INSTANT, 100 + run, "run summary", annotations=values)
            self.counts["instants"] = 0

    def bytes(self):
        return serialize(self.packets)


def pipescope_like(runs=1, **kw):
    b = Builder()
    for r in range(runs):
        b.run(r, 1_000_000 * (r + 1), **kw)
    return b


def unterminated():
    b = pipescope_like()
    b.packets = [p for p in b.packets if not (p.HasField("track_event") and p.timestamp == 1_000_000 + 45)]
    return b.bytes()


def counter_on_thread_track():
    b = pipescope_like()
    for p in b.packets:
        if p.HasField("track_event") and p.track_event.type == TE.TYPE_COUNTER:
            p.track_event.track_uuid = Builder.worker_track(0, 0)
            break
    return b.bytes()


def flow_as_varint():
    """flow_ids (field 47, fixed64) written as a varint: protobuf keeps it as an unknown field."""
    b = pipescope_like(summary=False)
    out = []
    for p in b.packets:
        if p.HasField("track_event") and list(p.track_event.flow_ids) == [1] and p.track_event.type == TE.TYPE_INSTANT:
            p.track_event.ClearField("flow_ids")
            out.append(with_raw_track_event_bytes(p, b"\xf8\x02" + varint(1)))
        else:
            out.append(p)
    return serialize(out)


def flow_packed():
    """flow_ids written packed: protobuf reads it, the trace processor silently drops the flow."""
    b = pipescope_like(summary=False)
    out = []
    for p in b.packets:
        if p.HasField("track_event") and list(p.track_event.flow_ids) == [1] and p.track_event.type == TE.TYPE_INSTANT:
            p.track_event.ClearField("flow_ids")
            out.append(with_raw_track_event_bytes(p, b"\xfa\x02\x08" + (1).to_bytes(8, "little")))
        else:
            out.append(p)
    return serialize(out)


def compressed(inner_extra=b""):
    """Descriptors plainly, everything else in one compressed_packets packet (pipescope may compress)."""
    b = pipescope_like(runs=2)
    plain = [p for p in b.packets if p.HasField("track_descriptor")]
    rest = serialize([p for p in b.packets if not p.HasField("track_descriptor")]) + inner_extra
    return serialize(plain + [pb2.TracePacket(compressed_packets=zlib.compress(rest))])


def needs_state_without_clear():
    """A sequence whose packets need incremental state that was never cleared: skipped by the importer."""
    b = Builder()
    b.descriptors(0, 1)
    b.names[5] = {"stage 0": 1}
    b.packet(timestamp=10, trusted_packet_sequence_id=5, sequence_flags=2,
             interned_data=pb2.InternedData(event_names=[pb2.EventName(iid=1, name="stage 0")]))
    b.event(5, 10, TE.TYPE_SLICE_BEGIN, Builder.worker_track(0, 0), "stage 0")
    b.event(5, 20, TE.TYPE_SLICE_END, Builder.worker_track(0, 0))
    return b.bytes()


def foreign():
    """Not from pipescope: no run summary, names inline, one sequence."""
    b = Builder()
    b.packet(track_descriptor=pb2.TrackDescriptor(uuid=7, name="async"))
    for i in range(5):
        b.packet(timestamp=100 * i + 1, trusted_packet_sequence_id=3,
                 track_event=pb2.TrackEvent(type=TE.TYPE_SLICE_BEGIN, track_uuid=7, name=f"s{i}"))
        b.packet(timestamp=100 * i + 50, trusted_packet_sequence_id=3,
                 track_event=pb2.TrackEvent(type=TE.TYPE_SLICE_END, track_uuid=7))
    return b.bytes()


def summary_off(key, delta):
    def fix(values):
        values[key] += delta
    return pipescope_like(fix_summary=fix).bytes()


# name -> (trace bytes, expected verdict, regexes the output line must match)
CASES = {
    "good": (pipescope_like().bytes(), True,
             [r"^OK .*good\.pftrace: 5 slices, 3 flows, 3 counters, \d+ bytes \(1 run\(s\) summarized\)"]),
    "good-two-runs": (pipescope_like(runs=2).bytes(), True, [r"^OK .*: 10 slices, 6 flows, 6 counters"]),
    "good-compressed": (compressed(), True, [r"^OK .*: 10 slices, 6 flows, 6 counters, \d+ bytes \(2 run"]),
    "foreign": (foreign(), True, [r"^OK .*: 5 slices, 0 flows, 0 counters, \d+ bytes \(no run summary: counts not compared\)"]),
    "unterminated-slice": (unterminated(), False, [r"^FAIL ", r"1 open slice"]),
    "counter-on-thread-track": (counter_on_thread_track(), False,
                                [r"^FAIL ", r"import statistic track_event_tokenizer_errors",
                                 r"counter values: the trace processor imported 2, the file has 3"]),
    "summary-slices-off": (summary_off("slices", 1), False,
                           [r"^FAIL ", r"slices: the runtime recorded 6, trace processor 5",
                            r"SLICE_BEGIN events in the file 5"]),
    "summary-flows-off": (summary_off("flows", -1), False, [r"^FAIL ", r"flows: the runtime recorded 2, trace processor 3"]),
    "summary-counters-off": (summary_off("counter_values", 2), False, [r"^FAIL ", r"counter_values: the runtime recorded 5"]),
    "summary-instants-off": (summary_off("instants", 5), False, [r"^FAIL ", r"instants: the runtime recorded 9"]),
    "flow-id-as-varint": (flow_as_varint(), False, [r"^FAIL ", r"unknown fields \(number, wire type\) \[\(47, 0\)\] in Trace\.packet\[\d+\]\.track_event"]),
    "flow-ids-packed": (flow_packed(), False, [r"^FAIL ", r"flow arrows: the trace processor imported 2, the file has 3"]),
    "unknown-field-in-compressed": (compressed(b"\x0a\x03\xa0\x1f\x01"), False,
                                    [r"^FAIL ", r"unknown fields .* in Trace\.packet\[\d+\]\.compressed_packets/Trace\.packet\[\d+\]"]),
    "needs-incremental-state": (needs_state_without_clear(), False, [r"^FAIL ", r"import statistic tokenizer_skipped_packets"]),
    "truncated": (pipescope_like().bytes()[:-7], False, [r"^FAIL ", r"not a valid Trace"]),
}


def run_checker(paths, extra=()):
    cmd = [sys.executable, os.path.join(HERE, "check_trace.py"), "--tools-dir", ARGS.tools_dir, *extra, *paths]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    return p.returncode, p.stdout


def main():
    failures = []
    with tempfile.TemporaryDirectory(prefix="pipescope-checker-selftest-") as tmp:
        d = ARGS.keep or tmp
        os.makedirs(os.path.join(d, "good-dir"), exist_ok=True)
        os.makedirs(os.path.join(d, "empty-dir"), exist_ok=True)
        paths = {}
        for name, (data, _, _) in CASES.items():
            paths[name] = os.path.join(d, name + ".pftrace")
            with open(paths[name], "wb") as f:
                f.write(data)
        for name, (_, want_ok, patterns) in CASES.items():
            rc, out = run_checker([paths[name]])
            line = out.strip()
            ok = (rc == 0) == want_ok and all(re.search(p, line, re.M) for p in patterns)
            print(f"{'pass' if ok else 'FAILED'}: {name}: expected {'OK' if want_ok else 'FAIL'} -> exit {rc}: {line}")
            if not ok:
                failures.append(name)

        # A directory stands for its *.pftrace files; an empty one is not a pass.
        for name in ("good", "foreign"):
            with open(os.path.join(d, "good-dir", name + ".pftrace"), "wb") as f:
                f.write(CASES[name][0])
        rc, out = run_checker([os.path.join(d, "good-dir")])
        ok = rc == 0 and len(re.findall(r"^OK ", out, re.M)) == 2
        print(f"{'pass' if ok else 'FAILED'}: directory of two good traces -> exit {rc}")
        failures += [] if ok else ["good-dir"]
        rc, out = run_checker([os.path.join(d, "empty-dir")])
        ok = rc == 1 and "no trace to check" in out
        print(f"{'pass' if ok else 'FAILED'}: empty directory -> exit {rc}: {out.strip()}")
        failures += [] if ok else ["empty-dir"]
        rc, out = run_checker([paths["good"], paths["unterminated-slice"]])
        ok = rc == 1 and out.count("\nFAIL ") + out.startswith("FAIL ") == 1 and "OK " in out
        print(f"{'pass' if ok else 'FAILED'}: one good and one bad trace -> exit {rc}")
        failures += [] if ok else ["mixed"]

        # Missing tooling is an error that says what to do, not a pass.
        rc, out = run_checker([paths["good"]], ["--tools-dir", os.path.join(d, "no-tools")])
        ok = rc == 2 and "run scripts/install-deps.sh" in out
        print(f"{'pass' if ok else 'FAILED'}: missing tooling -> exit {rc}: {out.strip()}")
        failures += [] if ok else ["missing-tooling"]

    if failures:
        print(f"selftest: FAILED: {', '.join(failures)}")
        return 1
    print(f"selftest: OK ({len(CASES) + 4} cases)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
