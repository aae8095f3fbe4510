# Driver for the ctest tests perfetto.check_traces and perfetto.checker_selftest (tests/CMakeLists.txt).
#
#   cmake -DMODE=check -DPYTHON=... -DTOOLS_DIR=... -DTESTS_BIN=... -DTRACE_DIR=... "-DTRACES=a;b" -P run_checks.cmake
#   cmake -DMODE=selftest -DPYTHON=... -DTOOLS_DIR=... -P run_checks.cmake
#
# check: first runs the Catch2 tests tagged [trace-file] (they write their traces into TRACE_DIR), then
# check_trace.py over TRACE_DIR and the listed TRACES (written by CLI tests that ran before, as fixture
# setup). Missing tooling fails the test with check_trace.py's "run scripts/install-deps.sh" message.
cmake_minimum_required(VERSION 3.16)
set(here ${CMAKE_CURRENT_LIST_DIR})
set(hint "run scripts/install-deps.sh (tooling dir: ${TOOLS_DIR})")

if(NOT PYTHON)
  message(FATAL_ERROR "no python3 was found when configuring: ${hint}, then re-run cmake")
endif()

if(MODE STREQUAL "selftest")
  execute_process(COMMAND ${PYTHON} ${here}/selftest.py --tools-dir ${TOOLS_DIR} RESULT_VARIABLE rc)
  if(rc EQUAL 2)
    message(FATAL_ERROR "the trace-validation tooling is missing: ${hint}")
  elseif(NOT rc EQUAL 0)
    message(FATAL_ERROR "check_trace.py self-test failed (exit ${rc})")
  endif()
  return()
endif()

if(NOT MODE STREQUAL "check")
  message(FATAL_ERROR "MODE must be check or selftest")
endif()

# 1. The C++ tests that write trace files. Catch2 v2 exits 0 when no test matches the tag (v3 exits 2):
#    either way "No test cases matched" is fine, there is just nothing of theirs to check yet.
execute_process(COMMAND ${TESTS_BIN} "[trace-file]" WORKING_DIRECTORY ${TRACE_DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(out MATCHES "No test cases matched")
  message(STATUS "no C++ test is tagged [trace-file] yet")
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TESTS_BIN} \"[trace-file]\" failed (exit ${rc}):\n${out}")
else()
  string(REGEX MATCH "[^\n]*(All tests passed|test cases?)[^\n]*" summary "${out}")
  message(STATUS "[trace-file] tests: ${summary}")
endif()

# 2. Every trace: the official schema, then Perfetto's trace processor, then the runtime's own counts.
set(existing)
foreach(t IN LISTS TRACES)
  if(EXISTS ${t})
    list(APPEND existing ${t})
  else()
    message(SEND_ERROR "expected trace ${t} is missing (did the test that writes it run and pass?)")
  endif()
endforeach()
execute_process(COMMAND ${PYTHON} ${here}/check_trace.py --tools-dir ${TOOLS_DIR} ${TRACE_DIR} ${existing}
                RESULT_VARIABLE rc)
if(rc EQUAL 2)
  message(FATAL_ERROR "the trace-validation tooling is missing: ${hint}")
elseif(NOT rc EQUAL 0)
  message(FATAL_ERROR "check_trace.py found problems (exit ${rc}), see above")
endif()
