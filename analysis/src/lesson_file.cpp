// pipescope-lesson/1 to and from JSON (lesson_file.hpp).
#include <pipescope/analysis/lesson_file.hpp>

#include <algorithm>
#include <limits>
#include <stdexcept>

namespace pipescope::analysis {

using json = nlohmann::json;

namespace {

json run_json(const lesson_run& r) {
    return {{"key", r.key},         {"workload", r.workload},    {"policy", r.policy}, {"params", r.params},
            {"workers", r.workers}, {"virtual", r.virtual_time}, {"size", r.size},     {"trace", r.trace}};
}

json finding_json(const lesson_finding& f) {
    return {{"name", f.name},      {"what", f.what},   {"value", f.value ? json(*f.value) : json(nullptr)},
            {"shown", f.shown},    {"paper", f.paper}, {"holds", f.holds},
            {"why_not", f.why_not}};
}

json step_json(const lesson_step& s) {
    json j = {{"title", s.title}, {"text", s.text}, {"view", s.move.view}};
    if (s.move.align_runs) j["align_runs"] = *s.move.align_runs;
    if (s.move.cursor) j["cursor"] = *s.move.cursor;
    if (s.move.range) j["range"] = {s.move.range->first, s.move.range->second};
    if (s.move.select) j["select"] = {s.move.select->first, s.move.select->second};
    return j;
}

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

// Reads the fields of one JSON object, naming the field's path in every error.
class fields {
public:
    fields(const json& obj, std::string path) : obj_(obj), path_(std::move(path)) {
        if (!obj_.is_object())
            fail(path_.empty() ? "the file" : path_, std::string("expected an object, got ") + type_name(obj_));
    }

    [[noreturn]] static void fail(const std::string& where, const std::string& what) {
        throw std::runtime_error(where + ": " + what);
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
};

std::string item(std::string_view array, std::size_t i) { return std::string(array) + "[" + std::to_string(i) + "]"; }

// The entries of array member `key`, each an object read by `read` (its path "key[i]").
template <class Read>
auto read_list(const fields& f, std::string_view key, bool required, Read read) {
    const json& a = f.array(key, required);
    std::vector<decltype(read(fields(json::object(), "")))> out;
    for (std::size_t i = 0; i < a.size(); ++i) out.push_back(read(fields(a[i], item(key, i))));
    return out;
}

lesson_run read_run(const fields& r) {
    lesson_run run;
    run.key = r.string("key");
    run.workload = r.string("workload", false);
    run.policy = r.string("policy", false);
    const json& params = r.array("params", false);
    for (std::size_t k = 0; k < params.size(); ++k) {
        if (!params[k].is_string())
            fields::fail(r.at(item("params", k)), std::string("expected a string, got ") + type_name(params[k]));
        run.params.push_back(params[k].get<std::string>());
    }
    run.workers = r.count("workers");
    run.virtual_time = r.boolean("virtual", false).value_or(false);
    run.size = r.string("size", false);
    run.trace = r.string("trace");
    if (run.trace.empty()) fields::fail(r.at("trace"), "empty path");
    return run;
}

lesson_refusal read_refusal(const fields& r) {
    return {r.string("key"), r.string("workload"), r.string("policy"), r.string("reason")};
}

lesson_finding read_finding(const fields& f) {
    lesson_finding x;
    x.name = f.string("name", false);
    x.what = f.string("what");
    x.value = f.number("value", false);
    x.shown = f.string("shown");
    x.paper = f.string("paper", false);
    x.holds = *f.boolean("holds", true);
    x.why_not = f.string("why_not", false);
    return x;
}

lesson_step read_step(const fields& s) {
    lesson_step st;
    st.title = s.string("title");
    st.text = s.string("text");
    st.move.view = s.string("view");
    st.move.cursor = s.fraction("cursor");
    st.move.range = s.range("range");
    st.move.select = s.node("select");
    st.move.align_runs = s.boolean("align_runs", false);
    return st;
}

}   // namespace

json to_json(const lesson_file& l) {
    json j = {{"format", lesson_format}, {"name", l.name},       {"title", l.title},
              {"seeds", l.seeds},        {"workers", l.workers}, {"size", l.size}};
    j["runs"] = json::array();
    for (const lesson_run& r : l.runs) j["runs"].push_back(run_json(r));
    j["refusals"] = json::array();
    for (const lesson_refusal& f : l.refusals)
        j["refusals"].push_back({{"key", f.key}, {"workload", f.workload}, {"policy", f.policy}, {"reason", f.reason}});
    j["findings"] = json::array();
    for (const lesson_finding& f : l.findings) j["findings"].push_back(finding_json(f));
    j["steps"] = json::array();
    for (const lesson_step& s : l.steps) j["steps"].push_back(step_json(s));
    return j;
}

lesson_file lesson_from_json(const json& j) {
    const fields top(j, "");
    const std::string format = top.string("format");
    if (format != lesson_format)
        fields::fail("format", "expected \"" + std::string(lesson_format) + "\", got \"" + format +
                                   "\" (a lesson file written by another version?)");
    lesson_file l;
    l.name = top.string("name");
    l.title = top.string("title");
    l.seeds = top.string("seeds", false);
    l.workers = top.count("workers");
    l.size = top.string("size", false);
    l.runs = read_list(top, "runs", true, read_run);
    l.refusals = read_list(top, "refusals", false, read_refusal);
    l.findings = read_list(top, "findings", false, read_finding);
    l.steps = read_list(top, "steps", true, read_step);
    if (l.steps.empty()) fields::fail("steps", "empty: a lesson has at least one step");
    return l;
}

}   // namespace pipescope::analysis
