-- pipescope PerfettoSQL module, part 7 of 7: work (docs/analysis.md, "Work and span"; `dag` of
-- `pipescope stats --json`). The work T1 is a sum and is expressed here; the span T∞ is the longest
-- path through the pipeline DAG, whose edges (stage, cross, retire, throttle) pipescope builds by
-- rules of its own (tracer/src/pipeline_dag.cpp): it is not expressed in this module, use
-- `pipescope stats` for T∞, T1/T∞ and the critical path.

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
