// Where pipescope's PerfettoSQL module (sql/pipescope, docs/perfetto-sql.md) and the Node driver of
// Perfetto's trace processor are: beside the build tree when run from it, else under the prefix's
// share/pipescope/ next to bin/. Shared by `pipescope sql` and `pipescope perfetto`.
#pragma once

#include <filesystem>
#include <optional>
#include <string>

namespace pipescope::cli {

// build/sql/pipescope.sql, or PREFIX/share/pipescope/sql/pipescope.sql: the module's files in load order.
std::optional<std::filesystem::path> sql_module_file();
// tests/perfetto/tp_query.js of the source tree, or PREFIX/share/pipescope/tp_query.js.
std::optional<std::filesystem::path> tp_query_script();
// The module's text without its comment lines and blank lines: what a URL carries to the Perfetto UI.
std::string sql_module_statements(const std::filesystem::path& module);

}   // namespace pipescope::cli
