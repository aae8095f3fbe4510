# A policy is one folder: pipescope_policy_folders() finds the folders of a world's policies/
# directory when CMake configures (CONFIGURE_DEPENDS: a new folder or file reconfigures the build)
# and generates the translation unit that declares and lists every folder's entry, FOLDER_policy,
# from cmake/policy_registry.cpp.in (docs/architecture.md, "How to add a policy").
#
#   pipescope_policy_folders(<sources_var> WORLD <dir under runtime/src> HEADER <header the entry type is in>
#                            NAMESPACE <the entries' namespace> FUNCTION <the generated function>)
#
# sets <sources_var> to the folders' .cpp files and the generated file. A folder name must be a C++
# identifier's tail (lowercase, digits, underscores): it names the entry.
function(pipescope_policy_folders sources_var)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "WORLD;HEADER;NAMESPACE;FUNCTION" "")
  set(world_dir "${PROJECT_SOURCE_DIR}/runtime/src/${arg_WORLD}")
  file(GLOB_RECURSE files CONFIGURE_DEPENDS "${world_dir}/*.cpp" "${world_dir}/*.hpp")
  set(folders)
  set(sources)
  foreach(file IN LISTS files)
    file(RELATIVE_PATH rel "${world_dir}" "${file}")
    if(NOT rel MATCHES "/")
      message(FATAL_ERROR "${arg_WORLD}/${rel}: a policy lives in a folder of its own (${arg_WORLD}/NAME/)")
    endif()
    string(REGEX REPLACE "/.*" "" folder "${rel}")
    if(NOT folder MATCHES "^[a-z][a-z0-9_]*$")
      message(FATAL_ERROR "${arg_WORLD}/${folder}: a policy folder's name must be lowercase letters, digits and "
                          "underscores (it names the entry, ${folder}_policy)")
    endif()
    list(APPEND folders "${folder}")
    if(file MATCHES "\\.cpp$")
      list(APPEND sources "${file}")
    endif()
  endforeach()
  list(REMOVE_DUPLICATES folders)
  list(SORT folders)
  set(POLICY_WORLD_DIR "runtime/src/${arg_WORLD}")
  set(POLICY_HEADER "${arg_HEADER}")
  set(POLICY_NAMESPACE "${arg_NAMESPACE}")
  set(POLICY_FUNCTION "${arg_FUNCTION}")
  set(POLICY_DECLARATIONS "")
  set(POLICY_ROWS "")
  foreach(folder IN LISTS folders)
    string(APPEND POLICY_DECLARATIONS "extern const policy_entry ${folder}_policy;\n")
    string(APPEND POLICY_ROWS "        {\"${folder}\", &${folder}_policy},\n")
  endforeach()
  string(MAKE_C_IDENTIFIER "${arg_WORLD}" stem)
  set(generated "${CMAKE_CURRENT_BINARY_DIR}/generated/${stem}_registry.cpp")
  configure_file("${PROJECT_SOURCE_DIR}/cmake/policy_registry.cpp.in" "${generated}" @ONLY)
  set(${sources_var} ${sources} "${generated}" PARENT_SCOPE)
endfunction()
