# The lesson panel (docs/viewer.md "Lesson panel"), headless under Xvfb:
#   --screenshot-steps on tests/data/lesson/lesson.json (the two pipe-fib-256 examples, five steps in
#   five views): exit 0, step-1.png ... step-5.png written and printed, each one a real picture (the
#   view's colours) with the panel's own colours; --lesson-step past the last step is a usage error.
# Malformed lessons are checked without a display (tests/viewer/CMakeLists.txt, expect_failure.cmake).
if(NOT XVFB_RUN)
  message(FATAL_ERROR "xvfb-run not found (Debian package xvfb)")
endif()
set(xvfb sh ${CMAKE_CURRENT_LIST_DIR}/../../scripts/under-xvfb.sh ${XVFB_RUN} "-screen 0 1600x1000x24")
set(dir ${OUT_DIR}/lesson-steps)
file(REMOVE_RECURSE ${dir})
execute_process(COMMAND ${xvfb} ${VIEWER} --lesson ${LESSON} --screenshot-steps ${dir}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
message(STATUS "viewer exit ${rc}\n${out}${err}")
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pipescope-viewer --lesson --screenshot-steps failed (exit ${rc})")
endif()
foreach(k 1 2 3 4 5)
  if(NOT EXISTS ${dir}/step-${k}.png OR NOT out MATCHES "wrote [^\n]*step-${k}.png")
    message(FATAL_ERROR "step-${k}.png was not written (or not printed)")
  endif()
endforeach()
if(EXISTS ${dir}/step-6.png)
  message(FATAL_ERROR "a step-6.png for a lesson of five steps")
endif()

include(${CMAKE_CURRENT_LIST_DIR}/check_png.cmake)
# Every step: the panel's findings badges (the "holds" green and the "not here" orange fills are
# colours of the panel alone) and the view it chose, told by its colours:
#   1 compare: one band of stage-coloured worker rows per run;
#   2 timeline: stage colours, the idle grey and the time cursor (the step sets it);
#   3 dag: node boxes in the done colour, and the selected node (12, 1) in the details panel under the
#     lesson: its stage swatch is the only stage 1 orange in a DAG picture (boxes have state colours);
#   4 graph: the live-iterations bar; 5 breakdown: the category colours.
set(panel --colour 3E9B57:400 --colour C7793A:800)
check_png(${dir}/step-1.png ${panel} --stage-bands 2:200:10)
check_png(${dir}/step-2.png ${panel} --stage-colours 2:1500 --colour C8C8C8:500 --colour D4FF3A:40)
check_png(${dir}/step-3.png ${panel} --colour F28E2B:100 --colour 5F86B5:1000)
check_png(${dir}/step-4.png ${panel} --colour 7FA7C9:1000)
check_png(${dir}/step-5.png ${panel} --colour 4C9F70:5000 --colour 9C7FD0:1000)

# --lesson-step past the last step: a usage error naming the count.
execute_process(COMMAND ${xvfb} ${VIEWER} --lesson ${LESSON} --lesson-step 9 --screenshot ${OUT_DIR}/lesson-step-9.png
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
if(NOT rc EQUAL 1 OR NOT err MATCHES "--lesson-step 9: .*lesson.json has 5 steps")
  message(FATAL_ERROR "--lesson-step 9 of 5: expected exit 1 naming the count, got ${rc}: ${err}")
endif()
