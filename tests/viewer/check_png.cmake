# check_png(PNG ARGS...): runs the pixel checker (PNGCHECK, tests/viewer/png_check.cpp) on a
# screenshot with the colours it must contain; a missing colour fails the test naming the file.
# Shared by screenshot_check.cmake and lesson_steps_check.cmake.
function(check_png png)
  execute_process(COMMAND ${PNGCHECK} ${png} ${ARGN} RESULT_VARIABLE prc OUTPUT_VARIABLE pout ERROR_VARIABLE pout)
  message(STATUS "${pout}")
  if(NOT prc EQUAL 0)
    message(FATAL_ERROR "screenshot check failed: ${png}")
  endif()
endfunction()
