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

bool is_serial_kind(const std::string& kind) { return kind.find("serial") != std::string::npos || kind == "stage_wait"; }

namespace {

// "2^40", "12" at s[i...]; advances i.
std::optional<std::uint64_t> term(const std::string& s, std::size_t& i) {
    std::size_t b = i;
    std::uint64_t v = 0;
    while (i < s.size() && s[i] >= '0' && s[i] <= '9') v = v * 10 + static_cast<std::uint64_t>(s[i++] - '0');
    if (i == b) return std::nullopt;
    if (i < s.size() && s[i] == '^') {
        ++i;
        const std::size_t e = i;
        std::uint64_t x = 0;
        while (i < s.size() && s[i] >= '0' && s[i] <= '9') x = x * 10 + static_cast<std::uint64_t>(s[i++] - '0');
        if (i == e || x > 63) return std::nullopt;
        std::uint64_t p = 1;
        for (std::uint64_t k = 0; k < x; ++k) p *= v;
        v = p;
    }
    return v;
}

// The stage number a metadata stage name gives ("stage 2^40 + 1 · write" -> 2^40 + 1); for
// "stage j ≥ N …" / "stage j >= N …", N with all_from set.
std::optional<std::uint64_t> stage_number(const std::string& name, bool& all_from) {
    all_from = false;
    if (!vocab::starts_with(name, vocab::stage_prefix)) return std::nullopt;
    std::size_t i = vocab::stage_prefix.size();
    if (i < name.size() && name[i] == 'j') {
        for (const char* op : {"\xE2\x89\xA5", ">="}) {
            const auto p = name.find(op, i);
            if (p == std::string::npos) continue;
            std::size_t k = p + std::string(op).size();
            while (k < name.size() && name[k] == ' ') ++k;
            if (auto v = term(name, k)) {
                all_from = true;
                return v;
            }
        }
        return std::nullopt;
    }
    auto v = term(name, i);
    if (!v) return std::nullopt;
    if (name.compare(i, 3, " + ") == 0) {
        std::size_t k = i + 3;
        if (auto w = term(name, k)) return *v + *w;
    }
    return v;
}

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
        if (auto n = stage_number(s.name, sm.all_from)) sm.index = *n;
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
