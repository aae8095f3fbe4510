// pipescope-run/1 to and from JSON (run_metadata.hpp).
#include <pipescope/trace/run_metadata.hpp>

#include <nlohmann/json.hpp>

#include <cmath>

namespace pipescope::trace {

namespace {

using json = nlohmann::json;

// ---- writing ----

template <class T>
void put(json& j, const char* key, const std::optional<T>& v) {
    if (v) j[key] = *v;
}

json stage_json(const run_stage& s) {
    json j = {{"name", s.name}, {"kind", s.kind}, {"note", s.note}};
    put(j, "index", s.index);
    put(j, "threads", s.threads);
    put(j, "queue_capacity", s.queue_capacity);
    return j;
}

json queue_json(const run_queue& q) {
    json j = {{"name", q.name},           {"ordered", q.ordered},     {"backward", q.backward},
              {"unbounded", q.unbounded}, {"producers", q.producers}, {"counter", q.counter}};
    put(j, "index", q.index);
    put(j, "element_bytes", q.element_bytes);
    put(j, "packet_elements", q.packet_elements);
    put(j, "capacity_packets", q.capacity_packets);
    put(j, "consumer", q.consumer);
    put(j, "stage", q.stage);
    put(j, "capacity", q.capacity);
    return j;
}

template <class T, class ToJson>
json list_json(const std::vector<T>& items, ToJson to) {
    json a = json::array();
    for (const T& item : items) a.push_back(to(item));
    return a;
}

json program_json(const run_program& p) {
    json j = {{"kind", p.kind}, {"shape", p.shape}};
    if (p.stages) j["stages"] = list_json(*p.stages, stage_json);
    if (p.queues) j["queues"] = list_json(*p.queues, queue_json);
    put(j, "footprint", p.footprint);
    put(j, "K", p.K);
    put(j, "c", p.c);
    put(j, "queue", p.queue);
    put(j, "lazy_enabling", p.lazy_enabling);
    put(j, "dependency_folding", p.dependency_folding);
    put(j, "queue_capacity", p.queue_capacity);
    put(j, "queue_size", p.queue_size);
    return j;
}

json cost_file_json(const cost_file_use& f) { return {{"file", f.file}, {"costs_ns", f.costs_ns}}; }

json node_costs_json(const node_costs_use& n) {
    json j = json::object();
    if (const auto& r = n.recording) {
        j = {{"trace", r->trace},
             {"run", r->run},
             {"policy", r->policy},
             {"nodes", r->nodes},
             {"folded_nodes", r->folded_nodes},
             {"total_ns", r->total_ns}};
    }
    put(j, "charged", n.charged);
    return j;
}

json virtual_json(const run_virtual& v) {
    json j = json::object();
    put(j, "workers", v.workers);
    put(j, "job_costs", v.job_costs);
    put(j, "costs_ns", v.costs_ns);
    if (v.calibration) j["calibration"] = v.calibration->file ? cost_file_json(*v.calibration->file) : json(nullptr);
    if (v.cost_file) j["cost_file"] = cost_file_json(*v.cost_file);
    put(j, "params_ns", v.params_ns);
    if (v.node_costs) j["node_costs"] = node_costs_json(*v.node_costs);
    return j;
}

json metadata_json(const run_metadata& m) {
    json j = {{"format", m.format}, {"workload", m.workload}, {"policy", m.policy}, {"params", m.params}};
    put(j, "workers", m.workers);
    put(j, "size", m.size);
    put(j, "seed", m.seed);
    put(j, "recorded_by", m.recorded_by);
    put(j, "reference_seconds", m.reference_seconds);
    if (m.trace) {
        json& t = j["trace"] = {{"detail", m.trace->detail}};
        put(t, "fold_below_ns", m.trace->fold_below_ns);
        put(t, "counter_quantum_ns", m.trace->counter_quantum_ns);
    }
    if (m.program) j["program"] = program_json(*m.program);
    if (m.machine) {
        json& mj = j["machine"] = {{"hardware_threads", m.machine->hardware_threads}};
        put(mj, "cpu", m.machine->cpu);
        put(mj, "kernel", m.machine->kernel);
    }
    if (m.virtual_run) j["virtual"] = virtual_json(*m.virtual_run);
    for (const auto& [key, text] : m.other) j[key] = json::parse(text, nullptr, false);
    return j;
}

// ---- reading ----

const char* type_name(const json& j) {
    switch (j.type()) {
        case json::value_t::null: return "null";
        case json::value_t::boolean: return "a boolean";
        case json::value_t::string: return "a string";
        case json::value_t::array: return "an array";
        case json::value_t::object: return "an object";
        default: return "a number";
    }
}

// A whole number: a non-negative integer, or a float without a fraction (4.0).
std::optional<std::uint64_t> whole_number(const json& v) {
    if (v.is_number_unsigned()) return v.get<std::uint64_t>();
    if (!v.is_number_float()) return std::nullopt;
    const double d = v.get<double>();
    if (!std::isfinite(d) || d < 0 || d != std::floor(d) || d >= 18446744073709551616.0) return std::nullopt;
    return static_cast<std::uint64_t>(d);
}

// The members of one JSON object, read tolerantly: what is absent or null is unset, what has the
// wrong type is unset and named in the problems ("program.K: expected a whole number, got -1").
class fields {
public:
    fields(const json& obj, std::string path, std::vector<std::string>* problems)
        : obj_(obj), path_(std::move(path)), problems_(problems) {}

    std::string at(std::string_view key) const { return path_.empty() ? std::string(key) : path_ + "." + std::string(key); }
    void problem(const std::string& where, const std::string& what) const {
        if (problems_) problems_->push_back(where + ": " + what);
    }
    std::vector<std::string>* problems() const { return problems_; }

    bool has(const char* key) const { return obj_.contains(key); }
    // The member, or nullptr when absent or null.
    const json* find(const char* key) const {
        const auto it = obj_.find(key);
        return it == obj_.end() || it->is_null() ? nullptr : &*it;
    }
    // The member if it has the type `is` checks, else nullptr (a problem when present).
    const json* typed(const char* key, bool (json::*is)() const noexcept, const char* expected) const {
        const json* v = find(key);
        if (v && !((*v).*is)()) {
            wrong(at(key), expected, *v);
            return nullptr;
        }
        return v;
    }
    void wrong(const std::string& where, const char* expected, const json& got) const {
        problem(where, std::string("expected ") + expected + ", got " + (got.is_number() ? got.dump() : type_name(got)));
    }

    std::optional<std::string> text(const char* key) const {
        const json* v = typed(key, &json::is_string, "a string");
        return v ? std::optional<std::string>(v->get<std::string>()) : std::nullopt;
    }
    std::optional<double> number(const char* key) const {
        const json* v = typed(key, &json::is_number, "a number");
        return v ? std::optional<double>(v->get<double>()) : std::nullopt;
    }
    std::optional<bool> flag(const char* key) const {
        const json* v = typed(key, &json::is_boolean, "true or false");
        return v ? std::optional<bool>(v->get<bool>()) : std::nullopt;
    }
    std::optional<std::uint64_t> whole(const char* key) const {
        const json* v = find(key);
        if (!v) return std::nullopt;
        const auto n = whole_number(*v);
        if (!n) wrong(at(key), "a whole number", *v);
        return n;
    }
    const json* array(const char* key) const { return typed(key, &json::is_array, "an array"); }
    const json* object(const char* key) const { return typed(key, &json::is_object, "an object"); }

private:
    const json& obj_;
    std::string path_;
    std::vector<std::string>* problems_;
};

// The object entries of array member `key`, each read by `read`; nullopt if there is no such array.
template <class Read>
auto read_list(const fields& f, const char* key, Read read)
    -> std::optional<std::vector<decltype(read(std::declval<const fields&>()))>> {
    const json* a = f.array(key);
    if (!a) return std::nullopt;
    std::vector<decltype(read(std::declval<const fields&>()))> out;
    for (std::size_t i = 0; i < a->size(); ++i) {
        const std::string where = f.at(key) + "[" + std::to_string(i) + "]";
        if (!(*a)[i].is_object()) f.wrong(where, "an object", (*a)[i]);
        else out.push_back(read(fields((*a)[i], where, f.problems())));
    }
    return out;
}

run_stage read_stage(const fields& f) {
    run_stage s;
    s.index = f.whole("index");
    s.name = f.text("name").value_or("");
    s.kind = f.text("kind").value_or("");
    s.note = f.text("note").value_or("");
    s.threads = f.whole("threads");
    s.queue_capacity = f.number("queue_capacity");
    if (!s.queue_capacity) s.queue_capacity = f.number("capacity");
    return s;
}

run_queue read_queue(const fields& f) {
    run_queue q;
    q.index = f.whole("index");
    q.name = f.text("name").value_or("");
    q.element_bytes = f.whole("element_bytes");
    q.packet_elements = f.whole("packet_elements");
    q.capacity_packets = f.whole("capacity_packets");
    q.ordered = f.flag("ordered").value_or(false);
    q.backward = f.flag("backward").value_or(false);
    q.unbounded = f.flag("unbounded").value_or(false);
    if (const json* producers = f.array("producers"))
        for (std::size_t i = 0; i < producers->size(); ++i) {
            if (const auto p = whole_number((*producers)[i])) q.producers.push_back(*p);
            else f.wrong(f.at("producers") + "[" + std::to_string(i) + "]", "a whole number", (*producers)[i]);
        }
    q.consumer = f.whole("consumer");
    q.counter = f.text("counter").value_or("");
    q.stage = f.whole("stage");
    q.capacity = f.number("capacity");
    return q;
}

run_program read_program(const fields& f) {
    run_program p;
    p.kind = f.text("kind").value_or("");
    p.shape = f.text("shape").value_or("");
    p.stages = read_list(f, "stages", read_stage);
    p.queues = read_list(f, "queues", read_queue);
    p.footprint = f.text("footprint");
    p.K = f.whole("K");
    p.c = f.whole("c");
    p.queue = f.whole("queue");
    p.lazy_enabling = f.flag("lazy_enabling");
    p.dependency_folding = f.flag("dependency_folding");
    p.queue_capacity = f.number("queue_capacity");
    p.queue_size = f.number("queue_size");
    return p;
}

std::optional<cost_table> read_costs(const fields& f, const char* key) {
    const json* o = f.object(key);
    if (!o) return std::nullopt;
    cost_table out;
    for (const auto& [name, value] : o->items()) {
        if (const auto ns = whole_number(value)) out[name] = *ns;
        else f.wrong(f.at(key) + "." + name, "a whole number", value);
    }
    return out;
}

cost_file_use read_cost_file(const fields& f) {
    return {f.text("file").value_or(""), read_costs(f, "costs_ns").value_or(cost_table{})};
}

node_costs_use read_node_costs(const fields& f) {
    node_costs_use n;
    if (f.has("trace")) {
        node_cost_recording r;
        r.trace = f.text("trace").value_or("");
        r.run = f.text("run").value_or("");
        r.policy = f.text("policy").value_or("");
        r.nodes = f.whole("nodes").value_or(0);
        r.folded_nodes = f.whole("folded_nodes").value_or(0);
        r.total_ns = f.whole("total_ns").value_or(0);
        n.recording = std::move(r);
    }
    n.charged = f.text("charged");
    return n;
}

// An object member read by `read`, or nullopt.
template <class Read>
auto read_object(const fields& f, const char* key, Read read) -> std::optional<decltype(read(f))> {
    const json* o = f.object(key);
    if (!o) return std::nullopt;
    return read(fields(*o, f.at(key), f.problems()));
}

run_virtual read_virtual(const fields& f) {
    run_virtual v;
    v.workers = f.whole("workers");
    v.job_costs = f.text("job_costs");
    v.costs_ns = read_costs(f, "costs_ns");
    if (f.has("calibration") && !f.find("calibration")) v.calibration = calibration_use{};   // null: none found
    else if (auto file = read_object(f, "calibration", read_cost_file)) v.calibration = calibration_use{std::move(file)};
    v.cost_file = read_object(f, "cost_file", read_cost_file);
    v.params_ns = read_costs(f, "params_ns");
    v.node_costs = read_object(f, "node_costs", read_node_costs);
    return v;
}

// The serial reference's time under its name or an older one (run_metadata::reference_seconds).
std::optional<double> read_reference_seconds(const fields& f) {
    for (const char* key : {"reference_seconds", "serial_seconds", "T_S"})
        if (auto s = f.number(key)) return s;
    if (const json* ref = f.object("reference")) {
        const fields r(*ref, f.at("reference"), f.problems());
        for (const char* key : {"seconds", "reference_seconds", "serial_seconds"})
            if (auto s = r.number(key)) return s;
    }
    return std::nullopt;
}

// "params": ["K=2", ...], or an object {"K": 2, ...} read as "K=2".
std::vector<std::string> read_params(const fields& f) {
    std::vector<std::string> out;
    const json* p = f.find("params");
    if (p && p->is_array()) {
        for (std::size_t i = 0; i < p->size(); ++i) {
            if ((*p)[i].is_string()) out.push_back((*p)[i].get<std::string>());
            else f.wrong(f.at("params") + "[" + std::to_string(i) + "]", "a string", (*p)[i]);
        }
    } else if (p && p->is_object()) {
        for (const auto& [key, value] : p->items())
            out.push_back(key + "=" + (value.is_string() ? value.get<std::string>() : value.dump()));
    } else if (p) {
        f.wrong(f.at("params"), "an array", *p);
    }
    return out;
}

run_trace_settings read_trace_settings(const fields& f) {
    return {f.text("detail").value_or(""), f.whole("fold_below_ns"), f.whole("counter_quantum_ns")};
}

run_machine read_machine(const fields& f) {
    return {f.text("cpu"), f.whole("hardware_threads").value_or(0), f.text("kernel")};
}

run_metadata read_metadata(const fields& f) {
    run_metadata m;
    m.format = f.text("format").value_or("");
    m.workload = f.text("workload").value_or("");
    m.policy = f.text("policy").value_or("");
    m.workers = f.whole("workers");
    m.size = f.text("size");
    m.seed = f.whole("seed");
    m.recorded_by = f.text("recorded_by");
    m.reference_seconds = read_reference_seconds(f);
    m.params = read_params(f);
    m.trace = read_object(f, "trace", read_trace_settings);
    m.program = read_object(f, "program", read_program);
    m.machine = read_object(f, "machine", read_machine);
    m.virtual_run = read_object(f, "virtual", read_virtual);
    return m;
}

// The top-level members read_metadata reads (reference_seconds under its older names too).
bool is_known_member(std::string_view key) {
    for (std::string_view known :
         {"format", "workload", "policy", "workers", "size", "seed", "recorded_by", "reference_seconds", "serial_seconds",
          "T_S", "reference", "params", "trace", "program", "machine", "virtual"})
        if (key == known) return true;
    return false;
}

// The text as a JSON object, or nullopt (a problem named `what`).
std::optional<json> parse_object(std::string_view text, const char* what, std::vector<std::string>* problems) {
    json j = json::parse(text.begin(), text.end(), nullptr, false);
    if (j.is_discarded() || !j.is_object()) {
        if (problems) problems->push_back(std::string(what) + ": not a JSON object");
        return std::nullopt;
    }
    return j;
}

}   // namespace

std::string to_json(const run_metadata& m) { return metadata_json(m).dump(); }
std::string to_json(const run_program& p) { return program_json(p).dump(); }

std::optional<run_metadata> run_metadata_from_json(std::string_view text, std::vector<std::string>* problems) {
    const auto j = parse_object(text, "metadata", problems);
    if (!j) return std::nullopt;
    run_metadata m = read_metadata(fields(*j, "", problems));
    for (const auto& [key, value] : j->items())
        if (!is_known_member(key)) m.other[key] = value.dump();
    return m;
}

std::optional<run_program> run_program_from_json(std::string_view text, std::vector<std::string>* problems) {
    const auto j = parse_object(text, "program", problems);
    if (!j) return std::nullopt;
    return read_program(fields(*j, "program", problems));
}

}   // namespace pipescope::trace
