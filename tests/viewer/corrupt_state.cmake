# Copies the config dir run FROM left (script-FROM/config) to script-TO/config and damages every
# per-file state in it (files/*.json: cut to half and garbled), for a run that must ignore them.
#   OUT_DIR  tests/viewer's build directory; FROM, TO  run names
file(REMOVE_RECURSE ${OUT_DIR}/script-${TO})
file(MAKE_DIRECTORY ${OUT_DIR}/script-${TO})
file(COPY ${OUT_DIR}/script-${FROM}/config DESTINATION ${OUT_DIR}/script-${TO})
file(GLOB states ${OUT_DIR}/script-${TO}/config/pipescope/files/*.json)
if(NOT states)
  message(FATAL_ERROR "no state in ${OUT_DIR}/script-${FROM}/config/pipescope/files: did run ${FROM} keep one?")
endif()
foreach(s ${states})
  file(READ ${s} text)
  string(LENGTH "${text}" n)
  math(EXPR half "${n} / 2")
  string(SUBSTRING "${text}" 0 ${half} text)
  file(WRITE ${s} "${text} ]]} garbage")
endforeach()
