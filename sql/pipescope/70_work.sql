-- pipescope PerfettoSQL module, part 7 of 7: work and span (docs/analysis.md, "Work and span";
-- `dag` of `pipescope stats --json`; analysis/src/dag_bounds.cpp), and fork-join tasks' own times
-- (`tasks`). The DAG is pipescope's (tracer/src/pipeline_dag.cpp): a vertex per node slice (a folded
-- block is one vertex), stage edges down an iteration, cross edges from iteration i-1, control edges
-- between stage-0 nodes, throttle edges from iteration i-K's retirement. The critical path itself is
-- not listed here (`pipescope stats` gives it); a node slice repeated for one (iteration, stage) is
-- not dropped as pipescope drops it (its writer never records one twice).

-- pipescope_work: per run.
--   upid
--   nodes          nodes run (a folded slice counts the nodes it holds)
--   blocks         node slices annotated with an iteration and a stage: the DAG's vertices
--   folded_blocks  those of them that hold several nodes
--   iterations     distinct iterations of the node slices (graphs: instance/resumption numbers)
--   work_ns        T1: the sum of the blocks' durations (ns); exact for folded traces too (the stage
--                  boundaries inside a folded block are part of its duration)
--   work_fraction  work_ns / (P × makespan), P the run's workers (stage threads not counted)
CREATE PERFETTO TABLE pipescope_work AS
SELECT r.upid,
  coalesce(sum(s.nodes), 0) AS nodes,
  count(s.id) FILTER (WHERE s.iteration IS NOT NULL AND s.stage IS NOT NULL) AS blocks,
  count(s.id) FILTER (WHERE s.iteration IS NOT NULL AND s.stage IS NOT NULL AND s.nodes > 1) AS folded_blocks,
  count(DISTINCT s.iteration) AS iterations,
  coalesce(sum(s.dur) FILTER (WHERE s.iteration IS NOT NULL AND s.stage IS NOT NULL), 0) AS work_ns,
  coalesce(sum(s.dur) FILTER (WHERE s.iteration IS NOT NULL AND s.stage IS NOT NULL), 0) * 1.0
    / (r.workers * r.makespan_ns) AS work_fraction
FROM pipescope_run r
LEFT JOIN pipescope_worker_slice s ON s.upid = r.upid AND s.kind = 'node'
GROUP BY r.upid;

-- _pipescope_dag_node: the vertices of a pipeline run's DAG (tracer/src/pipeline_dag.cpp): node
-- slices annotated with an iteration and a stage, by (iteration, stage, start).
--   upid, iteration, k (its rank in its iteration, from 0), stage, last_stage, dur (ns),
--   s (its iteration's durations summed up to it, it included, ns), crossing (it has a cross edge
--   from iteration i-1: it waited, or it is a folded block), cross_k (the rank in i-1 of the node
--   holding its last stage: i-1's last node with stage <= last_stage)
CREATE PERFETTO TABLE _pipescope_dag_node AS
WITH n AS (
  SELECT s.upid, s.iteration, s.stage, s.last_stage, max(s.dur, 0) AS dur, s.ts,
    (s.waited OR s.nodes > 1) AS crossing,
    row_number() OVER (PARTITION BY s.upid, s.iteration ORDER BY s.stage, s.ts) - 1 AS k
  FROM pipescope_worker_slice s JOIN pipescope_run r USING (upid)
  WHERE s.kind = 'node' AND s.iteration IS NOT NULL AND s.stage IS NOT NULL
    AND coalesce(r.program_kind, '') <> 'graph'
),
w AS (
  SELECT *, sum(dur) OVER (PARTITION BY upid, iteration ORDER BY k ROWS UNBOUNDED PRECEDING) AS s FROM n
),
-- i-1's nodes by stage and i's crossing nodes by last stage in one stream per iteration i: the
-- holder of a node's last stage is the latest i-1 node before it (a running maximum of ranks).
stream AS (
  SELECT upid, iteration + 1 AS iteration, stage AS key, 0 AS is_node, k AS holder_k, NULL AS k FROM n
  UNION ALL
  SELECT upid, iteration, last_stage, 1, NULL, k FROM n WHERE crossing
),
cross_from AS (
  SELECT upid, iteration, k, cross_k FROM (
    SELECT upid, iteration, k, is_node,
      max(holder_k) OVER (PARTITION BY upid, iteration ORDER BY key, is_node ROWS UNBOUNDED PRECEDING) AS cross_k
    FROM stream)
  WHERE is_node
)
SELECT w.upid, w.iteration, w.k, w.stage, w.last_stage, w.dur, w.s, w.crossing, c.cross_k
FROM w LEFT JOIN cross_from c USING (upid, iteration, k);

-- The walk below reads one iteration's nodes at a time.
CREATE PERFETTO INDEX _pipescope_dag_node_by_iteration ON _pipescope_dag_node(upid, iteration);

-- _pipescope_dag_iteration: the iterations with nodes, ranked per run; first_stage: their first node's stage.
CREATE PERFETTO TABLE _pipescope_dag_iteration AS
SELECT upid, iteration, stage AS first_stage,
  row_number() OVER (PARTITION BY upid ORDER BY iteration) AS rank
FROM _pipescope_dag_node WHERE k = 0;

-- _pipescope_iteration_finish: the longest-path distances (ns) of one iteration's nodes, as a JSON
-- array by rank. A node's distance is its duration plus the largest of its predecessors': the node
-- before it in its iteration (stage edge), the node of i-1 holding its last stage (cross edge),
-- and for the first node i-1's first node when both are stage 0 (control edge) and iteration i-K's
-- retirement (throttle edge: R(i-K), R(i) = max(the finish of i's last node, R of the iteration before)).
--   prev_d: the distances of iteration i-1 (NULL when i-1 has no nodes); control: the distance of
--   i-1's first node when the control edge applies, else NULL; throttle: R(i-K), else NULL
CREATE PERFETTO FUNCTION _pipescope_iteration_finish(
  p_upid INT, p_iteration LONG, prev_d STRING, control LONG, throttle LONG)
RETURNS STRING AS
SELECT json_group_array(dist) FROM (
  SELECT k, s + max(e - (s - dur)) OVER (ORDER BY k ROWS UNBOUNDED PRECEDING) AS dist
  FROM (
    SELECT n.k, n.s, n.dur,
      CASE WHEN n.k = 0 THEN max(0, coalesce($control, 0), coalesce($throttle, 0),
                                 coalesce(CASE WHEN n.crossing AND n.cross_k IS NOT NULL
                                               THEN json_extract($prev_d, '$[' || n.cross_k || ']') END, 0))
           WHEN n.crossing AND n.cross_k IS NOT NULL THEN json_extract($prev_d, '$[' || n.cross_k || ']')
      END AS e
    FROM _pipescope_dag_node n WHERE n.upid = $p_upid AND n.iteration = $p_iteration
  )
  ORDER BY k
);

-- _pipescope_span_walk: the iterations in order, each with its nodes' distances (d), the retirement
-- R of the iteration before it (r_prev) and the last K iterations' retirements before it (h, JSON
-- [[iteration, R], ...]); throttled 1 with the throttle edges, 0 without.
CREATE PERFETTO TABLE _pipescope_span_walk AS
WITH RECURSIVE walk(upid, throttled, K, rank, iteration, first_stage, d, r_prev, h) AS (
  SELECT i.upid, t.throttled, coalesce(r.K, 0), i.rank, i.iteration, i.first_stage,
    _pipescope_iteration_finish(i.upid, i.iteration, NULL, NULL, NULL), 0, json_array()
  FROM _pipescope_dag_iteration i JOIN pipescope_run r USING (upid), (SELECT 1 AS throttled UNION ALL SELECT 0) t
  WHERE i.rank = 1
  UNION ALL
  SELECT w.upid, w.throttled, w.K, i.rank, i.iteration, i.first_stage,
    _pipescope_iteration_finish(
      i.upid, i.iteration,
      CASE WHEN w.iteration = i.iteration - 1 THEN w.d END,
      CASE WHEN w.iteration = i.iteration - 1 AND w.first_stage = 0 AND i.first_stage = 0
           THEN json_extract(w.d, '$[0]') END,
      CASE WHEN w.throttled AND w.K > 0 AND i.iteration >= w.K THEN
        CASE WHEN w.iteration = i.iteration - w.K THEN max(json_extract(w.d, '$[#-1]'), w.r_prev)
             ELSE (SELECT json_extract(value, '$[1]') FROM json_each(w.h)
                   WHERE json_extract(value, '$[0]') = i.iteration - w.K) END
      END),
    max(json_extract(w.d, '$[#-1]'), w.r_prev),
    -- the history keeps the last K retirements (K >= 1 here: without a throttle it is not read)
    CASE WHEN json_array_length(w.h) >= max(w.K, 1)
         THEN json_remove(json_insert(w.h, '$[#]', json_array(w.iteration, max(json_extract(w.d, '$[#-1]'), w.r_prev))), '$[0]')
         ELSE json_insert(w.h, '$[#]', json_array(w.iteration, max(json_extract(w.d, '$[#-1]'), w.r_prev))) END
  FROM walk w JOIN _pipescope_dag_iteration i ON i.upid = w.upid AND i.rank = w.rank + 1
)
SELECT * FROM walk;

-- pipescope_span: per run that is not a stage graph (a pipeline, or a run without metadata), the span of its DAG (docs/analysis.md, "Work and span"). Over
-- folded blocks it is an upper bound of the span over nodes, as in pipescope stats.
--   upid
--   span_ns                  T∞: the longest path, throttling edges included (ns)
--   span_unthrottled_ns      the same without throttling edges (ns)
--   parallelism              T1 / T∞; parallelism_unthrottled: T1 / the unthrottled span
--   speedup_bound            min(P, T1 / T∞)
CREATE PERFETTO TABLE pipescope_span AS
WITH last AS (
  SELECT w.upid, w.throttled, max(json_extract(w.d, '$[#-1]'), w.r_prev) AS span
  FROM _pipescope_span_walk w
  WHERE w.rank = (SELECT max(rank) FROM _pipescope_dag_iteration i WHERE i.upid = w.upid)
)
SELECT r.upid,
  t.span AS span_ns,
  u.span AS span_unthrottled_ns,
  CASE WHEN t.span > 0 THEN 1.0 * k.work_ns / t.span ELSE 0 END AS parallelism,
  CASE WHEN u.span > 0 THEN 1.0 * k.work_ns / u.span ELSE 0 END AS parallelism_unthrottled,
  min(r.workers, CASE WHEN t.span > 0 THEN 1.0 * k.work_ns / t.span ELSE 0 END) AS speedup_bound
FROM pipescope_run r
JOIN last t ON t.upid = r.upid AND t.throttled = 1
JOIN last u ON u.upid = r.upid AND u.throttled = 0
JOIN pipescope_work k USING (upid);

-- pipescope_task: each fork-join task (docs/analysis.md, "Fork-join runs"; analysis/src/tasks.cpp):
-- a `task` slice with a `task` annotation.
--   upid, slice_id, worker, task (its id), parent (the spawning task's id, 0: spawned outside any
--   task), ts, dur (ns), spawned_ts (ts less the `spawn_delay` annotation, ns)
--   own_ns  its own time: its duration less the task, idle and parked slices nested in it whose
--           nearest enclosing task, idle or parked slice is this task (a sync that helps or waits)
CREATE PERFETTO TABLE pipescope_task AS
WITH gap AS (   -- the slices that are not their enclosing task's own time
  SELECT s.id, s.upid, s.dur FROM pipescope_worker_slice s
  WHERE s.kind IN ('idle', 'parked') OR (s.kind = 'task' AND extract_arg(
    (SELECT arg_set_id FROM slice x WHERE x.id = s.id), 'debug.task') IS NOT NULL)
),
nested AS (   -- each gap and its nearest enclosing gap
  SELECT g.id, g.dur,
    (SELECT a.id FROM ancestor_slice(g.id) a JOIN gap e ON e.id = a.id ORDER BY a.depth DESC LIMIT 1) AS encloser
  FROM gap g
),
t AS (
  SELECT s.id, s.upid, s.worker, s.ts, s.dur, x.arg_set_id FROM pipescope_worker_slice s JOIN slice x USING (id)
  WHERE s.kind = 'task' AND extract_arg(x.arg_set_id, 'debug.task') IS NOT NULL
)
SELECT t.upid, t.id AS slice_id, t.worker,
  extract_arg(t.arg_set_id, 'debug.task') AS task,
  extract_arg(t.arg_set_id, 'debug.parent') AS parent,
  t.ts, t.dur,
  t.ts - min(coalesce(extract_arg(t.arg_set_id, 'debug.spawn_delay'), 0), t.ts) AS spawned_ts,
  t.dur - coalesce((SELECT sum(n.dur) FROM nested n WHERE n.encloser = t.id), 0) AS own_ns
FROM t;

-- pipescope_tasks: per run, its fork-join tasks.
--   upid, tasks, roots (tasks whose parent is no task of the run), work_ns (T1: their own times summed, ns),
--   own_mean_ns, own_p50_ns, own_p95_ns, own_max_ns (nearest rank, ns), depth (of the spawn tree),
--   steals (successful steals), scheduling_ns (the workers' scheduler + stealing time, ns).
--   The span of the spawn tree is not expressed here (`pipescope stats` gives it).
CREATE PERFETTO TABLE pipescope_tasks AS
WITH RECURSIVE
ranked AS (
  SELECT upid, own_ns, row_number() OVER (PARTITION BY upid ORDER BY own_ns) AS k,
    count(*) OVER (PARTITION BY upid) AS n
  FROM pipescope_task
),
own AS (
  SELECT upid, count(*) AS tasks, sum(own_ns) AS work_ns, avg(own_ns) AS own_mean_ns, max(own_ns) AS own_max_ns,
    min(CASE WHEN k >= max(1, cast(0.50 * n AS INT) + (0.50 * n > cast(0.50 * n AS INT))) THEN own_ns END) AS own_p50_ns,
    min(CASE WHEN k >= max(1, cast(0.95 * n AS INT) + (0.95 * n > cast(0.95 * n AS INT))) THEN own_ns END) AS own_p95_ns
  FROM ranked GROUP BY upid
),
root AS (
  SELECT t.upid, t.task FROM pipescope_task t
  WHERE t.parent IS NULL OR t.parent = 0 OR t.parent = t.task
    OR NOT EXISTS (SELECT 1 FROM pipescope_task p WHERE p.upid = t.upid AND p.task = t.parent)
),
tree(upid, task, depth) AS (
  SELECT upid, task, 1 FROM root
  UNION
  SELECT c.upid, c.task, tree.depth + 1 FROM tree JOIN pipescope_task c ON c.upid = tree.upid AND c.parent = tree.task
  WHERE c.parent <> c.task
)
SELECT r.upid,
  coalesce(o.tasks, 0) AS tasks,
  (SELECT count(*) FROM root WHERE root.upid = r.upid) AS roots,
  coalesce(o.work_ns, 0) AS work_ns,
  coalesce(o.own_mean_ns, 0) AS own_mean_ns,
  coalesce(o.own_p50_ns, 0) AS own_p50_ns,
  coalesce(o.own_p95_ns, 0) AS own_p95_ns,
  coalesce(o.own_max_ns, 0) AS own_max_ns,
  coalesce((SELECT max(depth) FROM tree WHERE tree.upid = r.upid), 0) AS depth,
  e.steals_made AS steals,
  t.scheduler_ns + t.stealing_ns AS scheduling_ns
FROM pipescope_run r
LEFT JOIN own o USING (upid)
JOIN pipescope_run_events e USING (upid)
JOIN pipescope_run_time t USING (upid);
