// Reading the run metadata (metadata.hpp).
#include <pipescope/analysis/metadata.hpp>

#include <nlohmann/json.hpp>

#include <exception>
#include <string>

namespace pipescope::analysis {

namespace {

std::optional<double> number(const nlohmann::json& j, const char* key) {
    if (!j.is_object()) return std::nullopt;
    auto it = j.find(key);
    if (it == j.end() || !it->is_number()) return std::nullopt;
    return it->get<double>();
}

std::string text(const nlohmann::json& j, const char* key) {
    if (!j.is_object()) return {};
    auto it = j.find(key);
    return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
}

}   // namespace

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

// A stage graph's queues: every field optional, a malformed entry skipped.
void read_graph_queues(const nlohmann::json& prog, run_meta& out) {
    auto queues = prog.find("queues");
    if (queues == prog.end() || !queues->is_array()) return;
    for (const auto& q : *queues) {
        if (!q.is_object()) continue;
        queue_meta m;
        m.index = static_cast<std::uint64_t>(number(q, "index").value_or(static_cast<double>(out.queues.size())));
        m.name = text(q, "name");
        m.counter = text(q, "counter");
        m.capacity_packets = number(q, "capacity_packets").value_or(0);
        m.packet_elements = number(q, "packet_elements").value_or(0);
        m.element_bytes = number(q, "element_bytes").value_or(0);
        auto flag = [&](const char* key) { return q.contains(key) && q[key].is_boolean() && q[key].get<bool>(); };
        m.ordered = flag("ordered");
        m.backward = flag("backward");
        m.unbounded = flag("unbounded");
        if (auto p = q.find("producers"); p != q.end() && p->is_array())
            for (const auto& v : *p)
                if (v.is_number_unsigned()) m.producers.push_back(v.get<std::uint64_t>());
        if (auto c = number(q, "consumer"); c && *c >= 0) m.consumer = static_cast<std::uint64_t>(*c);
        out.queues.push_back(std::move(m));
    }
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
    out.workload = r->workload;
    out.policy = r->policy;
    out.K = r->dag.K;
    for (const auto& s : r->stages) {
        stage_meta sm;
        sm.index = s.index;
        sm.name = s.name;
        sm.kind = s.kind;
        if (auto n = stage_number_of_name(s.name, &sm.all_from)) sm.index = *n;
        out.stages.push_back(std::move(sm));
    }
    out.workers = r->declared_workers ? r->declared_workers : scope.workers.size();
    if (!r->metadata_valid) return out;
    const auto meta = nlohmann::json::parse(r->metadata_json, nullptr, false);
    if (meta.is_discarded() || !meta.is_object()) return out;
    out.size = text(meta, "size");
    out.recorded_by = text(meta, "recorded_by");
    if (auto w = number(meta, "workers"); w && *w >= 1) out.workers = static_cast<std::uint64_t>(*w);
    for (const char* key : {"reference_seconds", "serial_seconds", "T_S"})
        if (!out.reference_seconds) out.reference_seconds = number(meta, key);
    if (!out.reference_seconds && meta.contains("reference"))
        for (const char* key : {"seconds", "reference_seconds", "serial_seconds"})
            if (!out.reference_seconds) out.reference_seconds = number(meta["reference"], key);
    if (out.reference_seconds && *out.reference_seconds <= 0) out.reference_seconds.reset();
    if (auto v = meta.find("virtual"); v != meta.end() && v->is_object()) {
        virtual_meta vm;
        vm.workers = static_cast<std::uint64_t>(number(*v, "workers").value_or(static_cast<double>(out.workers)));
        vm.job_costs = text(*v, "job_costs");
        out.virtual_run = std::move(vm);
    }
    if (auto tr = meta.find("trace"); tr != meta.end() && tr->is_object()) {
        out.trace_detail = text(*tr, "detail");
        out.fold_below_ns = number(*tr, "fold_below_ns");
    }
    if (auto p = meta.find("params"); p != meta.end()) {
        if (p->is_array()) {
            for (const auto& kv : *p) {
                if (!kv.is_string()) continue;
                const std::string t = kv.get<std::string>();
                const auto eq = t.find('=');
                if (eq != std::string::npos) out.params[t.substr(0, eq)] = t.substr(eq + 1);
            }
        } else if (p->is_object()) {
            for (auto it = p->begin(); it != p->end(); ++it)
                out.params[it.key()] = it->is_string() ? it->get<std::string>() : it->dump();
        }
    }
    auto param = [&](const char* key) -> std::optional<double> {
        auto it = out.params.find(key);
        if (it == out.params.end()) return std::nullopt;
        try {
            const double v = std::stod(it->second);
            return v > 0 ? std::optional<double>(v) : std::nullopt;
        } catch (const std::exception&) {
            return std::nullopt;
        }
    };
    const bool bts = vocab::classify_policy(out.policy) == vocab::policy_family::bound_threads;
    out.threads_per_parallel_stage = param("c");
    if (!out.threads_per_parallel_stage && bts) out.threads_per_parallel_stage = static_cast<double>(out.workers);
    out.queue_capacity = param("queue");
    if (!out.queue_capacity && bts) out.queue_capacity = 20.0;
    auto prog = meta.find("program");
    if (prog == meta.end() || !prog->is_object()) return out;
    out.program_kind = text(*prog, "kind");
    if (out.program_kind == vocab::graph_program) {
        read_graph_queues(*prog, out);
        return out;
    }
    if (auto q = number(*prog, "queue_capacity")) out.queue_capacity = q;
    else if (auto q2 = number(*prog, "queue_size")) out.queue_capacity = q2;
    auto stages = prog->find("stages");
    if (stages != prog->end() && stages->is_array()) {
        std::size_t k = 0;
        for (const auto& s : *stages) {
            if (!s.is_object()) continue;
            if (k < out.stages.size()) {
                out.stages[k].threads = number(s, "threads");
                out.stages[k].queue_capacity = number(s, "queue_capacity");
                if (!out.stages[k].queue_capacity) out.stages[k].queue_capacity = number(s, "capacity");
            }
            ++k;
        }
    }
    auto queues = prog->find("queues");   // [{"index"|"stage": j, "capacity": C}, ...]
    if (queues != prog->end() && queues->is_array()) {
        for (const auto& q : *queues) {
            auto cap = number(q, "capacity");
            auto idx = number(q, "stage");
            if (!idx) idx = number(q, "index");
            if (!cap || !idx) continue;
            for (auto& s : out.stages)
                if (static_cast<double>(s.index) == *idx) s.queue_capacity = cap;
        }
    }
    return out;
}

}   // namespace pipescope::analysis
