-- pipescope PerfettoSQL module, part 1 of 7: runs, their tracks and workers.
-- Load the module by running the files of sql/pipescope/ in name order (docs/perfetto-sql.md).
-- Times are trace nanoseconds (ns), as in Perfetto's own tables.

-- _pipescope_run_meta: one row per pipescope run, i.e. per process that holds a `run` instant.
--   upid      the run's process (Perfetto's process table)
--   metadata  the `run` instant's `metadata` annotation (JSON, docs/tracing.md "Metadata")
--   summary   the `run summary` instant's `metadata` annotation (JSON), NULL for an unfinished run
--   workers_arg  the `run` instant's `workers` annotation
CREATE PERFETTO TABLE _pipescope_run_meta AS
SELECT
  pt.upid,
  extract_arg(run.arg_set_id, 'debug.metadata') AS metadata,
  extract_arg(run.arg_set_id, 'debug.workers') AS workers_arg,
  (SELECT extract_arg(s.arg_set_id, 'debug.metadata') FROM slice s
   WHERE s.track_id = pt.id AND s.name = 'run summary' AND s.dur = 0 LIMIT 1) AS summary
FROM slice run
JOIN process_track pt ON run.track_id = pt.id
WHERE run.name = 'run' AND run.dur = 0;

-- _pipescope_run_track: every track of a run (its process tracks, its threads' tracks, its counters).
--   track_id, upid
CREATE PERFETTO TABLE _pipescope_run_track AS
SELECT pt.id AS track_id, pt.upid FROM process_track pt JOIN _pipescope_run_meta USING (upid)
UNION
SELECT tt.id, t.upid FROM thread_track tt JOIN thread t USING (utid) JOIN _pipescope_run_meta USING (upid)
UNION
SELECT ct.id, ct.upid FROM process_counter_track ct JOIN _pipescope_run_meta USING (upid);

-- _pipescope_run_span: a run's first and last event on any of its tracks (slice ends included).
CREATE PERFETTO TABLE _pipescope_run_span AS
SELECT upid, min(first_ns) AS start_ns, max(last_ns) AS end_ns
FROM (
  SELECT r.upid, min(s.ts) AS first_ns, max(s.ts + max(s.dur, 0)) AS last_ns
  FROM slice s JOIN _pipescope_run_track r ON s.track_id = r.track_id GROUP BY r.upid
  UNION ALL
  SELECT r.upid, min(c.ts), max(c.ts)
  FROM counter c JOIN _pipescope_run_track r ON c.track_id = r.track_id GROUP BY r.upid
)
GROUP BY upid;

-- pipescope_worker: the recording threads of each run: pipeline or graph workers (`worker w`) and
-- bind-to-stage's stage threads (`stage j · thread t`), numbered as `pipescope stats` numbers them.
--   upid, utid, track_id (the thread's track; NULL for a thread that recorded nothing), worker (0, 1, ...; stage threads follow the workers),
--   name (the thread name)
CREATE PERFETTO TABLE pipescope_worker AS
SELECT
  t.upid,
  t.utid,
  tt.id AS track_id,
  CASE WHEN t.tid >= p.pid * 100000 THEN t.tid - p.pid * 100000 - 1 ELSE t.tid - p.pid * 100 - 1 END AS worker,
  t.name
FROM thread t
JOIN process p USING (upid)
LEFT JOIN thread_track tt USING (utid)
JOIN _pipescope_run_meta USING (upid)
WHERE t.name IS NOT NULL;

-- pipescope_run: one row per run.
--   upid          the run's process
--   title         "workload · policy · P=n" (the process name)
--   workload, policy, size   from the run metadata
--   workers       P, the run's workers (stage threads not counted)
--   K             the throttle (program.K), NULL when the policy has none (bind-to-stage, graphs)
--   program_kind  pipeline | graph | tasks
--   reference_seconds  the serial program's time T_S measured before the run (s), NULL if not recorded
--   start_ns, end_ns   the run's first and last event (ns, absolute trace time)
--   makespan_ns   end_ns - start_ns (ns)
--   summarized    1 when the run has its `run summary` (a finished recording)
CREATE PERFETTO TABLE pipescope_run AS
SELECT
  m.upid,
  p.name AS title,
  json_extract(m.metadata, '$.workload') AS workload,
  json_extract(m.metadata, '$.policy') AS policy,
  json_extract(m.metadata, '$.size') AS size,
  coalesce(json_extract(m.metadata, '$.workers'), m.workers_arg) AS workers,
  json_extract(m.metadata, '$.program.K') AS K,
  json_extract(m.metadata, '$.program.kind') AS program_kind,
  json_extract(m.metadata, '$.reference_seconds') AS reference_seconds,
  sp.start_ns,
  sp.end_ns,
  sp.end_ns - sp.start_ns AS makespan_ns,
  m.summary IS NOT NULL AS summarized
FROM _pipescope_run_meta m
JOIN process p USING (upid)
JOIN _pipescope_run_span sp USING (upid);
