# Runs an example program twice and checks what a user would: its own verdict on its output, and
# the trace it records — once through trace_session (-o TRACE), once unmodified under
# PIPESCOPE_TRACE=TRACE_ENV — each read back by `pipescope stats` with the stage names the program
# gave (NAMES, a list), and, with ANNOTATION, that key among the nodes' annotations (Chrome JSON args).
# The traces stay in DIR for the suite's Perfetto checks.
#   -DEXAMPLE=<exe> "-DARGS=<args>" -DCLI=<pipescope> -DDIR=<dir> -DNAME=<base> "-DNAMES=<names>" -DEXPECT=<regex>
#   [-DANNOTATION=<key>]
set(trace "${DIR}/example-${NAME}.pftrace")
set(trace_env "${DIR}/example-${NAME}-env.pftrace")
file(REMOVE "${trace}" "${trace_env}")

function(check_trace file how)
  execute_process(COMMAND ${CLI} stats ${file} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${how}: pipescope stats ${file} failed (${rc}):\n${out}\n${err}")
  endif()
  foreach(name IN LISTS NAMES)
    string(FIND "${out}" "${name}" at)
    if(at EQUAL -1)
      message(FATAL_ERROR "${how}: the stage name '${name}' is not in `pipescope stats ${file}`:\n${out}")
    endif()
  endforeach()
  execute_process(COMMAND ${CLI} validate ${file} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${how}: pipescope validate ${file} failed (${rc}):\n${out}\n${err}")
  endif()
  if(DEFINED ANNOTATION)
    execute_process(COMMAND ${CLI} export-json ${file} ${file}.json RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
    file(READ ${file}.json json)
    file(REMOVE ${file}.json)
    if(NOT rc EQUAL 0 OR NOT json MATCHES "\"${ANNOTATION}\":[0-9]+")
      message(FATAL_ERROR "${how}: no node of ${file} carries the annotation '${ANNOTATION}' (export-json: ${rc} ${err})")
    endif()
  endif()
endfunction()

execute_process(COMMAND ${EXAMPLE} ${ARGS} -o ${trace} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "${EXPECT}")
  message(FATAL_ERROR "${EXAMPLE} ${ARGS} -o ${trace}: exit ${rc}, expected 0 and '${EXPECT}'\nstdout: ${out}\nstderr: ${err}")
endif()
check_trace(${trace} "trace_session")

execute_process(COMMAND ${CMAKE_COMMAND} -E env PIPESCOPE_TRACE=${trace_env} PIPESCOPE_TRACE_DETAIL=nodes ${EXAMPLE} ${ARGS}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "${EXPECT}")
  message(FATAL_ERROR "PIPESCOPE_TRACE=${trace_env} ${EXAMPLE} ${ARGS}: exit ${rc}\nstdout: ${out}\nstderr: ${err}")
endif()
if(NOT err MATCHES "pipescope: trace ${trace_env}: 1 run")
  message(FATAL_ERROR "PIPESCOPE_TRACE: no line on stderr saying where the trace went:\n${err}")
endif()
check_trace(${trace_env} "PIPESCOPE_TRACE")
message(STATUS "ok: ${NAME}: ${out}")
