# Runs pipescope-viewer headless under Xvfb and checks the screenshot (tests/viewer/CMakeLists.txt).
#   MODE=timeline: the K=2 example; the PNG has >= 3 stage palette colours over large areas, the idle
#                  grey, many distinct colours, and is not blank.
#                  With --time, the time cursor's marker and line are drawn in their colour.
#   MODE=range:    the same with --range (a zoomed-in view) and --size.
#   MODE=compare:  the two pipe-fib-256 examples (K = 8 and K = 2) in the compare view: one band of
#                  stage-coloured worker rows per run, and the table (its header colour).
#   MODE=breakdown: the K=2 example in the breakdown view: the category colours (work, scheduler,
#                  stealing, idle, stall, parked) over large areas.
#   MODE=explain:  both pipe-fib-256 examples in the explain view: one verdict marker in the throttle
#                  verdict's red (K = 2), one in the steal-heavy verdict's amber (K = 8).
#   MODE=dag:      the DAG view: a small pipe-fib recorded by the CLI has exactly one box per node
#                  (counted in the state colours, mid-run and after the end), and the K=2 example
#                  zoomed out (level of detail) is all done after the end.
#                  --select outlines the chosen node and fills the details panel; a missing node
#                  is a usage error.
#   MODE=dag-folded: the DAG view of folded traces (docs/viewer.md, "Folded traces"): pipe-fib n=40
#                  recorded with --trace-detail folded shows its blocks hatched (#1B2233) and framed
#                  (#F2D98A) over the done colour after the end, and the same program recorded node by
#                  node has neither; pipe-fib at size small folded by auto, zoomed out (level of
#                  detail), hatches its cells.
#   MODE=graph:    the stage graph view: ferret under bind-to-stage and tbb recorded by the CLI, after
#                  the end: one box per stage of each run (12, in the six stage palette colours), the
#                  queues' peak marks, no queue fill left (the queues drained); the K=2 example: two
#                  boxes (stage 0 and the family "stage j >= 1"), no queue, the live-iterations bar.
#   MODE=corrupt:  a truncated copy of a trace: exit status 0, where it was cut short on stderr, and the
#                  screenshot shows the packets before it under the banner; a text file: exit 2,
#                  "not a Perfetto trace" and the reason on stderr, the error box.
if(NOT XVFB_RUN)
  message(FATAL_ERROR "xvfb-run not found (Debian package xvfb)")
endif()
set(xvfb sh ${CMAKE_CURRENT_LIST_DIR}/../../scripts/under-xvfb.sh ${XVFB_RUN} "-screen 0 1600x1000x24")
set(k2 ${TRACES}/pipe-fib-256-piper-K2.pftrace)

function(run_viewer png)
  execute_process(COMMAND ${xvfb} ${VIEWER} ${ARGN} --screenshot ${png}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 240)
  set(rc "${rc}" PARENT_SCOPE)
  set(out "${out}" PARENT_SCOPE)
  set(err "${err}" PARENT_SCOPE)
  message(STATUS "viewer exit ${rc}\n${out}${err}")
endfunction()

include(${CMAKE_CURRENT_LIST_DIR}/check_png.cmake)

# screenshot(png ARGS...): a fresh screenshot that must succeed (exit 0, the PNG written).
function(screenshot png)
  file(REMOVE ${png})
  run_viewer(${png} ${ARGN})
  if(NOT rc EQUAL 0 OR NOT EXISTS ${png})
    message(FATAL_ERROR "pipescope-viewer ${ARGN} --screenshot failed (exit ${rc})")
  endif()
endfunction()

# record(trace ARGS...): pipescope run ARGS -o trace, which must succeed; its output in `recorded`.
function(record trace)
  execute_process(COMMAND ${CLI} run ${ARGN} -o ${trace} RESULT_VARIABLE crc OUTPUT_VARIABLE cout ERROR_VARIABLE cout TIMEOUT 200)
  if(NOT crc EQUAL 0)
    message(FATAL_ERROR "pipescope run ${ARGN} failed (${crc}): ${cout}")
  endif()
  set(recorded "${cout}" PARENT_SCOPE)
endfunction()

if(MODE STREQUAL "timeline")
  set(png ${OUT_DIR}/timeline-K2.png)
  file(REMOVE ${png})
  run_viewer(${png} ${k2})
  if(NOT rc EQUAL 0 OR NOT EXISTS ${png})
    message(FATAL_ERROR "pipescope-viewer --screenshot failed (exit ${rc})")
  endif()
  check_png(${png} --min-colours 200 --stage-colours 3:1500 --colour C8C8C8:500 --colour-max D4FF3A:0)
  # --time puts the shared time cursor on the axis: its marker and line in their own colour.
  set(png ${OUT_DIR}/timeline-K2-cursor.png)
  file(REMOVE ${png})
  run_viewer(${png} ${k2} --time 3000000)
  if(NOT rc EQUAL 0 OR NOT EXISTS ${png})
    message(FATAL_ERROR "pipescope-viewer --screenshot --time failed (exit ${rc})")
  endif()
  check_png(${png} --colour D4FF3A:40)
elseif(MODE STREQUAL "range")
  set(png ${OUT_DIR}/timeline-K2-range.png)
  file(REMOVE ${png})
  run_viewer(${png} ${k2} --range 1000000:1400000 --size 1280x800)
  if(NOT rc EQUAL 0 OR NOT EXISTS ${png})
    message(FATAL_ERROR "pipescope-viewer --screenshot --range failed (exit ${rc})")
  endif()
  check_png(${png} --min-colours 100 --stage-colours 2:1500)
elseif(MODE STREQUAL "explain")
  # The explain view on both pipe-fib-256 examples: K = 2 gets the throttle verdict (red marker,
  # severity >= 0.5), K = 8 the steal-heavy one (amber marker).
  set(png ${OUT_DIR}/explain.png)
  file(REMOVE ${png})
  run_viewer(${png} ${TRACES}/pipe-fib-256-piper.pftrace ${k2} --view explain)
  if(NOT rc EQUAL 0 OR NOT EXISTS ${png})
    message(FATAL_ERROR "pipescope-viewer --view explain failed (exit ${rc})")
  endif()
  check_png(${png} --min-colours 20 --colour E05050:30 --colour E0A040:30)
elseif(MODE STREQUAL "compare")
  set(png ${OUT_DIR}/compare.png)
  file(REMOVE ${png})
  run_viewer(${png} ${TRACES}/pipe-fib-256-piper.pftrace ${k2} --view compare)
  if(NOT rc EQUAL 0 OR NOT EXISTS ${png})
    message(FATAL_ERROR "pipescope-viewer --view compare failed (exit ${rc})")
  endif()
  check_png(${png} --min-colours 100 --stage-colours 2:1500 --stage-bands 2:200:10 --colour 334A6E:3000)
elseif(MODE STREQUAL "breakdown")
  set(png ${OUT_DIR}/breakdown.png)
  file(REMOVE ${png})
  run_viewer(${png} ${k2} --view breakdown)
  if(NOT rc EQUAL 0 OR NOT EXISTS ${png})
    message(FATAL_ERROR "pipescope-viewer --view breakdown failed (exit ${rc})")
  endif()
  check_png(${png} --min-colours 50 --colour 4C9F70:5000 --colour 9C7FD0:1000 --colour 5FD3F3:500 --colour C8C8C8:1000
            --colour 000000:500 --colour 5E5E5E:1000)
elseif(MODE STREQUAL "dag")
  # A small pipe-fib (38 iterations, 581 nodes: the structure is fixed by n, not by the timing),
  # fitted in the window: one box per DAG node, counted in the five state colours (not ready,
  # ready, running, suspended, done) at the default cursor (halfway through the run).
  set(small ${OUT_DIR}/dag-pipe-fib-40.pftrace)
  execute_process(COMMAND ${CLI} run pipe-fib --workers 2 --param n=40 --param K=4 -o ${small}
                  RESULT_VARIABLE crc OUTPUT_VARIABLE cout ERROR_VARIABLE cout TIMEOUT 120)
  if(NOT crc EQUAL 0)
    message(FATAL_ERROR "pipescope run failed (${crc}): ${cout}")
  endif()
  set(png ${OUT_DIR}/dag-small.png)
  file(REMOVE ${png})
  run_viewer(${png} ${small} --view dag)
  if(NOT rc EQUAL 0 OR NOT EXISTS ${png})
    message(FATAL_ERROR "pipescope-viewer --screenshot --view dag failed (exit ${rc})")
  endif()
  # How many boxes are in each state at that moment depends on the run's timing (on a loaded
  # machine the start-up can take half the run), so only the count and the critical path are checked.
  check_png(${png} --boxes 474C5A,E8C547,4CD97B,C46BDB,5F86B5:581 --colour FF4D4D:500)
  # After the end every node is done: 581 boxes in the done colour alone.
  set(png ${OUT_DIR}/dag-small-end.png)
  file(REMOVE ${png})
  run_viewer(${png} ${small} --view dag --time 1e12)
  check_png(${png} --boxes 5F86B5:581 --colour-max 474C5A:600)
  # --select 5:3: the node is outlined in white (the only white boxes in the DAG picture), and the
  # details panel shows its stage swatch (stage 3's palette colour appears only there).
  set(png ${OUT_DIR}/dag-small-select.png)
  file(REMOVE ${png})
  run_viewer(${png} ${small} --view dag --select 5:3)
  if(NOT rc EQUAL 0 OR NOT EXISTS ${png})
    message(FATAL_ERROR "pipescope-viewer --view dag --select 5:3 failed (exit ${rc})")
  endif()
  # White is counted in the node grid only (x 160-1235, y 135-1000 at 1600x1000): elsewhere white text
  # carries the run's own times, whose digits change from run to run. The outline of a 22 px box is
  # about 80 px; without a selection the grid has no white at all.
  check_png(${png} --colour B07AA1:100 --region 160:135:1235:1000 --colour FFFFFF:60)
  check_png(${OUT_DIR}/dag-small.png --colour-max B07AA1:0 --region 160:135:1235:1000 --colour-max FFFFFF:0)
  # A node that no run has: a usage error naming it.
  run_viewer(${OUT_DIR}/dag-small-noselect.png ${small} --view dag --select 5000:3)
  if(NOT rc EQUAL 1 OR NOT err MATCHES "no run has pipeline node \\(iteration 5000, stage 3\\)")
    message(FATAL_ERROR "--select of a missing node: expected exit 1 and a message naming it, got ${rc}: ${err}")
  endif()
  # The K=2 example (5998 iterations x 18 stages) zoomed out: level of detail, all done at the end.
  set(png ${OUT_DIR}/dag-K2-end.png)
  file(REMOVE ${png})
  run_viewer(${png} ${k2} --view dag --time 1e12)
  if(NOT rc EQUAL 0 OR NOT EXISTS ${png})
    message(FATAL_ERROR "pipescope-viewer --screenshot --view dag --time failed (exit ${rc})")
  endif()
  check_png(${png} --colour 5F86B5:100000 --colour-max 474C5A:600 --min-colours 50)
elseif(MODE STREQUAL "dag-folded")
  # The grid (x 160-1235, y 135-1000 at 1600x1000): the legend's folded swatch is outside it.
  set(grid --region 160:135:1235:1000)
  foreach(detail folded nodes)
    set(t ${OUT_DIR}/dag-pipe-fib-40-${detail}.pftrace)
    record(${t} pipe-fib --workers 2 --param n=40 --param K=4 --trace-detail ${detail})
    screenshot(${OUT_DIR}/dag-folded-${detail}-end.png ${t} --view dag --time 1e12)
  endforeach()
  # 38 blocks, one per iteration, all done: the done colour, the hatching and the frames over large
  # areas (every block is at least 22 x 60 px); nothing not ready.
  check_png(${OUT_DIR}/dag-folded-folded-end.png ${grid} --colour 5F86B5:50000 --colour 1B2233:10000 --colour F2D98A:5000
            --colour-max 474C5A:0)
  # The node trace of the same program: 581 boxes, no hatching, no frame.
  check_png(${OUT_DIR}/dag-folded-nodes-end.png --boxes 5F86B5:581 ${grid} --colour-max 1B2233:0 --colour-max F2D98A:0)
  # Zoomed out: pipe-fib at size small (auto folds once it has measured its nodes): hatched cells.
  set(small ${OUT_DIR}/dag-pipe-fib-small-auto.pftrace)
  record(${small} pipe-fib --workers 2 --size small)
  if(NOT recorded MATCHES "folded runs hold")
    message(FATAL_ERROR "pipescope run pipe-fib --size small (auto) did not fold: ${recorded}")
  endif()
  screenshot(${OUT_DIR}/dag-folded-small.png ${small} --view dag --time 1e12)
  check_png(${OUT_DIR}/dag-folded-small.png ${grid} --colour 5F86B5:20000 --colour 1B2233:5000)
elseif(MODE STREQUAL "graph")
  # ferret (six stages: serial, four parallel, one in order) under the two policies that bound
  # what is in flight differently: bind-to-stage's queues, tbb's tokens.
  set(bts ${OUT_DIR}/graph-ferret-bind-to-stage.pftrace)
  set(tbb ${OUT_DIR}/graph-ferret-tbb.pftrace)
  foreach(policy bind-to-stage tbb)
    set(t ${OUT_DIR}/graph-ferret-${policy}.pftrace)
    execute_process(COMMAND ${CLI} run ferret --size tiny --policy ${policy} --workers 2 -o ${t}
                    RESULT_VARIABLE crc OUTPUT_VARIABLE cout ERROR_VARIABLE cout TIMEOUT 120)
    if(NOT crc EQUAL 0)
      message(FATAL_ERROR "pipescope run ferret --policy ${policy} failed (${crc}): ${cout}")
    endif()
  endforeach()
  # After the end: 6 + 6 stage boxes of one size (the runs share the box size), every stage colour
  # over a large area; the peak marks (#FFD54F) of the five queues, the reorder buffer and the
  # live-iterations / tokens bars (the legend's mark alone is ~35 px); the queue fill colour only in
  # the legend (every queue is empty at the end).
  set(png ${OUT_DIR}/graph-ferret.png)
  file(REMOVE ${png})
  run_viewer(${png} ${bts} ${tbb} --view graph --time 1e12)
  if(NOT rc EQUAL 0 OR NOT EXISTS ${png})
    message(FATAL_ERROR "pipescope-viewer --view graph failed (exit ${rc})")
  endif()
  check_png(${png} --boxes 4E79A7,F28E2B,59A14F,B07AA1,E15759,76B7B2:12 --stage-colours 6:4000 --colour FFD54F:300
            --colour-max 4FC3F7:300)
  # The bind-to-stage run alone, halfway through: its six boxes.
  set(png ${OUT_DIR}/graph-ferret-bts.png)
  file(REMOVE ${png})
  run_viewer(${png} ${bts} --view graph)
  if(NOT rc EQUAL 0 OR NOT EXISTS ${png})
    message(FATAL_ERROR "pipescope-viewer --view graph (one run) failed (exit ${rc})")
  endif()
  check_png(${png} --boxes 4E79A7,F28E2B,59A14F,B07AA1,E15759,76B7B2:6 --stage-colours 6:4000)
  # A piper run: no queues (no peak marks but the legend's and the live-iterations bar's), two boxes.
  set(png ${OUT_DIR}/graph-K2.png)
  file(REMOVE ${png})
  run_viewer(${png} ${k2} --view graph)
  if(NOT rc EQUAL 0 OR NOT EXISTS ${png})
    message(FATAL_ERROR "pipescope-viewer --view graph (K=2) failed (exit ${rc})")
  endif()
  check_png(${png} --boxes 4E79A7,F28E2B:2 --colour-max FFD54F:100 --colour 7FA7C9:1000)
elseif(MODE STREQUAL "corrupt")
  file(READ ${k2} hex HEX LIMIT 200000)
  set(bad ${OUT_DIR}/truncated.pftrace)
  # Write the first 100000 bytes (a valid prefix cut in the middle of a packet).
  string(SUBSTRING "${hex}" 0 200000 hex)
  file(WRITE ${OUT_DIR}/truncated.hex "${hex}")
  execute_process(COMMAND ${CMAKE_COMMAND} -E rm -f ${bad})
  execute_process(COMMAND xxd -r -p ${OUT_DIR}/truncated.hex ${bad} RESULT_VARIABLE xrc)
  if(NOT xrc EQUAL 0)
    # No xxd: truncate with head.
    execute_process(COMMAND head -c 100000 ${k2} OUTPUT_FILE ${bad})
  endif()
  set(png ${OUT_DIR}/corrupt.png)
  file(REMOVE ${png})
  # The complete packets are shown (exit 0), under a banner naming where the file was cut short.
  run_viewer(${png} ${bad})
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "expected exit status 0 for a truncated trace (shown up to the damage), got ${rc}")
  endif()
  if(NOT err MATCHES "truncated.pftrace: the recording was cut short at byte [0-9]+ of 100000 \\(last packet incomplete")
    message(FATAL_ERROR "expected the cut named on stderr")
  endif()
  check_png(${png} --colour 5C4212:5000 --stage-colours 2:1500)
  # A file that is not a trace at all: exit 2, the reason on stderr, the error box.
  set(png ${OUT_DIR}/not-a-trace.png)
  file(REMOVE ${png})
  run_viewer(${png} ${TRACES}/README.md)
  if(NOT rc EQUAL 2)
    message(FATAL_ERROR "expected exit status 2 for a file that is not a trace, got ${rc}")
  endif()
  if(NOT err MATCHES "README.md: not a Perfetto trace: a Perfetto trace starts with a packet \\(the byte 0x0A\\); this is text")
    message(FATAL_ERROR "expected 'not a Perfetto trace' and the reason on stderr")
  endif()
  if(NOT EXISTS ${png})
    message(FATAL_ERROR "the screenshot of the error was not written")
  endif()
  check_png(${png} --colour 5A1C1E:5000)
else()
  message(FATAL_ERROR "unknown MODE ${MODE}")
endif()
