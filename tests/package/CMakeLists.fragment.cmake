# Registers the package test (install + find_package from an outside project) with ctest.
# Meant to be include()d from tests/CMakeLists.txt:
#
#     include(package/CMakeLists.fragment.cmake)
#
# The test installs this build tree into <build>/tests/package-test/prefix (never the real
# CMAKE_INSTALL_PREFIX), then configures, builds and runs tests/package/consumer against it.

find_program(PIPESCOPE_BASH bash REQUIRED)

# The installed libraries carry the sanitizer instrumentation of this build, so the consumer must
# be compiled and linked with the same sanitizer.
set(_ps_consumer_flags "")
if(PIPESCOPE_SANITIZE STREQUAL "address")
  set(_ps_consumer_flags "-fsanitize=address,undefined")
elseif(PIPESCOPE_SANITIZE STREQUAL "thread")
  set(_ps_consumer_flags "-fsanitize=thread")
endif()

add_test(NAME package.find_package
  COMMAND "${PIPESCOPE_BASH}" "${CMAKE_CURRENT_LIST_DIR}/package_test.sh"
          "${pipescope_BINARY_DIR}" "${pipescope_SOURCE_DIR}"
          "${CMAKE_CURRENT_BINARY_DIR}/package-test")
set_tests_properties(package.find_package PROPERTIES
  TIMEOUT 300
  LABELS "package"
  ENVIRONMENT "PIPESCOPE_CONSUMER_CXX_FLAGS=${_ps_consumer_flags};PIPESCOPE_CMAKE_COMMAND=${CMAKE_COMMAND}")
unset(_ps_consumer_flags)
