// Reading the run metadata (metadata.hpp).
#include <pipescope/analysis/metadata.hpp>

#include <pipescope/trace/run_metadata.hpp>

#include <exception>
#include <string>

namespace pipescope::analysis {

bool is_serial_kind(std::string_view kind) { return kind.find("serial") != std::string_view::npos || kind == "stage_wait"; }

namespace {

// "12", "2^40" at s[i...]; advances i.
std::optional<std::uint64_t> term(std::string_view s, std::size_t& i) {
    const std::size_t b = i;
    std::uint64_t v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') v = v * 10 + static_cast<std::uint64_t>(s[i++] - '0');
    if (i == b) return std::nullopt;
    if (i < s.size() && s[i] == '^') {
        std::size_t k = i + 1;
        std::uint64_t e = 0;
        while (k < s.size() && s[k] >= '0' && s[k] <= '9') e = e * 10 + static_cast<std::uint64_t>(s[k++] - '0');
        if (k == i + 1 || e > 63) return v;   // not an exponent: the number alone
        i = k;
        std::uint64_t p = 1;
        for (std::uint64_t n = 0; n < e; ++n) p *= v;
        v = p;
    }
    return v;
}

// Whether the text after a stage number continues the number as a formula: an operator with spaces
// around it (" + r", " - 1") or something glued to the number ("·i", "w"); a separator (" · ", ": ",
// ", ", ")") or the end of the name ends the number.
bool continues_as_formula(std::string_view rest) {
    if (rest.empty() || rest.substr(0, 4) == " \xC2\xB7 ") return false;
    for (std::string_view op : {" + ", " - ", " * ", " / "})
        if (rest.substr(0, op.size()) == op) return true;
    return rest[0] != ' ' && rest[0] != ':' && rest[0] != ',' && rest[0] != ')';
}

}   // namespace

std::optional<std::uint64_t> stage_number_of_name(std::string_view name, bool* all_from, bool* formula) {
    if (all_from) *all_from = false;
    if (formula) *formula = false;
    if (!vocab::starts_with(name, vocab::stage_prefix)) return std::nullopt;
    std::size_t i = vocab::stage_prefix.size();
    if (i < name.size() && name[i] == 'j') {
        for (std::string_view op : {std::string_view("\xE2\x89\xA5"), std::string_view(">=")}) {
            const auto p = name.find(op, i);
            if (p == std::string_view::npos) continue;
            std::size_t k = p + op.size();
            while (k < name.size() && name[k] == ' ') ++k;
            if (auto v = term(name, k)) {
                if (all_from) *all_from = true;
                return v;
            }
        }
        return std::nullopt;
    }
    auto v = term(name, i);
    if (!v) return std::nullopt;
    if (name.substr(i, 3) == " + ") {
        std::size_t k = i + 3;
        if (auto w = term(name, k)) {
            *v += *w;
            i = k;
        }
    }
    // x264's "stage 1 + w·i + r · …" names many stage numbers at once (seed 001 §3): its leading 1 is
    // not the stage it describes.
    if (continues_as_formula(name.substr(i))) {
        if (formula) *formula = true;
        return std::nullopt;
    }
    return v;
}

namespace {

std::optional<double> as_double(const std::optional<std::uint64_t>& v) {
    return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
}

// A stage graph's queues: every field optional.
void read_graph_queues(const std::vector<trace::run_queue>& queues, run_meta& out) {
    for (const trace::run_queue& q : queues) {
        queue_meta m;
        m.index = q.index.value_or(out.queues.size());
        m.name = q.name;
        m.counter = q.counter;
        m.capacity_packets = as_double(q.capacity_packets).value_or(0);
        m.packet_elements = as_double(q.packet_elements).value_or(0);
        m.element_bytes = as_double(q.element_bytes).value_or(0);
        m.ordered = q.ordered;
        m.backward = q.backward;
        m.unbounded = q.unbounded;
        m.producers = q.producers;
        m.consumer = q.consumer;
        out.queues.push_back(std::move(m));
    }
}

// A pipeline's queue capacities: of all queues, and of each stage's input queue (a stage entry's
// own, or a queue entry {"stage" | "index": j, "capacity": C}).
void read_pipeline_queues(const trace::run_program& prog, run_meta& out) {
    if (prog.queue_capacity) out.queue_capacity = prog.queue_capacity;
    else if (prog.queue_size) out.queue_capacity = prog.queue_size;
    if (prog.stages)
        for (std::size_t k = 0; k < prog.stages->size() && k < out.stages.size(); ++k) {
            out.stages[k].threads = as_double((*prog.stages)[k].threads);
            out.stages[k].queue_capacity = (*prog.stages)[k].queue_capacity;
        }
    if (prog.queues)
        for (const trace::run_queue& q : *prog.queues) {
            const std::optional<std::uint64_t> stage = q.stage ? q.stage : q.index;
            if (!q.capacity || !stage) continue;
            for (auto& s : out.stages)
                if (s.index == *stage) s.queue_capacity = q.capacity;
        }
}

// What the trace model read of the run: its workload, policy, K, stages and workers.
void read_model_run(const tm::run& r, const run_scope& scope, run_meta& out) {
    out.workload = r.workload;
    out.policy = r.policy;
    out.K = r.dag.K;
    for (const auto& s : r.stages) {
        stage_meta sm;
        sm.index = s.index;
        sm.name = s.name;
        sm.kind = s.kind;
        if (auto n = stage_number_of_name(s.name, &sm.all_from)) sm.index = *n;
        out.stages.push_back(std::move(sm));
    }
    out.workers = r.declared_workers ? r.declared_workers : scope.workers.size();
}

// "params": "key=value" strings (an entry without "=" says nothing).
void read_params(const std::vector<std::string>& params, run_meta& out) {
    for (const std::string& t : params)
        if (const auto eq = t.find('='); eq != std::string::npos) out.params[t.substr(0, eq)] = t.substr(eq + 1);
}

// The run's own fields: size, who recorded it, workers, the serial reference, virtual workers,
// the trace's detail, the parameters.
void read_run_fields(const trace::run_metadata& meta, run_meta& out) {
    out.size = meta.size.value_or("");
    out.recorded_by = meta.recorded_by.value_or("");
    if (meta.workers && *meta.workers >= 1) out.workers = *meta.workers;
    out.reference_seconds = meta.reference_seconds;
    if (out.reference_seconds && *out.reference_seconds <= 0) out.reference_seconds.reset();
    if (meta.virtual_run) {
        virtual_meta vm;
        vm.workers = meta.virtual_run->workers.value_or(out.workers);
        vm.job_costs = meta.virtual_run->job_costs.value_or("");
        out.virtual_run = std::move(vm);
    }
    if (meta.trace) {
        out.trace_detail = meta.trace->detail;
        out.fold_below_ns = as_double(meta.trace->fold_below_ns);
    }
    read_params(meta.params, out);
}

// A positive number in parameter `key`, or nullopt.
std::optional<double> positive_param(const run_meta& out, const char* key) {
    auto it = out.params.find(key);
    if (it == out.params.end()) return std::nullopt;
    try {
        const double v = std::stod(it->second);
        return v > 0 ? std::optional<double>(v) : std::nullopt;
    } catch (const std::exception&) {
        return std::nullopt;
    }
}

// bind-to-stage's threads per parallel stage and queue capacity: its parameters, else its defaults
// (P and 20).
void read_bound_threads(run_meta& out) {
    const bool bts = vocab::classify_policy(out.policy) == vocab::policy_family::bound_threads;
    out.threads_per_parallel_stage = positive_param(out, "c");
    if (!out.threads_per_parallel_stage && bts) out.threads_per_parallel_stage = static_cast<double>(out.workers);
    out.queue_capacity = positive_param(out, "queue");
    if (!out.queue_capacity && bts) out.queue_capacity = 20.0;
}

}   // namespace

std::string virtual_badge(const run_meta& meta) {
    if (!meta.virtual_run) return {};
    const std::uint64_t n = meta.virtual_run->workers;
    return "virtual " + std::to_string(n) + (n == 1 ? " core" : " cores");
}

const stage_meta* find_stage(const run_meta& meta, std::uint64_t j) {
    const stage_meta* range = nullptr;
    for (const auto& s : meta.stages) {
        if (!s.all_from && s.index == j) return &s;
        if (s.all_from && s.index <= j && (!range || s.index > range->index)) range = &s;
    }
    return range;
}

run_meta read_meta(const run_scope& scope) {
    run_meta out;
    const tm::run* r = scope.run_info();
    if (!r) {
        out.workers = scope.workers.size();
        return out;
    }
    read_model_run(*r, scope, out);
    if (!r->metadata_valid) return out;
    const std::optional<trace::run_metadata> meta = trace::run_metadata_from_json(r->metadata_json);
    if (!meta) return out;
    read_run_fields(*meta, out);
    read_bound_threads(out);
    if (!meta->program) return out;
    out.program_kind = meta->program->kind;
    if (out.program_kind == vocab::graph_program) {
        if (meta->program->queues) read_graph_queues(*meta->program->queues, out);
        return out;
    }
    read_pipeline_queues(*meta->program, out);
    return out;
}

}   // namespace pipescope::analysis
