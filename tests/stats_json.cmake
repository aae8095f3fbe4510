# `pipescope stats --json` and `pipescope compare --json` print the documented fields
# (docs/analysis.md, "JSON schema"), so scripts can rely on them.
# Usage: cmake -DCLI=<pipescope> -DTRACE=<a pipescope trace> -P stats_json.cmake
execute_process(COMMAND ${CLI} stats ${TRACE} --json OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pipescope stats --json exited with ${rc}: ${err}")
endif()
string(JSON format ERROR_VARIABLE jerr GET "${out}" format)
if(jerr OR NOT format STREQUAL "pipescope-stats/1")
  message(FATAL_ERROR "not the expected JSON (format '${format}'): ${jerr}\n${out}")
endif()
string(JSON nruns LENGTH "${out}" runs)
if(nruns LESS 1)
  message(FATAL_ERROR "no runs in the output")
endif()
# Every documented path must exist (string(JSON GET) fails on a missing member).
set(paths
  "format" "file"
  "run title" "run workload" "run policy" "run workers" "run K" "run start_ns" "run end_ns" "run makespan_ns"
  "run iterations" "run nodes" "run reference_seconds"
  "breakdown categories" "breakdown stall_derived"
  "breakdown total work_ns" "breakdown total queue_ns" "breakdown total scheduler_ns" "breakdown total stealing_ns"
  "breakdown total idle_ns" "breakdown total stall_ns" "breakdown total parked_ns" "breakdown total untraced_ns"
  "breakdown total span_ns" "breakdown total fractions work" "breakdown total nodes" "breakdown total steals"
  "breakdown total failed_steals" "breakdown workers 0 name" "breakdown workers 0 worker" "breakdown workers 0 work_ns"
  "stages 0 index" "stages 0 name" "stages 0 kind" "stages 0 serial" "stages 0 executions"
  "stages 0 service_ns total" "stages 0 service_ns mean" "stages 0 service_ns p50" "stages 0 service_ns p95"
  "stages 0 service_ns max" "stages 0 busy_fraction" "stages 0 suspensions" "stages 0 waits" "stages 0 wait_ns"
  "stages 0 longest begin_ns" "stages 0 longest end_ns" "stages 0 longest worker" "stages 0 longest stage"
  "stages 0 longest iteration"
  "steals made" "steals failed" "steals tried" "steals per_worker 0 worker" "steals per_worker 0 made"
  "steals per_worker 0 failed" "steals per_worker 0 tried" "steals pairs 0 thief" "steals pairs 0 victim" "steals pairs 0 made"
  "events suspensions" "events resumptions" "events wakeups" "events throttle_waits" "events throttled_ns"
  "events retire_waits" "events retire_wait_ns" "events events_lost"
  "limits peak_live" "limits K" "limits peak_tokens" "limits N" "limits peak_footprint"
  "limits counters 0 name" "limits counters 0 peak" "limits counters 0 peak_ts_ns" "limits counters 0 capacity"
  "limits counters 0 capacity_from"
  "dag available" "dag nodes" "dag edges" "dag iterations" "dag K" "dag workers" "dag work_ns" "dag span_ns"
  "dag span_unthrottled_ns" "dag parallelism" "dag parallelism_unthrottled" "dag speedup_bound" "dag observed_speedup"
  "dag observed_from_reference" "dag makespan_ns" "dag throttle_edges_on_path"
  "dag critical_path 0 iteration" "dag critical_path 0 stage" "dag critical_path 0 begin_ns" "dag critical_path 0 end_ns"
  "dag critical_path 0 worker" "dag critical_path 0 via"
  "queueing available" "queueing workers" "queueing iterations" "queueing makespan_s" "queueing work_per_item_s"
  "queueing lambda_max" "queueing critical_serial_stage" "queueing bound_bind_to_element" "queueing bound_bind_to_stage"
  "queueing bottleneck_stage" "queueing model" "queueing predicted" "queueing observed" "queueing efficiency"
  "queueing tokens_needed" "queueing k_for_span" "queueing K"
  "queueing stages 0 index" "queueing stages 0 name" "queueing stages 0 serial" "queueing stages 0 tser_s"
  "queueing stages 0 c_element" "queueing stages 0 c_stage" "queueing stages 0 rate_element" "queueing stages 0 rate_stage"
  "verdicts 0 rule" "verdicts 0 limiting" "verdicts 0 severity" "verdicts 0 text" "verdicts 0 suggestion"
  "verdicts 0 where begin_ns" "verdicts 0 where end_ns" "verdicts 0 where worker" "verdicts 0 where stage"
  "verdicts 0 where iteration")
foreach(p IN LISTS paths)
  string(REPLACE " " ";" keys "${p}")
  string(JSON v ERROR_VARIABLE jerr GET "${out}" runs 0 ${keys})
  if(jerr)
    message(FATAL_ERROR "stats --json: missing '${p}': ${jerr}")
  endif()
endforeach()
string(JSON rule GET "${out}" runs 0 verdicts 0 rule)
message(STATUS "stats --json: ${nruns} run(s), every documented field present; first verdict: ${rule}")

execute_process(COMMAND ${CLI} compare ${TRACE} ${TRACE} --json OUTPUT_VARIABLE out RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pipescope compare --json exited with ${rc}: ${err}")
endif()
foreach(p "title" "file" "makespan" "speedup_vs_serial" "steals_tried" "steals_made" "suspensions" "peak_live"
          "peak_footprint" "work_T1" "span_Tinf" "parallelism" "throughput" "ratio_to_first makespan" "verdicts")
  string(REPLACE " " ";" keys "${p}")
  string(JSON v ERROR_VARIABLE jerr GET "${out}" runs 1 ${keys})
  if(jerr)
    message(FATAL_ERROR "compare --json: missing '${p}': ${jerr}")
  endif()
endforeach()
string(JSON ratio GET "${out}" runs 1 ratio_to_first makespan)
if(NOT ratio MATCHES "^1(\\.0*)?$")
  message(FATAL_ERROR "compare of a trace with itself: makespan ratio ${ratio}, expected 1")
endif()
