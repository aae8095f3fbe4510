# ctest layering.rooms (tests/CMakeLists.txt): no room includes a header of a room above it
# (docs/architecture.md, "The layers and where they live"). Each room lists the public header
# roots it must not reach; a match anywhere in the room's sources fails with file, line and why.
#
#   cmake -DSOURCE_DIR=<repository> [-DONLY=room] -P rooms.cmake
cmake_minimum_required(VERSION 3.19)
set(runtime_headers "pipescope/(annotate|node_costs|pipeline|pipescope|scheduler|task_group|trace_session)\\.hpp|pipescope/(detail|graph)/")
# room   forbidden include roots (a regex over the path inside <...> or "...")
set(rules
  tracer    "${runtime_headers}|pipescope/(analysis|workloads|recording|lessons)/"
  runtime   "pipescope/(analysis|workloads|recording|lessons)/"
  analysis  "${runtime_headers}|pipescope/(workloads|recording|lessons)/"
  workloads "pipescope/(analysis|recording|lessons)/"
  recording "pipescope/lessons/"
  viewer    "pipescope/(workloads|recording|lessons)/"
  offender  "pipescope/(analysis|recording|lessons)/")
set(found "")
set(checked 0)
list(LENGTH rules count)
math(EXPR last "${count} - 1")
foreach(i RANGE 0 ${last} 2)
  list(GET rules ${i} room)
  math(EXPR j "${i} + 1")
  list(GET rules ${j} forbidden)
  if(ONLY AND NOT room STREQUAL ONLY)
    continue()
  endif()
  file(GLOB_RECURSE files "${SOURCE_DIR}/${room}/*.cpp" "${SOURCE_DIR}/${room}/*.hpp")
  foreach(f ${files})
    math(EXPR checked "${checked} + 1")
    file(STRINGS "${f}" lines REGEX "^[ \t]*#[ \t]*include")
    foreach(line IN LISTS lines)
      if(line MATCHES "[<\"](${forbidden})")
        file(RELATIVE_PATH rel "${SOURCE_DIR}" "${f}")
        string(APPEND found "  ${rel}: ${line}  (${room} sits below that room)\n")
      endif()
    endforeach()
  endforeach()
endforeach()
if(checked EQUAL 0)
  message(FATAL_ERROR "no source file found under ${SOURCE_DIR}")
endif()
if(found)
  message(FATAL_ERROR "an include reaches a room above:\n${found}")
endif()
message(STATUS "${checked} files: no include reaches a room above its own")
