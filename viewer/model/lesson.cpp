#include "lesson.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>

namespace pipescope::viewer {

namespace {

using json = nlohmann::json;

// Where run i's trace is: its path in the file, against the file's directory unless absolute.
std::filesystem::path resolved_trace(const lesson_run& r, const std::filesystem::path& file) {
    const std::filesystem::path t(r.trace);
    return t.is_absolute() ? t : file.parent_path() / t;
}

}   // namespace

lesson parse_lesson(std::string_view text, const std::filesystem::path& file, const view_name_check& known_view) {
    const std::string name = file.string();
    json root;
    try {
        root = json::parse(text.begin(), text.end());
    } catch (const json::parse_error& e) {
        // nlohmann's message carries the byte offset ("... at line 3, column 7: ...").
        std::string what = e.what();
        if (const auto p = what.find("parse error"); p != std::string::npos) what = what.substr(p);
        throw lesson_error(name + ": not valid JSON: " + what);
    }
    lesson l;
    try {
        static_cast<analysis::lesson_file&>(l) = analysis::lesson_from_json(root);
    } catch (const std::runtime_error& e) {   // "steps[2].range: ..."
        throw lesson_error(name + ": " + e.what());
    }
    l.file = file;
    for (std::size_t i = 0; i < l.steps.size(); ++i)
        if (known_view && !known_view(l.steps[i].move.view))
            throw lesson_error(name + ": steps[" + std::to_string(i) + "].view: unknown view \"" + l.steps[i].move.view +
                               "\"");
    for (const lesson_run& r : l.runs) l.trace_paths.push_back(resolved_trace(r, file));
    return l;
}

lesson load_lesson(const std::filesystem::path& file, const view_name_check& known_view) {
    std::error_code ec;
    if (std::filesystem::is_directory(file, ec))
        throw lesson_error(file.string() + ": is a directory (expected a lesson.json)");
    std::ifstream in(file, std::ios::binary);
    if (!in) throw lesson_error(file.string() + ": cannot be read (no such file, or no permission)");
    std::ostringstream ss;
    ss << in.rdbuf();
    if (in.bad()) throw lesson_error(file.string() + ": read error");
    return parse_lesson(ss.str(), file, known_view);
}

bool looks_like_lesson(const std::filesystem::path& file) {
    if (file.extension() != ".json") return false;
    // The whole file, parsed: its keys are written sorted, so "format" comes after the findings,
    // which can run past any fixed-size head (the imbalance lesson's did, at 5 KB). A lesson is a
    // few tens of KB; anything above the bound is some other JSON.
    constexpr std::uintmax_t most = 16u << 20;
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(file, ec);
    if (ec || size > most) return false;
    std::ifstream in(file, std::ios::binary);
    const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
    if (!j.is_object()) return false;
    const auto format = j.find("format");
    return format != j.end() && format->is_string() && format->get<std::string>().starts_with("pipescope-lesson/");
}

double display_span(const document& d, bool aligned) {
    double span = static_cast<double>(d.end - d.start);
    if (aligned) {
        span = 0;
        for (const auto& r : d.runs) span = std::max(span, static_cast<double>(r.end - r.start));
    }
    return std::max(span, 1.0);
}

resolved_move resolve_move(const document& d, const lesson_move& m, bool default_align) {
    resolved_move out;
    out.view = m.view;
    out.align_runs = m.align_runs.value_or(default_align);
    const double span = display_span(d, out.align_runs);
    if (m.cursor) out.cursor = *m.cursor * span;
    out.frame = {0, span};
    if (m.select) {
        out.sel = select_node(d, m.select->first, m.select->second);
        if (!out.sel.valid()) {
            out.problem = "no run has pipeline node (iteration " + std::to_string(m.select->first) + ", stage " +
                          std::to_string(m.select->second) + ")";
        } else if (!m.range) {
            // As --select: the node with twenty times its duration around it.
            if (const auto r = selection_range(d, out.sel, out.align_runs)) {
                const double w = std::max(r->second - r->first, 1.0) * 20, mid = (r->first + r->second) / 2;
                out.frame = {mid - w / 2, mid + w / 2};
            }
        }
    }
    if (m.range) out.frame = {m.range->first * span, m.range->second * span};
    return out;
}

}   // namespace pipescope::viewer
