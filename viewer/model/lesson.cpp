#include "lesson.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <fstream>
#include <limits>
#include <sstream>

namespace pipescope::viewer {

namespace {

using json = nlohmann::json;

const char* type_name(const json& j) {
    switch (j.type()) {
        case json::value_t::null: return "null";
        case json::value_t::boolean: return "a boolean";
        case json::value_t::string: return "a string";
        case json::value_t::array: return "an array";
        case json::value_t::object: return "an object";
        case json::value_t::discarded: return "invalid JSON";
        default: return "a number";
    }
}

// Reads the fields of one JSON object, naming the file and the field's path in every error.
class fields {
public:
    fields(const json& obj, std::string path, const std::string& file) : obj_(obj), path_(std::move(path)), file_(file) {
        if (!obj_.is_object())
            fail(path_.empty() ? "the file" : path_, std::string("expected an object, got ") + type_name(obj_));
    }

    [[noreturn]] void fail(const std::string& where, const std::string& what) const {
        throw lesson_error(file_ + ": " + where + ": " + what);
    }
    std::string at(std::string_view key) const { return path_.empty() ? std::string(key) : path_ + "." + std::string(key); }

    // The member, or nullptr when absent or null (an optional field may be written as null).
    const json* find(std::string_view key) const {
        const auto it = obj_.find(std::string(key));
        return it == obj_.end() || it->is_null() ? nullptr : &*it;
    }
    const json& need(std::string_view key) const {
        const json* j = find(key);
        if (!j) fail(at(key), "missing");
        return *j;
    }

    std::string string(std::string_view key, bool required = true) const {
        const json* j = required ? &need(key) : find(key);
        if (!j) return {};
        if (!j->is_string()) fail(at(key), std::string("expected a string, got ") + type_name(*j));
        return j->get<std::string>();
    }
    std::optional<double> number(std::string_view key, bool required) const {
        const json* j = required ? &need(key) : find(key);
        if (!j) return std::nullopt;
        if (!j->is_number()) fail(at(key), std::string("expected a number, got ") + type_name(*j));
        return j->get<double>();
    }
    std::optional<bool> boolean(std::string_view key, bool required) const {
        const json* j = required ? &need(key) : find(key);
        if (!j) return std::nullopt;
        if (!j->is_boolean()) fail(at(key), std::string("expected true or false, got ") + type_name(*j));
        return j->get<bool>();
    }
    unsigned count(std::string_view key) const {   // optional non-negative integer, 0 when absent
        const json* j = find(key);
        if (!j) return 0;
        if (!j->is_number_unsigned()) fail(at(key), std::string("expected a non-negative integer, got ") + j->dump());
        return static_cast<unsigned>(std::min<std::uint64_t>(j->get<std::uint64_t>(), std::numeric_limits<unsigned>::max()));
    }
    // An array member (empty when optional and absent).
    const json& array(std::string_view key, bool required) const {
        static const json empty = json::array();
        const json* j = required ? &need(key) : find(key);
        if (!j) return empty;
        if (!j->is_array()) fail(at(key), std::string("expected an array, got ") + type_name(*j));
        return *j;
    }
    // A time as a fraction of the document's span.
    std::optional<double> fraction(std::string_view key) const {
        const auto v = number(key, false);
        if (v && !(*v >= 0 && *v <= 1))
            fail(at(key), "expected a fraction of the document's span in [0, 1], got " + find(key)->dump());
        return v;
    }
    std::optional<std::pair<double, double>> range(std::string_view key) const {
        const json* j = find(key);
        if (!j) return std::nullopt;
        if (!j->is_array() || j->size() != 2 || !(*j)[0].is_number() || !(*j)[1].is_number())
            fail(at(key), "expected [a, b]: two fractions of the document's span, got " + j->dump());
        const double a = (*j)[0].get<double>(), b = (*j)[1].get<double>();
        if (!(a >= 0 && a <= 1 && b >= 0 && b <= 1))
            fail(at(key), "fractions of the document's span must be in [0, 1], got " + j->dump());
        if (!(a < b)) fail(at(key), "expected a < b, got " + j->dump());
        return std::pair{a, b};
    }
    std::optional<std::pair<std::uint64_t, std::uint64_t>> node(std::string_view key) const {
        const json* j = find(key);
        if (!j) return std::nullopt;
        if (!j->is_array() || j->size() != 2 || !(*j)[0].is_number_unsigned() || !(*j)[1].is_number_unsigned())
            fail(at(key), "expected [iteration, stage]: two non-negative integers, got " + j->dump());
        return std::pair{(*j)[0].get<std::uint64_t>(), (*j)[1].get<std::uint64_t>()};
    }

private:
    const json& obj_;
    std::string path_;
    const std::string& file_;
};

std::string item(std::string_view array, std::size_t i) { return std::string(array) + "[" + std::to_string(i) + "]"; }

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
    const fields top(root, "", name);
    lesson l;
    l.file = file;
    const std::string format = top.string("format");
    if (format != lesson_format)
        top.fail("format", "expected \"" + std::string(lesson_format) + "\", got \"" + format +
                               "\" (a lesson file written by another version?)");
    l.name = top.string("name");
    l.title = top.string("title");
    l.seeds = top.string("seeds", false);
    l.workers = top.count("workers");
    l.size = top.string("size", false);

    const std::filesystem::path dir = file.parent_path();
    const json& runs = top.array("runs", true);
    for (std::size_t i = 0; i < runs.size(); ++i) {
        const fields r(runs[i], item("runs", i), name);
        lesson_run run;
        run.key = r.string("key");
        run.workload = r.string("workload", false);
        run.policy = r.string("policy", false);
        const json& params = r.array("params", false);
        for (std::size_t k = 0; k < params.size(); ++k) {
            if (!params[k].is_string())
                r.fail(r.at(item("params", k)), std::string("expected a string, got ") + type_name(params[k]));
            run.params.push_back(params[k].get<std::string>());
        }
        run.workers = r.count("workers");
        run.size = r.string("size", false);
        run.trace = r.string("trace");
        if (run.trace.empty()) r.fail(r.at("trace"), "empty path");
        const std::filesystem::path t(run.trace);
        run.trace_path = t.is_absolute() ? t : dir / t;
        l.runs.push_back(std::move(run));
    }

    const json& refusals = top.array("refusals", false);
    for (std::size_t i = 0; i < refusals.size(); ++i) {
        const fields r(refusals[i], item("refusals", i), name);
        l.refusals.push_back({r.string("key"), r.string("workload"), r.string("policy"), r.string("reason")});
    }

    const json& findings = top.array("findings", false);
    for (std::size_t i = 0; i < findings.size(); ++i) {
        const fields f(findings[i], item("findings", i), name);
        lesson_finding x;
        x.name = f.string("name", false);
        x.what = f.string("what");
        x.value = f.number("value", false);
        x.shown = f.string("shown");
        x.paper = f.string("paper", false);
        x.holds = *f.boolean("holds", true);
        x.why_not = f.string("why_not", false);
        l.findings.push_back(std::move(x));
    }

    const json& steps = top.array("steps", true);
    if (steps.empty()) top.fail("steps", "empty: a lesson has at least one step");
    for (std::size_t i = 0; i < steps.size(); ++i) {
        const fields s(steps[i], item("steps", i), name);
        lesson_step st;
        st.title = s.string("title");
        st.text = s.string("text");
        st.move.view = s.string("view");
        if (known_view && !known_view(st.move.view)) s.fail(s.at("view"), "unknown view \"" + st.move.view + "\"");
        st.move.cursor = s.fraction("cursor");
        st.move.range = s.range("range");
        st.move.select = s.node("select");
        st.move.align_runs = s.boolean("align_runs", false);
        l.steps.push_back(std::move(st));
    }
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
