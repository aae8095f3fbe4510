// sql_module.hpp: finding the PerfettoSQL module and the trace processor's driver.
#include "sql_module.hpp"

#include <fstream>
#include <initializer_list>
#include <sstream>

namespace pipescope::cli {

namespace {

namespace fs = std::filesystem;

fs::path installed(const std::string& name) {
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    return exe.parent_path().parent_path() / "share/pipescope" / name;
}

std::optional<fs::path> first_existing(std::initializer_list<fs::path> candidates) {
    for (const fs::path& p : candidates)
        if (fs::exists(p)) return p;
    return std::nullopt;
}

}   // namespace

std::optional<fs::path> sql_module_file() {
    return first_existing({fs::path(PIPESCOPE_SQL_BUILD_DIR) / "pipescope.sql", installed("sql/pipescope.sql")});
}

std::optional<fs::path> tp_query_script() {
    return first_existing({fs::path(PIPESCOPE_TP_QUERY_SOURCE), installed("tp_query.js")});
}

std::string sql_module_statements(const fs::path& module) {
    std::ifstream in(module);
    std::string out, line;
    while (std::getline(in, line)) {
        const std::size_t first = line.find_first_not_of(" \t");
        if (first == std::string::npos || line.compare(first, 2, "--") == 0) continue;
        out += line;
        out += '\n';
    }
    return out;
}

}   // namespace pipescope::cli
