-- pipescope PerfettoSQL module, part 6 of 7: counters, queue fills and footprint (docs/analysis.md,
-- `limits` and "Stage graphs"; analysis/src/stages.cpp, analysis/src/graph_queues.cpp,
-- tracer/src/graph_footprint.cpp).

-- pipescope_counter: each counter track of a run and its peak.
--   upid, track_id, name (`live iterations`, `tokens in flight`, `queue j fill`, `queue <name> packets`, …)
--   samples       values recorded
--   peak          the largest value; peak_ts: when it was first reached (ns)
--   capacity      the limit it is measured against, when known: K (program.K) for `live iterations`
--                 and `tokens in flight`; for bind-to-stage's `queue j fill`, program.stages[j].queue_capacity
--                 (or .capacity), else program.queues[] naming stage j, else program.queue_capacity, else
--                 program.queue_size, else the `queue=N` parameter, else 20 (bind-to-stage's default)
CREATE PERFETTO TABLE pipescope_counter AS
WITH c AS (
  SELECT r.upid, c.track_id, ct.name, c.ts, c.value,
    row_number() OVER (PARTITION BY c.track_id ORDER BY c.value DESC, c.ts, c.id) AS rank_by_value
  FROM counter c
  JOIN process_counter_track ct ON c.track_id = ct.id
  JOIN _pipescope_run_meta r USING (upid)
)
SELECT c.upid, c.track_id, c.name,
  (SELECT count(*) FROM counter x WHERE x.track_id = c.track_id) AS samples,
  c.value AS peak,
  c.ts AS peak_ts,
  CASE
    WHEN c.name IN ('live iterations', 'tokens in flight') THEN json_extract(m.metadata, '$.program.K')
    WHEN c.name GLOB 'queue [0-9]* fill' THEN coalesce(
      (SELECT coalesce(json_extract(j.value, '$.queue_capacity'), json_extract(j.value, '$.capacity'))
       FROM json_each(json_extract(m.metadata, '$.program.stages')) j
       WHERE json_extract(j.value, '$.index') = cast(substr(c.name, 7) AS INT)),
      (SELECT json_extract(j.value, '$.capacity') FROM json_each(json_extract(m.metadata, '$.program.queues')) j
       WHERE coalesce(json_extract(j.value, '$.stage'), json_extract(j.value, '$.index')) = cast(substr(c.name, 7) AS INT)),
      json_extract(m.metadata, '$.program.queue_capacity'),
      json_extract(m.metadata, '$.program.queue_size'),
      (SELECT nullif(max(cast(substr(p.value, 7) AS REAL), 0), 0) FROM json_each(json_extract(m.metadata, '$.params')) p
       WHERE p.value GLOB 'queue=*'),
      CASE WHEN json_extract(m.metadata, '$.policy') GLOB 'bind-to-stage*' THEN 20 END)
  END AS capacity
FROM c JOIN _pipescope_run_meta m USING (upid)
WHERE c.rank_by_value = 1;

-- _pipescope_counter_mean: a counter's time-weighted mean over its run's span: each value holds
-- from its sample (or the run's start) to the next sample (or the run's end).
CREATE PERFETTO TABLE _pipescope_counter_mean AS
WITH s AS (
  SELECT pc.upid, c.track_id, c.ts, c.value,
    lead(c.ts) OVER (PARTITION BY c.track_id ORDER BY c.ts, c.id) AS next_ts
  FROM counter c JOIN pipescope_counter pc USING (track_id)
)
SELECT s.upid, s.track_id,
  sum(CASE WHEN min(coalesce(s.next_ts, r.end_ns), r.end_ns) > max(s.ts, r.start_ns)
           THEN s.value * (min(coalesce(s.next_ts, r.end_ns), r.end_ns) - max(s.ts, r.start_ns)) ELSE 0 END)
    / (r.end_ns - r.start_ns) AS mean
FROM s JOIN pipescope_run r USING (upid)
GROUP BY s.upid, s.track_id;

-- pipescope_graph_queue: each queue of a stage graph (program.queues of the metadata) and its fill.
--   upid, queue (its index), name, capacity_packets, unbounded, ordered, backward (from the metadata)
--   counter        its counter's name (`queue <name> packets`)
--   packet_bytes   element_bytes × packet_elements (bytes), NULL if not recorded
--   peak_packets   the counter's peak; mean_packets: its time-weighted mean over the run (packets)
--   samples        values recorded
--   over_capacity  1: a bounded queue held more than its capacity (backpressure failed)
CREATE PERFETTO TABLE pipescope_graph_queue AS
SELECT m.upid,
  cast(j.key AS INT) AS queue,
  json_extract(j.value, '$.name') AS name,
  json_extract(j.value, '$.capacity_packets') AS capacity_packets,
  coalesce(json_extract(j.value, '$.unbounded'), 0) AS unbounded,
  coalesce(json_extract(j.value, '$.ordered'), 0) AS ordered,
  coalesce(json_extract(j.value, '$.backward'), 0) AS backward,
  coalesce(json_extract(j.value, '$.counter'), 'queue ' || json_extract(j.value, '$.name') || ' packets') AS counter,
  json_extract(j.value, '$.element_bytes') * json_extract(j.value, '$.packet_elements') AS packet_bytes,
  coalesce(pc.peak, 0) AS peak_packets,
  coalesce(cm.mean, 0) AS mean_packets,
  coalesce(pc.samples, 0) AS samples,
  NOT coalesce(json_extract(j.value, '$.unbounded'), 0) AND json_extract(j.value, '$.capacity_packets') > 0
    AND coalesce(pc.peak, 0) > json_extract(j.value, '$.capacity_packets') AS over_capacity
FROM _pipescope_run_meta m
JOIN json_each(json_extract(m.metadata, '$.program.queues')) j
LEFT JOIN pipescope_counter pc
  ON pc.upid = m.upid
  AND pc.name = coalesce(json_extract(j.value, '$.counter'), 'queue ' || json_extract(j.value, '$.name') || ' packets')
LEFT JOIN _pipescope_counter_mean cm ON cm.track_id = pc.track_id
WHERE json_extract(m.metadata, '$.program.kind') = 'graph';

-- pipescope_footprint_sample: a stage graph's footprint over time, as pipescope's trace model has it.
-- A trace that recorded the counters `footprint packets` / `footprint bytes` (older traces) gives
-- their samples; otherwise it is derived: the sum of the queues' fills at every timestamp where a
-- queue counter has a value (after every change stamped then).
--   upid
--   measure   packets (packets in use in all queues) | bytes (the same in bytes; derived only when
--             every queue's packet size is recorded)
--   ts (ns), value
--   derived   1: summed from the queue counters here; 0: recorded by the runtime
CREATE PERFETTO TABLE pipescope_footprint_sample AS
WITH recorded AS (
  SELECT pc.upid, CASE pc.name WHEN 'footprint packets' THEN 'packets' ELSE 'bytes' END AS measure,
    c.ts, c.value
  FROM pipescope_counter pc JOIN counter c USING (track_id)
  WHERE pc.name IN ('footprint packets', 'footprint bytes')
),
q AS (   -- the queues of runs without recorded footprint; a counter named by two queues counts once
  SELECT upid, counter, min(packet_bytes) AS packet_bytes FROM pipescope_graph_queue
  WHERE upid NOT IN (SELECT upid FROM recorded)
  GROUP BY upid, counter
),
change AS (
  SELECT q.upid, c.ts,
    c.value - coalesce(lag(c.value) OVER (PARTITION BY c.track_id ORDER BY c.ts, c.id), 0) AS delta,
    q.packet_bytes
  FROM q
  JOIN pipescope_counter pc ON pc.upid = q.upid AND pc.name = q.counter
  JOIN counter c ON c.track_id = pc.track_id
),
at_ts AS (
  SELECT upid, ts, sum(delta) AS delta, sum(delta * packet_bytes) AS delta_bytes FROM change GROUP BY upid, ts
),
derived AS (
  SELECT upid, ts,
    sum(delta) OVER (PARTITION BY upid ORDER BY ts ROWS UNBOUNDED PRECEDING) AS packets,
    sum(delta_bytes) OVER (PARTITION BY upid ORDER BY ts ROWS UNBOUNDED PRECEDING) AS bytes
  FROM at_ts
)
SELECT upid, measure, ts, value, 0 AS derived FROM recorded
UNION ALL
SELECT upid, 'packets', ts, packets, 1 FROM derived
UNION ALL
SELECT upid, 'bytes', ts, bytes, 1 FROM derived
WHERE upid NOT IN (SELECT upid FROM q WHERE packet_bytes IS NULL);

-- pipescope_footprint: per stage-graph run, the footprint's peak and time-weighted mean over the run
-- (seed 004 Table III). When derived, it is within one counter quantum or one clock skew of the true
-- footprint (docs/tracing.md, "Counters").
--   upid, peak_packets, mean_packets (packets), peak_bytes, mean_bytes (bytes), derived (1/0)
CREATE PERFETTO TABLE pipescope_footprint AS
WITH s AS (
  SELECT f.*, lead(f.ts) OVER (PARTITION BY f.upid, f.measure ORDER BY f.ts) AS next_ts
  FROM pipescope_footprint_sample f
),
held AS (
  SELECT s.upid, s.measure, s.value, s.derived,
    max(min(coalesce(s.next_ts, r.end_ns), r.end_ns) - max(s.ts, r.start_ns), 0) AS held_ns,
    r.end_ns - r.start_ns AS makespan_ns
  FROM s JOIN pipescope_run r USING (upid)
),
m AS (
  SELECT upid, measure, max(derived) AS derived, max(value) AS peak, sum(value * held_ns) / makespan_ns AS mean
  FROM held GROUP BY upid, measure
)
SELECT upid,
  max(CASE WHEN measure = 'packets' THEN peak END) AS peak_packets,
  max(CASE WHEN measure = 'packets' THEN mean END) AS mean_packets,
  max(CASE WHEN measure = 'bytes' THEN peak END) AS peak_bytes,
  max(CASE WHEN measure = 'bytes' THEN mean END) AS mean_bytes,
  max(derived) AS derived
FROM m GROUP BY upid;
