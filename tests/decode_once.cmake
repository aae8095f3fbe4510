# ctest layering.decode-once (tests/CMakeLists.txt): what a slice is and what a node slice holds are
# decoded in one place, the trace model (tracer/src/slice_meaning.cpp: slice::kind,
# trace_model::names, trace_model::node_of). No code of the analysis, the viewer or the CLI and its
# lessons classifies slice names or reads a node's identity from annotation ids itself.
#
#   cmake -DSOURCE_DIR=<repository> [-DROOTS=dir;dir] -P decode_once.cmake
cmake_minimum_required(VERSION 3.19)
if(NOT ROOTS)
  set(ROOTS analysis viewer cli recording lessons)
endif()
# Each pattern and what it means; a match anywhere in those rooms fails the test.
set(patterns
  "classify_slice\\("                 "classifies a slice name (read slice::kind)"
  "classify_arg\\("                   "looks annotation names up (read trace_model::node_args / node_of)"
  "node_extent_of|node_arg_ids::of"   "decodes a node's extent (read trace_model::node_of)"
  "stage_of_name\\("                  "reads a stage number from a slice name (read trace_model::stage_of)"
  "arg_key::(last_stage|last_iteration|waited)"  "reads a node's annotations (read trace_model::node_of)"
  "(leading_number|whole_number)\\([^;]*stage_prefix" "parses \"stage j\" names (read trace_model::names)")
set(found "")
set(checked 0)
foreach(root ${ROOTS})
  file(GLOB_RECURSE files "${SOURCE_DIR}/${root}/*.cpp" "${SOURCE_DIR}/${root}/*.hpp")
  foreach(f ${files})
    math(EXPR checked "${checked} + 1")
    file(STRINGS "${f}" lines)
    set(n 0)
    foreach(line IN LISTS lines)
      math(EXPR n "${n} + 1")
      list(LENGTH patterns count)
      math(EXPR last "${count} - 1")
      foreach(i RANGE 0 ${last} 2)
        list(GET patterns ${i} re)
        if(line MATCHES "${re}")
          math(EXPR j "${i} + 1")
          list(GET patterns ${j} why)
          file(RELATIVE_PATH rel "${SOURCE_DIR}" "${f}")
          string(APPEND found "  ${rel}:${n}: ${why}\n")
        endif()
      endforeach()
    endforeach()
  endforeach()
endforeach()
if(checked EQUAL 0)
  message(FATAL_ERROR "no source file found under ${SOURCE_DIR} (${ROOTS})")
endif()
if(found)
  message(FATAL_ERROR "slice meaning decoded outside the trace model:\n${found}")
endif()
message(STATUS "${checked} files: slices are decoded only by the trace model")
