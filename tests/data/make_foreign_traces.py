#!/usr/bin/env python3
"""Writes the foreign TrackEvent traces the trace-model tests read (tests/test_trace_model.cpp):
traces written with Perfetto's own Python TraceProtoBuilder and generated protobuf classes, not with
pipescope's writer. Also writes foreign_expected.json: what each trace holds (per track: slices with
their nesting depth, instants, counter values; flows by endpoint names), which the test compares
with the model.

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install perfetto==0.59.1 "protobuf>=6.31.1"
    /tmp/venv/bin/python tests/data/make_foreign_traces.py tests/data

Deterministic: the same inputs give the same bytes.
"""
import json
import os
import sys
import zlib

from perfetto.trace_builder.proto_builder import TraceProtoBuilder
from perfetto.protos.perfetto.trace.perfetto_trace_pb2 import Trace, TracePacket, TrackEvent

BEGIN, END, INSTANT, COUNTER = (TrackEvent.TYPE_SLICE_BEGIN, TrackEvent.TYPE_SLICE_END,
                                TrackEvent.TYPE_INSTANT, TrackEvent.TYPE_COUNTER)
CLEARED, NEEDS = TracePacket.SEQ_INCREMENTAL_STATE_CLEARED, TracePacket.SEQ_NEEDS_INCREMENTAL_STATE


def process(b, uuid, pid, name):
    p = b.add_packet()
    p.track_descriptor.uuid = uuid
    p.track_descriptor.process.pid = pid
    p.track_descriptor.process.process_name = name


def thread(b, uuid, pid, tid, name):
    p = b.add_packet()
    p.track_descriptor.uuid = uuid
    p.track_descriptor.thread.pid = pid
    p.track_descriptor.thread.tid = tid
    p.track_descriptor.thread.thread_name = name


def counter_track(b, uuid, parent, name):
    p = b.add_packet()
    p.track_descriptor.uuid = uuid
    p.track_descriptor.parent_uuid = parent
    p.track_descriptor.name = name
    p.track_descriptor.counter.SetInParent()


def event(b, ts, seq, type_, track=None, name=None, flags=0, **kw):
    p = b.add_packet()
    p.timestamp = ts
    p.trusted_packet_sequence_id = seq
    if flags:
        p.sequence_flags = flags
    e = p.track_event
    e.type = type_
    if track is not None:
        e.track_uuid = track
    if name is not None:
        e.name = name
    for f in kw.get('flows', []):
        e.flow_ids.append(f)
    for f in kw.get('terminating', []):
        e.terminating_flow_ids.append(f)
    for c in kw.get('categories', []):
        e.categories.append(c)
    if 'counter' in kw:
        e.counter_value = kw['counter']
    if 'double_counter' in kw:
        e.double_counter_value = kw['double_counter']
    for k, v in kw.get('args', {}).items():
        a = e.debug_annotations.add()
        a.name = k
        if isinstance(v, bool):
            a.bool_value = v
        elif isinstance(v, int):
            a.int_value = v
        elif isinstance(v, float):
            a.double_value = v
        else:
            a.string_value = v
    return p


def nested_trace():
    """Nested slices on two threads, instants, a counter with int and double values, flows."""
    b = TraceProtoBuilder()
    process(b, 1, 4242, "foreign app")
    thread(b, 10, 4242, 5000, "main")
    thread(b, 11, 4242, 5001, "helper")
    counter_track(b, 20, 1, "queue depth")
    event(b, 1000, 1, BEGIN, 10, "outer", categories=["app"], args={"n": 3, "label": "x", "ratio": 0.5, "ok": True})
    event(b, 1100, 1, BEGIN, 10, "middle")
    event(b, 1200, 1, BEGIN, 10, "inner", flows=[7])
    event(b, 1300, 1, END, 10)
    event(b, 1350, 1, INSTANT, 10, "mark")
    event(b, 1400, 1, END, 10)
    event(b, 1900, 1, END, 10)
    event(b, 1250, 2, BEGIN, 11, "work", terminating=[7])
    event(b, 1600, 2, BEGIN, 11, "sub", flows=[8])
    event(b, 1700, 2, END, 11)
    event(b, 1800, 2, END, 11)
    event(b, 2000, 1, BEGIN, 10, "after", terminating=[8])
    event(b, 2100, 1, END, 10)
    event(b, 1000, 3, COUNTER, 20, counter=1)
    event(b, 1500, 3, COUNTER, 20, counter=4)
    event(b, 2000, 3, COUNTER, 20, double_counter=2.5)
    return b.serialize()


def interned_trace():
    """Two sequences with interned names, packet defaults instead of track_uuid, a state reset."""
    b = TraceProtoBuilder()
    thread(b, 30, 7, 70, "seq one")
    thread(b, 31, 7, 71, "seq two")
    for seq, track, names in ((1, 30, ["alpha", "beta"]), (2, 31, ["gamma", "delta"])):
        p = event(b, 100 * seq, seq, BEGIN, None, None, CLEARED | NEEDS)
        p.trace_packet_defaults.track_event_defaults.track_uuid = track
        for iid, n in enumerate(names, 1):
            en = p.interned_data.event_names.add()
            en.iid, en.name = iid, n
        cat = p.interned_data.event_categories.add()
        cat.iid, cat.name = 1, "cat%d" % seq
        an = p.interned_data.debug_annotation_names.add()
        an.iid, an.name = 1, "k"
        p.track_event.name_iid = 1
        p.track_event.category_iids.append(1)
        a = p.track_event.debug_annotations.add()
        a.name_iid, a.uint_value = 1, seq
        p = event(b, 100 * seq + 10, seq, BEGIN, None, None, NEEDS)
        p.track_event.name_iid = 2
        event(b, 100 * seq + 20, seq, END, None, None, NEEDS)
        event(b, 100 * seq + 30, seq, END, None, None, NEEDS)
    # Sequence 1 clears its state and reuses iid 1 for another name (defaults are gone too).
    p = event(b, 400, 1, INSTANT, 30, None, CLEARED | NEEDS)
    en = p.interned_data.event_names.add()
    en.iid, en.name = 1, "after reset"
    p.track_event.name_iid = 1
    return b.serialize()


def compressed_trace():
    """Descriptors inline, then the events in two compressed_packets (zlib), as the SDK can write."""
    inner = TraceProtoBuilder()
    for i in range(40):
        event(inner, 1000 + 100 * i, 5, BEGIN, 40, "iteration %d" % (i % 4), args={"i": i})
        event(inner, 1000 + 100 * i + 50, 5, INSTANT, 40, "tick", flows=[100 + i] if i < 39 else [])
        if i > 0:
            event(inner, 1000 + 100 * i + 10, 5, INSTANT, 41, "seen", terminating=[100 + i - 1])
        event(inner, 1000 + 100 * i + 90, 5, END, 40)
    packets = list(inner.trace.packet)
    b = TraceProtoBuilder()
    thread(b, 40, 9, 90, "producer")
    thread(b, 41, 9, 91, "consumer")
    half = len(packets) // 2
    for chunk in (packets[:half], packets[half:]):
        t = Trace()
        t.packet.extend(chunk)
        b.add_packet().compressed_packets = zlib.compress(t.SerializeToString(), 9)
    return b.serialize(), inner.serialize()


def expected(data):
    """What the trace holds, computed from the parsed protobuf (following the importer's rules)."""
    t = Trace.FromString(data)
    packets = []
    for p in t.packet:
        if p.HasField('compressed_packets'):
            packets.extend(Trace.FromString(zlib.decompress(p.compressed_packets)).packet)
        else:
            packets.append(p)
    names, tracks, seq_state, events = {}, {}, {}, []
    for pos, p in enumerate(packets):
        if p.HasField('track_descriptor'):
            d = p.track_descriptor
            tracks[d.uuid] = d.thread.thread_name or d.process.process_name or d.name
            continue
        st = seq_state.setdefault(p.trusted_packet_sequence_id, {'names': {}, 'default': None})
        if p.sequence_flags & CLEARED:
            st['names'], st['default'] = {}, None
        if p.HasField('trace_packet_defaults'):
            st['default'] = p.trace_packet_defaults.track_event_defaults.track_uuid
        for en in p.interned_data.event_names:
            st['names'][en.iid] = en.name
        if not p.HasField('track_event'):
            continue
        e = p.track_event
        track = e.track_uuid if e.HasField('track_uuid') else (st['default'] or 0)
        name = e.name if e.HasField('name') else st['names'].get(e.name_iid, '')
        events.append((p.timestamp, pos, track, e.type, name, list(e.flow_ids), list(e.terminating_flow_ids),
                       e.counter_value if e.HasField('counter_value') else e.double_counter_value))
    events.sort(key=lambda x: (x[0], x[1]))
    out = {uuid: {'name': n, 'slices': [], 'instants': [], 'counters': []} for uuid, n in tracks.items()}
    stacks, flow_refs, active, flows = {}, [], {}, []
    for ts, pos, track, type_, name, fl, term, value in events:
        tr = out[track]
        stack = stacks.setdefault(track, [])
        ref = None
        if type_ == BEGIN:
            tr['slices'].append([name, ts, None, len(stack)])
            stack.append(len(tr['slices']) - 1)
            ref = (track, 'slice', len(tr['slices']) - 1)
        elif type_ == END:
            i = stack.pop()
            tr['slices'][i][2] = ts
            ref = (track, 'slice', i)
        elif type_ == INSTANT:
            tr['instants'].append([name, ts, len(stack)])
            ref = (track, 'instant', len(tr['instants']) - 1)
        elif type_ == COUNTER:
            tr['counters'].append([ts, value])
        for f in fl:
            if f in active:
                flows.append([active[f], ref])
            active[f] = ref
        for f in term:
            if f in active:
                flows.append([active.pop(f), ref])

    def label(r):
        track, kind, i = r
        item = out[track]['slices' if kind == 'slice' else 'instants'][i]
        return [out[track]['name'], kind, item[0], item[1]]

    return {'tracks': sorted(out.values(), key=lambda x: x['name']),
            'flows': [[label(a), label(b)] for a, b in flows]}


def main():
    outdir = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
    compressed, uncompressed = compressed_trace()
    files = {'foreign_nested.pftrace': nested_trace(), 'foreign_interned.pftrace': interned_trace(),
             'foreign_compressed.pftrace': compressed}
    exp = {}
    for name, data in files.items():
        with open(os.path.join(outdir, name), 'wb') as f:
            f.write(data)
        exp[name] = expected(data)
        print('%s: %d bytes' % (name, len(data)))
    with open(os.path.join(outdir, 'foreign_expected.json'), 'w') as f:
        json.dump(exp, f, indent=1, sort_keys=True)
        f.write('\n')


if __name__ == '__main__':
    main()
