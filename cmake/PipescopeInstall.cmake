# Install rules and the exported CMake package, so that an outside project can do
#
#     find_package(pipescope 0.1 REQUIRED)             # optionally: COMPONENTS runtime tracer
#     target_link_libraries(app PRIVATE pipescope::runtime)
#
# Included at the end of the top-level CMakeLists.txt, after every target exists.
#
# Layout under the prefix:
#   include/pipescope/...            runtime headers (with detail/), tracer headers (trace/)
#   lib/libpipescope_*.a             the libraries (tracer only once it has sources)
#   lib/cmake/pipescope/             pipescopeConfig.cmake, pipescopeConfigVersion.cmake,
#                                    pipescopeTargets.cmake (+ per-configuration files)
#   bin/pipescope                    the CLI, when the pipescope_cli target exists
#
# Third-party packages the exported targets need at link time must be found again by the
# consumer. Threads is always there; a target that starts to need another exported dependency
# (e.g. the tracer linking ZLIB::ZLIB) declares it with
#
#     set_property(GLOBAL APPEND PROPERTY PIPESCOPE_PACKAGE_DEPENDENCIES ZLIB)
#
# and pipescopeConfig.cmake will find_dependency() it as well.

include(CMakePackageConfigHelpers)

set(PIPESCOPE_INSTALL_CMAKEDIR "${CMAKE_INSTALL_LIBDIR}/cmake/pipescope"
    CACHE STRING "Where pipescopeConfig.cmake is installed (relative to the prefix)")
mark_as_advanced(PIPESCOPE_INSTALL_CMAKEDIR)

# --- headers -----------------------------------------------------------------------------------
# Whole trees, detail/ included: the public headers include detail/ ones.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/runtime/include/"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        COMPONENT pipescope_development
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h" PATTERN "*.inl" PATTERN "*.ipp")
install(DIRECTORY "${PROJECT_SOURCE_DIR}/tracer/include/"
        DESTINATION "${CMAKE_INSTALL_INCLUDEDIR}"
        COMPONENT pipescope_development
        FILES_MATCHING PATTERN "*.hpp" PATTERN "*.h" PATTERN "*.inl" PATTERN "*.ipp")

# --- libraries and the export set --------------------------------------------------------------
# Works for INTERFACE, STATIC and SHARED libraries alike: destinations that do not apply to a
# target's type are ignored. pipescope_build_flags is linked as $<BUILD_INTERFACE:...> only, so it
# is stripped from the exported link interface and needs no export set of its own.
install(TARGETS pipescope_runtime pipescope_tracer
        EXPORT pipescopeTargets
        ARCHIVE DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT pipescope_development
        LIBRARY DESTINATION "${CMAKE_INSTALL_LIBDIR}" COMPONENT pipescope_runtime
                NAMELINK_COMPONENT pipescope_development
        RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT pipescope_runtime)

install(EXPORT pipescopeTargets
        NAMESPACE pipescope::
        FILE pipescopeTargets.cmake
        DESTINATION "${PIPESCOPE_INSTALL_CMAKEDIR}"
        COMPONENT pipescope_development)

# --- the CLI -----------------------------------------------------------------------------------
if(TARGET pipescope_cli)
  install(TARGETS pipescope_cli
          RUNTIME DESTINATION "${CMAKE_INSTALL_BINDIR}" COMPONENT pipescope_runtime)
endif()

# --- pipescopeConfig.cmake and pipescopeConfigVersion.cmake ------------------------------------
get_property(_ps_deps GLOBAL PROPERTY PIPESCOPE_PACKAGE_DEPENDENCIES)
list(REMOVE_DUPLICATES _ps_deps)
list(REMOVE_ITEM _ps_deps Threads)   # the config template always finds Threads itself
set(PIPESCOPE_FIND_DEPENDENCIES "")
foreach(_ps_dep IN LISTS _ps_deps)
  string(APPEND PIPESCOPE_FIND_DEPENDENCIES "find_dependency(${_ps_dep})\n")
endforeach()
unset(_ps_dep)
unset(_ps_deps)

configure_package_config_file(
  "${PROJECT_SOURCE_DIR}/cmake/pipescopeConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/cmake/pipescopeConfig.cmake"
  INSTALL_DESTINATION "${PIPESCOPE_INSTALL_CMAKEDIR}"
  NO_SET_AND_CHECK_MACRO)
write_basic_package_version_file(
  "${PROJECT_BINARY_DIR}/cmake/pipescopeConfigVersion.cmake"
  VERSION "${PROJECT_VERSION}"
  COMPATIBILITY SameMajorVersion)
install(FILES
          "${PROJECT_BINARY_DIR}/cmake/pipescopeConfig.cmake"
          "${PROJECT_BINARY_DIR}/cmake/pipescopeConfigVersion.cmake"
        DESTINATION "${PIPESCOPE_INSTALL_CMAKEDIR}"
        COMPONENT pipescope_development)
