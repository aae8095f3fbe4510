# Virtual runs with fixed costs (docs/virtual.md, "Determinism"): node costs from an earlier real
# recording (--costs) and scheduler costs from --param and a cost file give byte-identical files,
# still checked against the serial reference; stats and compare read them; a recording of another
# program and a bad cost file fail with what is wrong and leave no file behind.
# -DCLI=pipescope -DDIR=<scratch dir>
set(ENV{XDG_CONFIG_HOME} ${DIR}/virtual-costs-config)   # no calibration file: the built-in costs
file(REMOVE_RECURSE ${DIR}/virtual-costs-config)
set(costs ${DIR}/virtual-costs-real.pftrace)
set(a ${DIR}/virtual-costs-a.pftrace)
set(b ${DIR}/virtual-costs-b.pftrace)
set(replay ${DIR}/virtual-costs-replay.pftrace)
file(REMOVE ${a} ${b} ${replay})
set(W pipe-fib-256 --size tiny)

function(run_ok what)
  execute_process(COMMAND ${CLI} ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "${what} failed (${rc}):\n${out}${err}")
  endif()
  set(out "${out}" PARENT_SCOPE)
endfunction()

run_ok("the real recording of the costs" run ${W} --workers 2 -o ${costs})
file(WRITE ${DIR}/virtual-costs.json "{\"costs_ns\": {\"failed_steal\": 70, \"wake\": 4000}}")
foreach(f ${a} ${b})
  run_ok("a virtual run with --costs" run ${W} --workers 8 --virtual --costs ${costs}
         --cost-file ${DIR}/virtual-costs.json --param steal_ns=300 -o ${f})
  if(NOT out MATCHES "matches the serial reference" OR NOT out MATCHES "--param +steal 300 ns"
     OR NOT out MATCHES "cost file [^\n]*failed_steal 70 ns, wake 4000 ns" OR NOT out MATCHES "nodes +cost what")
    message(FATAL_ERROR "the virtual run did not say what it did:\n${out}")
  endif()
endforeach()
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${a} ${b} RESULT_VARIABLE same)
if(NOT same EQUAL 0)
  message(FATAL_ERROR "two virtual runs with the same --costs wrote different files: ${a} ${b}")
endif()

# A virtual recording is a cost source too, and stats and compare read virtual files.
run_ok("a virtual run with a virtual recording's costs" run ${W} --workers 3 --virtual --costs ${a} -o ${replay})
run_ok("stats of a virtual file" stats ${a})
run_ok("compare of virtual files" compare ${a} ${replay})

# Another program's recording: what differs, exit 3, no file.
execute_process(COMMAND ${CLI} run ${W} --seed 7 --workers 2 --virtual --costs ${costs} -o ${DIR}/virtual-costs-bad.pftrace
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 3 OR NOT err MATCHES "recorded pipe-fib-256 \\(size tiny, seed 1\\), but this run is pipe-fib-256 \\(size tiny, seed 7\\)"
   OR EXISTS ${DIR}/virtual-costs-bad.pftrace)
  message(FATAL_ERROR "a recording of another seed was not refused (${rc}):\n${out}${err}")
endif()
file(WRITE ${DIR}/virtual-costs-bad.json "{\"costs_ns\": {\"stael\": 1}}")
execute_process(COMMAND ${CLI} run ${W} --workers 2 --virtual --cost-file ${DIR}/virtual-costs-bad.json
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 3 OR NOT err MATCHES "virtual-costs-bad.json: costs_ns.stael: unknown cost \\(known: steal, ")
  message(FATAL_ERROR "a bad cost file was not refused (${rc}):\n${out}${err}")
endif()
message(STATUS "ok: identical virtual files ${a} ${b}")
