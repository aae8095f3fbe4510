# Runs pipescope-viewer on a script of the scripted-input mode (docs/viewer.md, "Scripted input")
# under Xvfb, the way a user's keyboard and mouse drive it, and checks its exit status.
#   SCRIPT     the script; @TRACES@ (the repository's traces/) and @OUT_DIR@ (this test's directory)
#              in it are replaced first (configure_file)
#   FILES      the files given on the command line (a CMake list; @TRACES@ works here too)
#   ARGS       more options (e.g. --size;1000x700)
#   RUN_NAME   the run's directory is script-RUN_NAME (default: the script's name)
#   EXPECT_RC  the exit status (default 0: every `expect` held); EXPECT_ERR a regex stderr must match
#   CONFIG_OF  run with the config dir that run CONFIG_OF left (script-CONFIG_OF/config), to read
#              back what it kept (a file's arrangement and bookmarks)
# The test runs in its own directory (dumps and screenshots land there) with its own empty
# XDG_CONFIG_HOME, so that no test reads or writes the user's recent files, and writes the run panel's
# recordings into its own runs/ (PIPESCOPE_RUNS_DIR).
cmake_minimum_required(VERSION 3.20)   # CMP0053: "@TRACES@" below is a string, not a reference
if(NOT XVFB_RUN)
  message(FATAL_ERROR "xvfb-run not found (Debian package xvfb)")
endif()
get_filename_component(name ${SCRIPT} NAME_WE)
if(DEFINED RUN_NAME)   # the test's name: one script run with several ARGS gets a directory per run
  set(name ${RUN_NAME})
endif()
set(config ${OUT_DIR}/script-${name}/config)
if(DEFINED CONFIG_OF)
  set(config ${OUT_DIR}/script-${CONFIG_OF}/config)
endif()
set(OUT_DIR ${OUT_DIR}/script-${name})
file(REMOVE_RECURSE ${OUT_DIR})
file(MAKE_DIRECTORY ${OUT_DIR}/config)
configure_file(${SCRIPT} ${OUT_DIR}/script.txt @ONLY)
string(REPLACE "@TRACES@" "${TRACES}" FILES "${FILES}")
if(NOT DEFINED EXPECT_RC)
  set(EXPECT_RC 0)
endif()
execute_process(COMMAND ${CMAKE_COMMAND} -E env XDG_CONFIG_HOME=${config} PIPESCOPE_RUNS_DIR=${OUT_DIR}/runs
                        sh ${CMAKE_CURRENT_LIST_DIR}/../../scripts/under-xvfb.sh ${XVFB_RUN} "-screen 0 2600x1500x24" ${VIEWER} ${FILES} ${ARGS} --script ${OUT_DIR}/script.txt
                WORKING_DIRECTORY ${OUT_DIR} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
message(STATUS "viewer exit ${rc}\n${out}${err}")
if(NOT rc EQUAL EXPECT_RC)
  message(FATAL_ERROR "pipescope-viewer --script ${name}: exit ${rc}, expected ${EXPECT_RC}")
endif()
if(DEFINED EXPECT_ERR AND NOT err MATCHES "${EXPECT_ERR}")
  message(FATAL_ERROR "stderr does not match '${EXPECT_ERR}'")
endif()
