-- pipescope PerfettoSQL module, part 3 of 7: the time breakdown (docs/analysis.md, "Time breakdown";
-- analysis/src/breakdown.cpp). Each worker's time is the run's span [start_ns, end_ns); every moment
-- goes to the innermost slice open on its track, or to the worker loop between slices.

-- _pipescope_waiting_union: per run, the union of the line states that wait (`waiting…`) or throttle
-- (`throttled`), as disjoint intervals [a, b) (ns).
CREATE PERFETTO TABLE _pipescope_waiting_union AS
WITH w AS (
  SELECT upid, ts AS a, ts + dur AS b FROM pipescope_line_slice
  WHERE kind IN ('waiting', 'throttled') AND dur > 0
),
o AS (
  SELECT upid, a, b,
    max(b) OVER (PARTITION BY upid ORDER BY a, b ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING) AS before
  FROM w
),
g AS (
  SELECT upid, a, b,
    sum(CASE WHEN before IS NULL OR a > before THEN 1 ELSE 0 END)
      OVER (PARTITION BY upid ORDER BY a, b ROWS UNBOUNDED PRECEDING) AS grp
  FROM o
)
SELECT upid, min(a) AS a, max(b) AS b FROM g GROUP BY upid, grp;

-- _pipescope_worker_extent: per worker, the traced interval [first_ns, last_ns]: its first to its
-- last event, clamped to the run; a slice still open at the end, or an idle/parked slice that ends
-- at the worker's last event, runs to the run's end (and so does the interval).
CREATE PERFETTO TABLE _pipescope_worker_extent AS
WITH ev AS (
  SELECT w.upid, w.worker,
    (SELECT min(ts) FROM slice s WHERE s.track_id = w.track_id) AS first_event,
    (SELECT max(CASE WHEN s.dur > 0 THEN s.ts + s.dur ELSE s.ts END) FROM slice s WHERE s.track_id = w.track_id)
      AS last_event
  FROM pipescope_worker w
),
x AS (
  SELECT ev.*, r.start_ns, r.end_ns,
    EXISTS (SELECT 1 FROM pipescope_worker_slice s
            WHERE s.upid = ev.upid AND s.worker = ev.worker
              AND (s.dur < 0 OR (s.kind IN ('idle', 'parked') AND s.ts + s.dur >= ev.last_event))) AS open_at_end
  FROM ev JOIN pipescope_run r USING (upid)
)
SELECT upid, worker, start_ns, end_ns, open_at_end, last_event,
  min(max(coalesce(first_event, end_ns), start_ns), end_ns) AS first_ns,
  CASE WHEN open_at_end THEN end_ns
       ELSE min(max(coalesce(last_event, 0), min(max(coalesce(first_event, end_ns), start_ns), end_ns)), end_ns)
  END AS last_ns
FROM x;

-- _pipescope_clamped_slice: worker slices clamped to the run, [b, e) (ns); open ones run to its end.
CREATE PERFETTO TABLE _pipescope_clamped_slice AS
WITH c AS (
  SELECT s.id, s.upid, s.worker, s.kind, s.depth, s.parent_id, s.ts,
    min(max(s.ts, x.start_ns), x.end_ns) AS b,
    CASE WHEN s.dur < 0 OR (s.kind IN ('idle', 'parked') AND s.ts + s.dur >= x.last_event)
         THEN x.end_ns
         ELSE min(max(s.ts + s.dur, min(max(s.ts, x.start_ns), x.end_ns)), x.end_ns) END AS e
  FROM pipescope_worker_slice s JOIN _pipescope_worker_extent x USING (upid, worker)
)
-- A slice ends by its parent's end at the latest (one level: the writer's slices nest).
SELECT c.id, c.upid, c.worker, c.kind, c.depth, c.parent_id, c.ts, c.b,
  CASE WHEN p.id IS NOT NULL AND p.e < c.e THEN max(p.e, c.b) ELSE c.e END AS e
FROM c LEFT JOIN c p ON c.parent_id = p.id;

-- _pipescope_slice_self: each slice's own time (ns): its length less its children's, and for an
-- idle slice the part of its own time covered by a waiting/throttled line state (stall).
CREATE PERFETTO TABLE _pipescope_slice_self AS
WITH idle_part AS (   -- idle slices and their children
  SELECT c.* FROM _pipescope_clamped_slice c
  WHERE c.kind = 'idle' OR c.parent_id IN (SELECT id FROM _pipescope_clamped_slice WHERE kind = 'idle')
),
ov AS (   -- length of each one's [b, e) covered by the run's waiting union
  SELECT c.id, c.parent_id, sum(min(c.e, u.b) - max(c.b, u.a)) AS covered
  FROM idle_part c JOIN _pipescope_waiting_union u ON u.upid = c.upid AND u.a < c.e AND u.b > c.b
  GROUP BY c.id
),
children AS (
  SELECT parent_id AS id, sum(e - b) AS child_ns FROM _pipescope_clamped_slice
  WHERE parent_id IS NOT NULL GROUP BY parent_id
),
children_covered AS (
  SELECT parent_id AS id, sum(covered) AS child_covered FROM ov WHERE parent_id IS NOT NULL GROUP BY parent_id
)
SELECT c.id, c.upid, c.worker, c.kind,
  (c.e - c.b) - coalesce(ch.child_ns, 0) AS self_ns,
  CASE WHEN c.kind = 'idle' THEN coalesce(ov.covered, 0) - coalesce(cc.child_covered, 0) ELSE 0 END AS stall_ns
FROM _pipescope_clamped_slice c
LEFT JOIN children ch USING (id)
LEFT JOIN ov USING (id)
LEFT JOIN children_covered cc USING (id);

-- _pipescope_gap: per worker, the time between its outermost slices, within its traced interval:
-- [a, b) (ns), and tb, the begin of the latest outermost slice before the gap (else the run's start).
CREATE PERFETTO TABLE _pipescope_gap AS
WITH top AS (
  SELECT upid, worker, b, e,
    lag(e) OVER (PARTITION BY upid, worker ORDER BY b, id) AS prev_e,
    lag(b) OVER (PARTITION BY upid, worker ORDER BY b, id) AS prev_b
  FROM _pipescope_clamped_slice WHERE depth = 0
),
raw AS (
  SELECT t.upid, t.worker, coalesce(t.prev_e, x.start_ns) AS a, t.b, coalesce(t.prev_b, x.start_ns) AS tb
  FROM top t JOIN _pipescope_worker_extent x USING (upid, worker)
  UNION ALL
  SELECT x.upid, x.worker,
    coalesce((SELECT max(e) FROM top t WHERE t.upid = x.upid AND t.worker = x.worker), x.start_ns),
    x.end_ns,
    coalesce((SELECT max(b) FROM top t WHERE t.upid = x.upid AND t.worker = x.worker), x.start_ns)
  FROM _pipescope_worker_extent x
)
SELECT r.upid, r.worker, max(r.a, x.first_ns) AS a, min(r.b, x.last_ns) AS b, r.tb
FROM raw r JOIN _pipescope_worker_extent x USING (upid, worker)
WHERE min(r.b, x.last_ns) > max(r.a, x.first_ns);

-- _pipescope_gap_split: each gap as scheduler time and stealing time (ns): a gap that follows a
-- successful `steal` instant (one made since the previous gap, and since the latest outermost slice
-- began) is stealing from the steal on, the rest is scheduler time.
CREATE PERFETTO TABLE _pipescope_gap_split AS
WITH g AS (
  SELECT *, lag(b) OVER (PARTITION BY upid, worker ORDER BY b) AS prev_gap_b FROM _pipescope_gap
),
-- The gaps' ends and the steals in one stream per worker, a steal before a gap ending at its instant:
-- the latest steal at or before each gap's end is a running maximum.
stream AS (
  SELECT upid, worker, ts AS t, 0 AS is_gap, ts AS steal_ts, NULL AS a, NULL AS b, NULL AS tb, NULL AS prev_gap_b
  FROM pipescope_worker_instant WHERE name = 'steal'
  UNION ALL
  SELECT upid, worker, b, 1, NULL, a, b, tb, prev_gap_b FROM g
),
s AS (
  SELECT *, max(steal_ts) OVER (PARTITION BY upid, worker ORDER BY t, is_gap ROWS UNBOUNDED PRECEDING) AS last_steal
  FROM stream
),
used AS (   -- a steal explains the gap when made since the previous gap and the latest outermost slice
  SELECT upid, worker, a, b,
    CASE WHEN last_steal IS NOT NULL AND (prev_gap_b IS NULL OR last_steal > prev_gap_b) AND last_steal >= tb
         THEN b - min(max(last_steal, a), b) ELSE 0 END AS stealing_ns
  FROM s WHERE is_gap
)
SELECT upid, worker, a, b, stealing_ns, (b - a) - stealing_ns AS scheduler_ns FROM used;

-- pipescope_worker_time: the time breakdown of each worker (ns); the eight categories sum to span_ns.
--   upid, worker, name
--   work_ns       node slices (`stage j`), fork-join `task` slices, any unknown slice
--   queue_ns      queue-operation slices (none in pipescope's own traces: it records them as instants)
--   scheduler_ns  between outermost slices, not after a steal
--   stealing_ns   from a successful `steal` instant to the worker's next slice
--   idle_ns       `idle` slices less their stall part; `waiting…` slices (bind-to-stage, input queue empty)
--   stall_ns      `blocked…` slices, and the part of `idle` during which an iteration waited at a stage
--                 or the loop was throttled (line states)
--   parked_ns     `parked` slices
--   untraced_ns   before the worker's first event or after its last
--   span_ns       the run's makespan
--   nodes         nodes run (a folded slice counts the nodes it holds)
--   folded_runs   folded node slices
--   steals        successful steals (`steal` instants)
--   failed_steals the `failed_steals` annotations of its idle slices
CREATE PERFETTO TABLE pipescope_worker_time AS
SELECT
  w.upid,
  w.worker,
  w.name,
  coalesce((SELECT sum(self_ns) FROM _pipescope_slice_self s WHERE s.upid = w.upid AND s.worker = w.worker
            AND s.kind NOT IN ('idle', 'parked', 'blocked', 'waiting', 'queue')), 0) AS work_ns,
  coalesce((SELECT sum(self_ns) FROM _pipescope_slice_self s WHERE s.upid = w.upid AND s.worker = w.worker
            AND s.kind = 'queue'), 0) AS queue_ns,
  coalesce((SELECT sum(scheduler_ns) FROM _pipescope_gap_split g WHERE g.upid = w.upid AND g.worker = w.worker), 0)
    AS scheduler_ns,
  coalesce((SELECT sum(stealing_ns) FROM _pipescope_gap_split g WHERE g.upid = w.upid AND g.worker = w.worker), 0)
    AS stealing_ns,
  coalesce((SELECT sum(CASE WHEN s.kind = 'idle' THEN self_ns - stall_ns ELSE self_ns END)
            FROM _pipescope_slice_self s WHERE s.upid = w.upid AND s.worker = w.worker
            AND s.kind IN ('idle', 'waiting')), 0) AS idle_ns,
  coalesce((SELECT sum(CASE WHEN s.kind = 'idle' THEN stall_ns ELSE self_ns END)
            FROM _pipescope_slice_self s WHERE s.upid = w.upid AND s.worker = w.worker
            AND s.kind IN ('idle', 'blocked')), 0) AS stall_ns,
  coalesce((SELECT sum(self_ns) FROM _pipescope_slice_self s WHERE s.upid = w.upid AND s.worker = w.worker
            AND s.kind = 'parked'), 0) AS parked_ns,
  (x.first_ns - x.start_ns) + (x.end_ns - x.last_ns) AS untraced_ns,
  x.end_ns - x.start_ns AS span_ns,
  coalesce((SELECT sum(nodes) FROM pipescope_worker_slice s WHERE s.upid = w.upid AND s.worker = w.worker
            AND s.kind = 'node'), 0) AS nodes,
  (SELECT count(*) FROM pipescope_worker_slice s WHERE s.upid = w.upid AND s.worker = w.worker
   AND s.kind = 'node' AND s.nodes > 1) AS folded_runs,
  (SELECT count(*) FROM pipescope_worker_instant i WHERE i.upid = w.upid AND i.worker = w.worker
   AND i.name = 'steal') AS steals,
  coalesce((SELECT sum(failed_steals) FROM pipescope_worker_slice s WHERE s.upid = w.upid AND s.worker = w.worker
            AND s.kind = 'idle'), 0) AS failed_steals
FROM pipescope_worker w
JOIN _pipescope_worker_extent x USING (upid, worker);

-- pipescope_run_time: the breakdown summed over a run's workers (ns; span_ns = P' × makespan, P' the
-- recording threads); the same columns as pipescope_worker_time less worker and name.
CREATE PERFETTO VIEW pipescope_run_time AS
SELECT upid,
  sum(work_ns) AS work_ns, sum(queue_ns) AS queue_ns, sum(scheduler_ns) AS scheduler_ns,
  sum(stealing_ns) AS stealing_ns, sum(idle_ns) AS idle_ns, sum(stall_ns) AS stall_ns,
  sum(parked_ns) AS parked_ns, sum(untraced_ns) AS untraced_ns, sum(span_ns) AS span_ns,
  sum(nodes) AS nodes, sum(folded_runs) AS folded_runs, sum(steals) AS steals, sum(failed_steals) AS failed_steals
FROM pipescope_worker_time GROUP BY upid;
