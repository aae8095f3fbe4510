# Warnings and sanitizers for pipescope's own targets (not forced on projects that consume it).
add_library(pipescope_build_flags INTERFACE)
target_compile_options(pipescope_build_flags INTERFACE -Wall -Wextra -Wpedantic)

if(PIPESCOPE_SANITIZE STREQUAL "address")
  # -Wno-maybe-uninitialized: with sanitizer instrumentation GCC 12 reports false positives inside
  # libstdc++ (std::function in <regex>, used by Catch2).
  set(_ps_san -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined
              -Wno-maybe-uninitialized)
elseif(PIPESCOPE_SANITIZE STREQUAL "thread")
  # -Wno-tsan: GCC warns that TSan ignores standalone fences. Every fence in the runtime sits next
  # to seq_cst operations on the same atomics, which TSan does understand.
  set(_ps_san -fsanitize=thread -fno-omit-frame-pointer -Wno-tsan)
elseif(PIPESCOPE_SANITIZE STREQUAL "fuzz")
  # The libFuzzer build (clang only, scripts/fuzz.sh): coverage for the fuzzer plus ASan and UBSan.
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "PIPESCOPE_SANITIZE=fuzz needs clang (libFuzzer): configure with CXX=clang++")
  endif()
  set(_ps_san -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined)
elseif(NOT PIPESCOPE_SANITIZE STREQUAL "")
  message(FATAL_ERROR "PIPESCOPE_SANITIZE must be empty, 'address', 'thread' or 'fuzz', not '${PIPESCOPE_SANITIZE}'")
endif()
if(_ps_san)
  # Applied globally so that every object (and the tests) is instrumented the same way.
  add_compile_options(${_ps_san})
  add_link_options(${_ps_san})
endif()
