# Seed 004 Table III's qualitative result, read from traces: on WORKLOAD, breadth-first's peak
# footprint (packets in use in every queue at once) is at least RATIO times GRAMPS' — breadth-first
# runs each stage over all of its input with unbounded queues, GRAMPS bounds every forward queue
# and drains downstream first. Both runs are recorded with `pipescope run`, the footprint comes
# from `pipescope stats --json` (graph.footprint.peak_bytes), no timing is involved. The traces stay
# in DIR for the Perfetto checks.
# Usage: cmake -DCLI=<pipescope> -DWORKLOAD=<name> -DDIR=<dir> [-DRATIO=10] -P graph_footprint.cmake
if(NOT RATIO)
  set(RATIO 10)
endif()
set(peaks)
foreach(policy gramps breadth-first)
  set(trace ${DIR}/footprint-${WORKLOAD}-${policy}.pftrace)
  execute_process(COMMAND ${CLI} run ${WORKLOAD} --size tiny --workers 2 --policy ${policy} -o ${trace}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "matches the serial reference")
    message(FATAL_ERROR "pipescope run ${WORKLOAD} --policy ${policy} failed (exit ${rc}):\n${out}${err}")
  endif()
  execute_process(COMMAND ${CLI} stats ${trace} --json OUTPUT_VARIABLE json ERROR_VARIABLE err RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "pipescope stats ${trace} failed (exit ${rc}): ${err}")
  endif()
  string(JSON available GET "${json}" runs 0 graph available)
  string(JSON peak GET "${json}" runs 0 graph footprint peak_bytes)
  if(NOT available OR peak LESS_EQUAL 0)
    message(FATAL_ERROR "${trace}: no footprint in the trace (available ${available}, peak ${peak})")
  endif()
  # Bounded queues stay within their capacity under GRAMPS (its backpressure, seed 004 §III-A).
  string(JSON nq LENGTH "${json}" runs 0 graph queues)
  math(EXPR last "${nq} - 1")
  foreach(i RANGE ${last})
    string(JSON over GET "${json}" runs 0 graph queues ${i} over_capacity)
    if(over)
      string(JSON qname GET "${json}" runs 0 graph queues ${i} name)
      message(FATAL_ERROR "${trace}: queue ${qname} held more packets than its capacity")
    endif()
  endforeach()
  list(APPEND peaks ${peak})
  message(STATUS "${WORKLOAD} under ${policy}: peak footprint ${peak} bytes")
endforeach()
list(GET peaks 0 gramps)
list(GET peaks 1 breadth)
# Integers in bytes; compare breadth >= RATIO * gramps without floating point.
math(EXPR need "${gramps} * ${RATIO}")
if(breadth LESS need)
  message(FATAL_ERROR "${WORKLOAD}: breadth-first's peak footprint ${breadth} B is less than ${RATIO}x GRAMPS' ${gramps} B")
endif()
math(EXPR ratio "${breadth} / ${gramps}")
message(STATUS "${WORKLOAD}: breadth-first / gramps peak footprint = ${ratio}x (at least ${RATIO}x required)")
