-- pipescope PerfettoSQL module, part 4 of 7: per-stage statistics (docs/analysis.md, "Per-stage
-- statistics"; analysis/src/stages.cpp). A folded slice of n nodes counts as n executions of its
-- stages, each an equal share (dur / n) of its duration.

-- _pipescope_stage_meta: the stages the run metadata declares (program.stages[]).
--   upid, stage (the number its name starts with, else its index), name, kind, all_from (1 for an
--   entry "stage j ≥ 1 · …" that describes every stage from `stage` on that no other entry names)
CREATE PERFETTO TABLE _pipescope_stage_meta AS
SELECT
  m.upid,
  CASE WHEN json_extract(j.value, '$.name') GLOB 'stage [0-9]*'
       THEN cast(substr(json_extract(j.value, '$.name'), 7) AS INT)
       ELSE json_extract(j.value, '$.index') END AS stage,
  json_extract(j.value, '$.name') AS name,
  json_extract(j.value, '$.kind') AS kind,
  json_extract(j.value, '$.name') GLOB 'stage j ≥ *' AS all_from
FROM _pipescope_run_meta m, json_each(json_extract(m.metadata, '$.program.stages')) j;

-- _pipescope_stage_recorded: the stage kinds the run summary recorded (how iterations entered them).
--   upid, stage, kind, and_later (1: this kind holds for every later stage too)
CREATE PERFETTO TABLE _pipescope_stage_recorded AS
SELECT m.upid, json_extract(j.value, '$.index') AS stage, json_extract(j.value, '$.kind') AS kind,
  coalesce(json_extract(j.value, '$.and_later'), 0) AS and_later
FROM _pipescope_run_meta m, json_each(json_extract(m.summary, '$.stages')) j
WHERE m.summary IS NOT NULL;

-- pipescope_stage_execution: one row per (node slice, stage it holds).
--   upid, slice_id, worker, stage
--   service_ns  the execution's time (ns): the slice's duration, a share of it for a folded slice (REAL)
--   executions  executions of the stage it stands for: 1, or a folded slice's nodes of that stage
--   folded      1 when it is a share of a folded slice
CREATE PERFETTO TABLE pipescope_stage_execution AS
WITH RECURSIVE spread(slice_id, upid, worker, first, last, nodes, dur, j) AS (
  SELECT id, upid, worker, stage, last_stage, nodes, dur, stage FROM pipescope_worker_slice
  WHERE kind = 'node' AND nodes > 1 AND stage IS NOT NULL
  UNION ALL
  SELECT slice_id, upid, worker, first, last, nodes, dur, j + 1 FROM spread WHERE j < last
)
SELECT s.upid, s.id AS slice_id, s.worker, s.stage, cast(s.dur AS REAL) AS service_ns, 1 AS executions, 0 AS folded
FROM pipescope_worker_slice s
WHERE s.kind = 'node' AND s.nodes = 1 AND s.stage IS NOT NULL
UNION ALL
SELECT upid, slice_id, worker, j, cast(dur AS REAL) / nodes,
  -- nodes spread over the stages in order: one each for a pipeline block, all of them for one stage
  nodes / (last - first + 1) + (j - first < nodes % (last - first + 1)), 1
FROM spread;

-- _pipescope_stage_core: pipescope_stage without `serial`.
CREATE PERFETTO TABLE _pipescope_stage_core AS
WITH grouped AS (
  SELECT upid, stage, service_ns, sum(executions) AS n FROM pipescope_stage_execution GROUP BY upid, stage, service_ns
),
ranked AS (
  SELECT upid, stage, service_ns,
    sum(n) OVER (PARTITION BY upid, stage ORDER BY service_ns ROWS UNBOUNDED PRECEDING) AS cum,
    sum(n) OVER (PARTITION BY upid, stage) AS total_n
  FROM grouped
),
nearest AS (
  SELECT upid, stage, total_n,
    max(1, cast(0.50 * total_n AS INT) + (0.50 * total_n > cast(0.50 * total_n AS INT))) AS k50,
    max(1, cast(0.95 * total_n AS INT) + (0.95 * total_n > cast(0.95 * total_n AS INT))) AS k95
  FROM ranked GROUP BY upid, stage
),
summary AS (
  SELECT e.upid, e.stage, sum(e.executions) AS executions,
    sum(CASE WHEN e.folded THEN e.executions ELSE 0 END) AS shares,
    sum(e.service_ns * e.executions) AS total, max(e.service_ns) AS max_ns
  FROM pipescope_stage_execution e GROUP BY e.upid, e.stage
),
pct AS (
  SELECT r.upid, r.stage,
    min(CASE WHEN r.cum >= k.k50 THEN r.service_ns END) AS p50,
    min(CASE WHEN r.cum >= k.k95 THEN r.service_ns END) AS p95
  FROM ranked r JOIN nearest k USING (upid, stage) GROUP BY r.upid, r.stage
),
suspends AS (
  SELECT upid, extract_arg(arg_set_id, 'debug.stage') AS stage, count(*) AS n
  FROM pipescope_worker_instant WHERE name = 'suspend' GROUP BY 1, 2
),
waits AS (
  SELECT upid, stage, count(*) AS n, sum(dur) AS ns FROM pipescope_line_slice
  WHERE kind = 'waiting' AND stage IS NOT NULL GROUP BY 1, 2
),
stages AS (
  SELECT upid, stage FROM summary
  UNION
  SELECT upid, stage FROM _pipescope_stage_meta WHERE NOT all_from
)
SELECT
  st.upid,
  st.stage,
  coalesce((SELECT name FROM _pipescope_stage_meta m WHERE m.upid = st.upid AND m.stage = st.stage AND NOT m.all_from),
           (SELECT name FROM _pipescope_stage_meta m WHERE m.upid = st.upid AND m.all_from AND st.stage >= m.stage)) AS name,
  coalesce((SELECT kind FROM _pipescope_stage_recorded r WHERE r.upid = st.upid AND r.stage = st.stage),
           (SELECT kind FROM _pipescope_stage_recorded r WHERE r.upid = st.upid AND r.and_later AND st.stage >= r.stage),
           (SELECT nullif(kind, 'on the fly') FROM _pipescope_stage_meta m
            WHERE m.upid = st.upid AND m.stage = st.stage AND NOT m.all_from),
           (SELECT nullif(kind, 'on the fly') FROM _pipescope_stage_meta m
            WHERE m.upid = st.upid AND m.all_from AND st.stage >= m.stage)) AS kind,
  coalesce(s.executions, 0) AS executions,
  coalesce(s.shares, 0) AS shares,
  coalesce(cast(round(s.total) AS INT), 0) AS total_ns,
  CASE WHEN s.executions > 0 THEN s.total / s.executions ELSE 0 END AS mean_ns,
  coalesce(cast(round(pct.p50) AS INT), 0) AS p50_ns,
  coalesce(cast(round(pct.p95) AS INT), 0) AS p95_ns,
  coalesce(cast(round(s.max_ns) AS INT), 0) AS max_ns,
  coalesce(coalesce(round(s.total), 0) * 1.0 / (SELECT nullif(makespan_ns, 0) FROM pipescope_run r WHERE r.upid = st.upid), 0)
    AS busy_fraction,
  coalesce(su.n, 0) AS suspensions,
  coalesce(wa.n, 0) AS waits,
  coalesce(wa.ns, 0) AS wait_ns
FROM stages st
LEFT JOIN summary s USING (upid, stage)
LEFT JOIN pct USING (upid, stage)
LEFT JOIN suspends su USING (upid, stage)
LEFT JOIN waits wa USING (upid, stage);

-- pipescope_stage: one row per stage of a run (those with nodes, and those the metadata declares).
--   upid, stage, name (from the metadata), kind (recorded, else declared; NULL: unknown)
--   serial       1 for a serial kind (serial…, stage_wait); unknown kind: stage 0, or every node but
--                the first waited for its predecessor (seed 001 §1)
--   executions   nodes of the stage; shares: how many of them are shares of folded slices
--   total_ns     service time, summed (ns, rounded to a whole ns)
--   mean_ns      total / executions (ns, REAL)
--   p50_ns, p95_ns, max_ns   nearest rank: the ceil(q·n)-th smallest execution (ns, rounded)
--   busy_fraction  total_ns / the run's makespan (the total rounded first, as pipescope stats does)
--   suspensions  `suspend` instants at the stage; waits, wait_ns: `waiting at stage j` line states (ns)
CREATE PERFETTO TABLE pipescope_stage AS
-- A stage of unknown kind is serial when its unfolded nodes (two or more) all waited for their
-- predecessor but the first and no two of consecutive iterations overlap in time; with fewer, when
-- the slices starting at it did (pipeline_dag.cpp, inferred_stage_kind; stages.cpp).
WITH node AS (
  SELECT upid, stage, iteration, ts, ts + dur AS end_ts, waited,
    lag(iteration) OVER (PARTITION BY upid, stage ORDER BY iteration, ts) AS prev_iteration,
    lag(ts + dur) OVER (PARTITION BY upid, stage ORDER BY iteration, ts) AS prev_end
  FROM pipescope_worker_slice WHERE kind = 'node' AND nodes = 1 AND iteration IS NOT NULL
),
inferred AS (
  SELECT upid, stage, count(*) AS nodes, sum(waited) AS waited,
    max(prev_iteration IS NOT NULL AND prev_iteration + 1 = iteration AND ts < prev_end) AS overlap
  FROM node GROUP BY upid, stage
),
any_slice AS (
  SELECT upid, stage, count(*) AS slices, sum(waited) AS waited FROM pipescope_worker_slice
  WHERE kind = 'node' GROUP BY upid, stage
)
SELECT
  c.upid, c.stage, c.name, c.kind,
  CASE WHEN c.kind IS NOT NULL THEN c.kind GLOB '*serial*' OR c.kind = 'stage_wait'
       WHEN c.stage = 0 THEN 1
       WHEN i.nodes >= 2 THEN NOT i.overlap AND i.waited + 1 >= i.nodes
       ELSE coalesce(a.slices > 1 AND a.waited + 1 >= a.slices, 0) END AS serial,
  c.executions, c.shares, c.total_ns, c.mean_ns, c.p50_ns, c.p95_ns, c.max_ns, c.busy_fraction,
  c.suspensions, c.waits, c.wait_ns
FROM _pipescope_stage_core c
LEFT JOIN inferred i USING (upid, stage)
LEFT JOIN any_slice a USING (upid, stage);
