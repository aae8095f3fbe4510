// Running a lesson (runner.hpp).
#include <pipescope/lessons/runner.hpp>

#include <pipescope/recording/recording.hpp>

#include <pipescope/analysis/lesson_file.hpp>

#include <pipescope/trace/atomic_output.hpp>
#include <pipescope/trace/trace_model.hpp>
#include <pipescope/workloads/workload.hpp>

#include <chrono>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace pipescope::lessons {

namespace fs = std::filesystem;
namespace ws = pipescope::workloads;

namespace {

// Words wrapped at `width` columns, every line after the first indented by `indent` spaces.
std::string wrapped(const std::string& text, std::size_t width, std::size_t indent) {
    std::string out, line;
    std::istringstream words(text);
    for (std::string w; words >> w;) {
        if (!line.empty() && line.size() + 1 + w.size() > width) {
            out += line + "\n" + std::string(indent, ' ');
            line.clear();
        }
        line += (line.empty() ? "" : " ") + w;
    }
    return out + line;
}

run_spec resolved(run_spec s, const options& o) {
    if (s.workers == 0) s.workers = o.workers;
    if (s.size.empty()) s.size = o.size;
    return s;
}

std::string describe(const run_spec& s) {
    std::string d = s.workload + " · " + s.policy + " · P=" + std::to_string(s.workers) +
                    (s.virtual_time ? " virtual" : "") + " · " + s.size;
    for (const auto& p : s.params) d += " · " + p;
    return d;
}

recorded record(const run_spec& spec, const fs::path& dir, std::ostream* progress, std::stop_token cancel) {
    recording::run_args args;
    args.workload = spec.workload;
    args.request.policy = spec.policy;
    args.request.size = ws::parse_size(spec.size);
    args.request.params = ws::param_set::parse(spec.params);
    args.params = spec.params;
    args.workers = spec.workers;
    args.virtual_time = spec.virtual_time;
    args.trace_buffer_mib = spec.trace_buffer_mib;
    args.trace_detail = spec.detail;
    recorded r;
    r.spec = spec;
    r.trace_file = spec.key + ".pftrace";
    args.trace_path = (dir / r.trace_file).string();
    if (progress) *progress << "  recording " << spec.key << ": " << describe(spec) << " ..." << std::flush;
    const auto t0 = std::chrono::steady_clock::now();
    const recording::recorded_run run = recording::record_run(args, cancel);
    if (run.report.stats.cancelled) throw std::runtime_error("lesson run " + spec.key + " was cancelled");
    if (!run.report.matches_reference)
        throw std::runtime_error("lesson run " + spec.key + " (" + describe(spec) +
                                 ") differs from its serial reference: " + run.report.description);
    if (run.trace_line.find("dropped") != std::string::npos)
        throw std::runtime_error("lesson run " + spec.key + " dropped trace events: its counts would be wrong " +
                                 "(raise run_spec::trace_buffer_mib)");
    auto model = std::make_shared<trace::trace_model>(trace::load_trace_file(args.trace_path));
    std::vector<analysis::run_report> reports = analysis::analyze_all(*model);
    if (reports.size() != 1)
        throw std::runtime_error(args.trace_path + ": expected one recorded run, found " + std::to_string(reports.size()));
    r.report = std::move(reports.front());
    r.model = std::move(model);
    if (progress) *progress << " " << std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() << " s\n";
    return r;
}

}   // namespace

lesson_result run_lesson(const lesson& l, const options& o, const fs::path& dir, std::ostream* progress,
                         std::stop_token cancel) {
    if (o.workers < 1 || o.workers > 1024) throw std::invalid_argument("--workers: expected 1 to 1024");
    ws::parse_size(o.size);   // throws std::invalid_argument naming the size
    fs::create_directories(dir);
    lesson_result result;
    result.dir = dir;
    result.data.opts = o;
    for (const run_spec& spec : l.runs(o)) {
        result.data.runs.push_back(record(resolved(spec, o), dir, progress, cancel));
        if (cancel.stop_requested()) throw std::runtime_error("lesson interrupted");
    }
    for (const refusal_spec& spec : l.refusals(o))
        result.data.refusals.push_back({spec, recording::refusal_reason(spec.workload, spec.policy)});
    result.told = l.tell(result.data);

    result.json_path = dir / "lesson.json";
    // Written whole, then renamed: never half a file (atomic_output.hpp).
    trace::write_file_atomically(result.json_path, to_json(l, result).dump(2) + "\n");
    return result;
}

namespace {

analysis::lesson_run file_run(const recorded& run) {
    return {.key = run.spec.key,
            .workload = run.spec.workload,
            .policy = run.spec.policy,
            .params = run.spec.params,
            .workers = run.spec.workers,
            .virtual_time = run.spec.virtual_time,
            .size = run.spec.size,
            .trace = run.trace_file};
}

analysis::lesson_step file_step(const step& s) {
    return {.title = s.title,
            .text = s.text,
            .move = {.view = s.move.view,
                     .cursor = s.move.cursor,
                     .range = s.move.range,
                     .select = s.move.select,
                     .align_runs = s.move.align_runs}};
}

}   // namespace

nlohmann::json to_json(const lesson& l, const lesson_result& r) {
    analysis::lesson_file f{
        .name = l.name(), .title = l.title(), .seeds = l.seeds(), .size = r.data.opts.size, .workers = r.data.opts.workers};
    for (const recorded& run : r.data.runs) f.runs.push_back(file_run(run));
    for (const refusal& x : r.data.refusals) f.refusals.push_back({x.spec.key, x.spec.workload, x.spec.policy, x.reason});
    for (const finding& x : r.told.findings)
        f.findings.push_back({x.name, x.what, x.value, x.shown, x.paper, x.holds, x.why_not});
    for (const step& s : r.told.steps) f.steps.push_back(file_step(s));
    return analysis::to_json(f);
}

std::string story_text(const lesson& l, const lesson_result& r) {
    std::string out;
    out += fmt::format("{}\n(seeds {}; P={}, size {})\n\n", l.title(), l.seeds(), r.data.opts.workers, r.data.opts.size);
    for (std::size_t i = 0; i < r.told.steps.size(); ++i) {
        const step& s = r.told.steps[i];
        out += fmt::format("{}. {}  [view: {}]\n   {}\n\n", i + 1, s.title, s.move.view, wrapped(s.text, 96, 3));
    }
    out += "Findings (measured from the traces, next to the paper):\n";
    for (const finding& f : r.told.findings) {
        out += fmt::format("  {}  {}\n", f.holds ? "holds   " : "not here", wrapped(f.what + ": " + f.shown, 86, 12));
        out += fmt::format("            paper: {}\n", wrapped(f.paper, 79, 19));
        if (!f.holds && !f.why_not.empty()) out += fmt::format("            why:   {}\n", wrapped(f.why_not, 79, 19));
    }
    for (const refusal& f : r.data.refusals)
        out += fmt::format("  {} under {}: {}\n", f.spec.workload, f.spec.policy,
                           f.reason.empty() ? "accepted" : "refused — " + f.reason);
    out += fmt::format("\nTraces and lesson.json: {}\n", r.dir.string());
    return out;
}

}   // namespace pipescope::lessons
