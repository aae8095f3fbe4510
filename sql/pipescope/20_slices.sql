-- pipescope PerfettoSQL module, part 2 of 7: the slices and instants of the workers' tracks,
-- typed by name as the trace model types them (tracer/src/vocabulary.cpp, classify_slice).

-- pipescope_worker_slice: every slice (duration, not instant) on a worker's or stage thread's track.
--   id            Perfetto's slice id
--   upid, worker  the run and the worker (pipescope_worker)
--   ts, dur       as in Perfetto's slice table (ns; dur -1 for a slice still open at the end)
--   name, depth, parent_id   as in Perfetto's slice table
--   kind          node (`stage j…`), task, idle, parked, blocked (`blocked…`), queue (`queue…`,
--                 `push…`, `pop…`, `put…`, `take…`, `reserve…`, `commit…`), running, waiting
--                 (`waiting…`), throttled, other
--   stage         the `stage` annotation (a node: its first stage; blocked/waiting: the queue)
--   iteration     the `iteration` annotation (graphs: the instance or resumption number)
--   nodes         nodes the slice holds: the `nodes` annotation of a folded slice, else 1 (nodes only)
--   last_stage    a folded slice's last stage (`last_stage`), else stage
--   last_iteration  a folded slice's last iteration (`last_iteration`), else iteration
--   waited        the `waited` annotation (1: the node waited for its predecessor), else 0
--   failed_steals the `failed_steals` annotation of an idle slice, else 0
CREATE PERFETTO TABLE pipescope_worker_slice AS
SELECT
  s.id,
  w.upid,
  w.worker,
  s.track_id,
  s.ts,
  s.dur,
  s.name,
  s.depth,
  s.parent_id,
  CASE
    WHEN s.name GLOB 'stage [0-9]*' THEN 'node'
    WHEN s.name = 'task' THEN 'task'
    WHEN s.name = 'idle' THEN 'idle'
    WHEN s.name = 'parked' THEN 'parked'
    WHEN s.name GLOB 'blocked*' THEN 'blocked'
    WHEN s.name GLOB 'queue*' OR s.name GLOB 'push*' OR s.name GLOB 'pop*' OR s.name GLOB 'put*'
      OR s.name GLOB 'take*' OR s.name GLOB 'reserve*' OR s.name GLOB 'commit*' THEN 'queue'
    WHEN s.name = 'running' THEN 'running'
    WHEN s.name GLOB 'waiting*' THEN 'waiting'
    WHEN s.name = 'throttled' THEN 'throttled'
    ELSE 'other'
  END AS kind,
  extract_arg(s.arg_set_id, 'debug.stage') AS stage,
  extract_arg(s.arg_set_id, 'debug.iteration') AS iteration,
  CASE WHEN s.name GLOB 'stage [0-9]*' THEN coalesce(extract_arg(s.arg_set_id, 'debug.nodes'), 1) END AS nodes,
  coalesce(extract_arg(s.arg_set_id, 'debug.last_stage'), extract_arg(s.arg_set_id, 'debug.stage')) AS last_stage,
  coalesce(extract_arg(s.arg_set_id, 'debug.last_iteration'), extract_arg(s.arg_set_id, 'debug.iteration'))
    AS last_iteration,
  coalesce(extract_arg(s.arg_set_id, 'debug.waited'), 0) AS waited,
  coalesce(extract_arg(s.arg_set_id, 'debug.failed_steals'), 0) AS failed_steals
FROM slice s
JOIN pipescope_worker w ON s.track_id = w.track_id
-- An instant is a slice of no duration whose name is no slice's: a node, task, idle or parked
-- slice, or a blocked/waiting state, may last 0 ns and is still a slice.
WHERE NOT (s.dur = 0 AND NOT (s.name GLOB 'stage [0-9]*' OR s.name IN ('task', 'idle', 'parked')
                              OR s.name GLOB 'blocked*' OR s.name GLOB 'waiting*'));

-- pipescope_worker_instant: every instant on a worker's or stage thread's track (steal, stolen,
-- suspend, resume, woken, wake worker v, throttled, events lost, reserve/commit, stage blocked: …).
--   id, upid, worker, track_id, ts (ns), name, arg_set_id (its annotations: extract_arg(arg_set_id, 'debug.KEY'))
CREATE PERFETTO TABLE pipescope_worker_instant AS
SELECT s.id, w.upid, w.worker, s.track_id, s.ts, s.name, s.arg_set_id
FROM slice s
JOIN pipescope_worker w ON s.track_id = w.track_id
WHERE s.id NOT IN (SELECT id FROM pipescope_worker_slice);

-- pipescope_line_slice: the states on the `lines` group's tracks (`line k`, `control`): running,
-- waiting at stage j, waiting to retire, throttled.
--   id, upid, track_id, line (the track's name), ts, dur (ns), name, kind (running | waiting | throttled | other),
--   stage (j of `waiting at stage j`, NULL for `waiting to retire` and the others), iteration
CREATE PERFETTO TABLE pipescope_line_slice AS
SELECT
  s.id,
  pt.upid,
  s.track_id,
  pt.name AS line,
  s.ts,
  s.dur,
  s.name,
  CASE
    WHEN s.name = 'running' THEN 'running'
    WHEN s.name GLOB 'waiting*' THEN 'waiting'
    WHEN s.name = 'throttled' THEN 'throttled'
    ELSE 'other'
  END AS kind,
  CASE WHEN s.name GLOB 'waiting at stage [0-9]*'
    THEN cast(substr(s.name, length('waiting at stage ') + 1) AS INT) END AS stage,
  extract_arg(s.arg_set_id, 'debug.iteration') AS iteration
FROM slice s
JOIN process_track pt ON s.track_id = pt.id
JOIN process_track g ON pt.parent_id = g.id
JOIN _pipescope_run_meta USING (upid)
WHERE g.name = 'lines';
