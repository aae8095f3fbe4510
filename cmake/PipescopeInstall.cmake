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
#   share/pipescope/sql/pipescope/   the PerfettoSQL module, one file per topic (docs/perfetto-sql.md)
#   share/pipescope/sql/pipescope.sql  the same files in one, in load order: the text to run first
#   share/pipescope/tp_query.js      Perfetto's trace processor driven by Node, for `pipescope sql`
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

# --- the PerfettoSQL module (sql/pipescope, docs/perfetto-sql.md) -------------------------------
# User modules are loaded by running their text, so besides the files, one file holding them all in
# load order (their names' order) is written at configure time; editing a file re-runs the configure.
install(DIRECTORY "${PROJECT_SOURCE_DIR}/sql/" DESTINATION "${CMAKE_INSTALL_DATADIR}/pipescope/sql"
        COMPONENT pipescope_runtime)
file(GLOB _ps_sql CONFIGURE_DEPENDS "${PROJECT_SOURCE_DIR}/sql/pipescope/*.sql")
list(SORT _ps_sql)
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${_ps_sql})   # their text, not only their names
set(_ps_sql_all "-- pipescope PerfettoSQL module: sql/pipescope/*.sql in load order (docs/perfetto-sql.md)\n")
foreach(_ps_file IN LISTS _ps_sql)
  file(READ "${_ps_file}" _ps_text)
  string(APPEND _ps_sql_all "${_ps_text}\n")
endforeach()
file(WRITE "${PROJECT_BINARY_DIR}/sql/pipescope.sql" "${_ps_sql_all}")
install(FILES "${PROJECT_BINARY_DIR}/sql/pipescope.sql" DESTINATION "${CMAKE_INSTALL_DATADIR}/pipescope/sql"
        COMPONENT pipescope_runtime)
# `pipescope sql` runs the module in Perfetto's trace processor through this script (cli/sql_command.cpp).
install(FILES "${PROJECT_SOURCE_DIR}/tests/perfetto/tp_query.js" DESTINATION "${CMAKE_INSTALL_DATADIR}/pipescope"
        COMPONENT pipescope_runtime)
unset(_ps_sql)
unset(_ps_sql_all)
unset(_ps_file)
unset(_ps_text)

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
