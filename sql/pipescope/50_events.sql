-- pipescope PerfettoSQL module, part 5 of 7: steals, suspensions, wake-ups (docs/analysis.md,
-- `steals` and `events` of `pipescope stats --json`; analysis/src/stages.cpp).

-- pipescope_worker_events: per worker (and stage thread).
--   upid, worker, name
--   steals_made    successful steals: `steal` instants on its track
--   steals_failed  failed steal attempts: the `failed_steals` annotations of its idle slices
--   steals_tried   made + failed
--   stolen_from    `stolen` instants: steals others made from this worker
--   suspensions    `suspend` instants (iterations it suspended at a stage)
--   resumptions    `resume` instants (iterations it enabled again)
--   wakeups        `woken` instants (times it was woken from parked)
--   wakes_sent     `wake worker v` instants (workers it woke)
--   events_lost    the `dropped` annotations of its `events lost` instants (1 each when absent)
CREATE PERFETTO TABLE pipescope_worker_events AS
WITH i AS (
  SELECT upid, worker,
    sum(name = 'steal') AS steals_made,
    sum(name = 'stolen') AS stolen_from,
    sum(name = 'suspend') AS suspensions,
    sum(name = 'resume') AS resumptions,
    sum(name = 'woken') AS wakeups,
    sum(name GLOB 'wake worker *') AS wakes_sent,
    sum(CASE WHEN name = 'events lost' THEN coalesce(extract_arg(arg_set_id, 'debug.dropped'), 1) ELSE 0 END)
      AS events_lost
  FROM pipescope_worker_instant GROUP BY upid, worker
),
f AS (
  SELECT upid, worker, sum(failed_steals) AS steals_failed FROM pipescope_worker_slice
  WHERE kind = 'idle' GROUP BY upid, worker
)
SELECT w.upid, w.worker, w.name,
  coalesce(i.steals_made, 0) AS steals_made,
  coalesce(f.steals_failed, 0) AS steals_failed,
  coalesce(i.steals_made, 0) + coalesce(f.steals_failed, 0) AS steals_tried,
  coalesce(i.stolen_from, 0) AS stolen_from,
  coalesce(i.suspensions, 0) AS suspensions,
  coalesce(i.resumptions, 0) AS resumptions,
  coalesce(i.wakeups, 0) AS wakeups,
  coalesce(i.wakes_sent, 0) AS wakes_sent,
  coalesce(i.events_lost, 0) AS events_lost
FROM pipescope_worker w
LEFT JOIN i USING (upid, worker)
LEFT JOIN f USING (upid, worker);

-- pipescope_steal_pair: successful steals by thief and victim (the `steal` instant's `victim`).
--   upid, thief, victim (NULL when not annotated), made
CREATE PERFETTO VIEW pipescope_steal_pair AS
SELECT upid, worker AS thief, extract_arg(arg_set_id, 'debug.victim') AS victim, count(*) AS made
FROM pipescope_worker_instant WHERE name = 'steal'
GROUP BY upid, thief, victim;

-- pipescope_run_events: per run.
--   upid, steals_made, steals_failed, steals_tried, suspensions, resumptions, wakeups, events_lost
--     (the sums of pipescope_worker_events)
--   throttle_waits  the control line's `throttled` states (else, without a control line, the workers'
--                   `throttled` instants): times the loop stopped at K
--   throttled_ns    the control line's `throttled` time (ns)
--   retire_waits, retire_wait_ns   `waiting to retire` line states and their time (ns)
CREATE PERFETTO TABLE pipescope_run_events AS
WITH w AS (
  SELECT upid, sum(steals_made) AS steals_made, sum(steals_failed) AS steals_failed, sum(steals_tried) AS steals_tried,
    sum(suspensions) AS suspensions, sum(resumptions) AS resumptions, sum(wakeups) AS wakeups,
    sum(events_lost) AS events_lost
  FROM pipescope_worker_events GROUP BY upid
),
l AS (
  SELECT upid,
    sum(kind = 'throttled') AS throttled_states,
    sum(CASE WHEN kind = 'throttled' THEN dur ELSE 0 END) AS throttled_ns,
    sum(kind = 'waiting' AND stage IS NULL) AS retire_waits,
    sum(CASE WHEN kind = 'waiting' AND stage IS NULL THEN dur ELSE 0 END) AS retire_wait_ns
  FROM pipescope_line_slice GROUP BY upid
),
t AS (
  SELECT upid, count(*) AS throttled_instants FROM pipescope_worker_instant WHERE name = 'throttled' GROUP BY upid
)
SELECT r.upid,
  coalesce(w.steals_made, 0) AS steals_made, coalesce(w.steals_failed, 0) AS steals_failed,
  coalesce(w.steals_tried, 0) AS steals_tried,
  coalesce(w.suspensions, 0) AS suspensions, coalesce(w.resumptions, 0) AS resumptions,
  coalesce(w.wakeups, 0) AS wakeups,
  CASE WHEN coalesce(l.throttled_states, 0) > 0 THEN l.throttled_states ELSE coalesce(t.throttled_instants, 0) END
    AS throttle_waits,
  coalesce(l.throttled_ns, 0) AS throttled_ns,
  coalesce(l.retire_waits, 0) AS retire_waits,
  coalesce(l.retire_wait_ns, 0) AS retire_wait_ns,
  coalesce(w.events_lost, 0) AS events_lost
FROM pipescope_run r
LEFT JOIN w USING (upid)
LEFT JOIN l USING (upid)
LEFT JOIN t USING (upid);

-- pipescope_graph_events: per run, a stage graph's instants (all 0 for a pipeline).
--   upid
--   blocked_full   `stage blocked: queue full`: a stage found no room in its output (backpressure)
--   blocked_empty  `stage blocked: queue empty`: a serial stage found its input empty
--   blocked_order  `stage blocked: commit order`: a stage waited to commit in order (DANBI's "waiting")
--   preemptions    `preempted`: a serial stage's preemption budget ran out
--   stages_done    `stage done`: stages that finished and closed their outputs
--   queue_operations  `reserve push/pop`, `commit push/pop` instants
CREATE PERFETTO TABLE pipescope_graph_events AS
SELECT r.upid,
  count(i.id) FILTER (WHERE i.name = 'stage blocked: queue full') AS blocked_full,
  count(i.id) FILTER (WHERE i.name = 'stage blocked: queue empty') AS blocked_empty,
  count(i.id) FILTER (WHERE i.name = 'stage blocked: commit order') AS blocked_order,
  count(i.id) FILTER (WHERE i.name = 'preempted') AS preemptions,
  count(i.id) FILTER (WHERE i.name = 'stage done') AS stages_done,
  count(i.id) FILTER (WHERE i.name IN ('reserve push', 'reserve pop', 'commit push', 'commit pop'))
    AS queue_operations
FROM pipescope_run r
LEFT JOIN pipescope_worker_instant i USING (upid)
GROUP BY r.upid;
