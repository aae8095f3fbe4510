#include <pipescope/trace/trace_model.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <fstream>
#include <map>
#include <stdexcept>
#include <unordered_map>

namespace pipescope::trace {

const char* to_string(dag_edge_kind k) {
    switch (k) {
        case dag_edge_kind::stage: return "stage";
        case dag_edge_kind::cross: return "cross";
        case dag_edge_kind::retire: return "retire";
        case dag_edge_kind::throttle: return "throttle";
    }
    return "?";
}

const char* to_string(track_kind k) {
    switch (k) {
        case track_kind::process: return "process";
        case track_kind::thread: return "thread";
        case track_kind::counter: return "counter";
        case track_kind::line: return "line";
        case track_kind::other: return "other";
    }
    return "?";
}

std::uint32_t pipeline_dag::find(std::uint64_t iteration, std::uint64_t stage) const {
    auto it = std::lower_bound(nodes.begin(), nodes.end(), std::pair(iteration, stage), [](const dag_node& n, const auto& key) {
        return std::pair(n.iteration, n.stage) < key;
    });
    if (it == nodes.end() || it->iteration != iteration || it->stage != stage) return no_index;
    return static_cast<std::uint32_t>(it - nodes.begin());
}

namespace {

std::optional<std::uint64_t> find_uint(const trace_model& m, std::uint32_t first, std::uint16_t count, std::string_view name) {
    for (std::uint32_t i = first; i < first + count; ++i) {
        const model_arg& a = m.args[i];
        if (a.kind != arg_kind::string_value && a.kind != arg_kind::double_value && m.strings[a.name] == name) return a.bits;
    }
    return std::nullopt;
}

}  // namespace

std::uint32_t trace_model::find_track(std::uint64_t uuid) const {
    for (std::size_t i = 0; i < tracks.size(); ++i)
        if (tracks[i].uuid == uuid) return static_cast<std::uint32_t>(i);
    return no_index;
}

std::optional<std::uint64_t> trace_model::uint_arg(const slice& s, std::string_view name) const {
    return find_uint(*this, s.args_first, s.args_count, name);
}
std::optional<std::uint64_t> trace_model::uint_arg(const instant& i, std::string_view name) const {
    return find_uint(*this, i.args_first, i.args_count, name);
}
std::optional<std::string_view> trace_model::string_arg(const instant& i, std::string_view name) const {
    for (std::uint32_t k = i.args_first; k < i.args_first + i.args_count; ++k)
        if (args[k].kind == arg_kind::string_value && strings[args[k].name] == name)
            return std::string_view(strings[static_cast<std::uint32_t>(args[k].bits)]);
    return std::nullopt;
}

std::string trace_model::arg_text(const model_arg& a) const {
    switch (a.kind) {
        case arg_kind::uint_value: return std::to_string(a.bits);
        case arg_kind::int_value: return std::to_string(static_cast<std::int64_t>(a.bits));
        case arg_kind::bool_value: return a.bits ? "true" : "false";
        case arg_kind::double_value: {
            double d;
            std::memcpy(&d, &a.bits, sizeof d);
            char buf[32];
            auto r = std::to_chars(buf, buf + sizeof buf, d);
            return std::string(buf, r.ptr);
        }
        case arg_kind::string_value: return strings[static_cast<std::uint32_t>(a.bits)];
    }
    return {};
}

namespace {

// An event of a track before sorting and BEGIN/END matching: 24 bytes.
struct raw_event {
    std::uint64_t ts;
    string_id name;
    std::uint32_t args_first;
    std::uint32_t flows_first;
    std::uint16_t args_count;
    std::uint8_t flows_count;
    std::uint8_t type;
};

struct raw_flow {
    std::uint64_t id;
    std::uint64_t position;   // of the event in the file
    bool terminating;
};

struct flow_step {
    std::uint64_t ts, position, id;
    bool terminating;
    event_ref ref;
};

std::string where(const decoded_event& e) {
    if (e.compressed)
        return "byte " + std::to_string(e.offset) + " (inside the compressed packet at byte " +
               std::to_string(e.outer_offset) + "): ";
    return "byte " + std::to_string(e.offset) + ": ";
}

bool parse_suffix(const std::string& name, std::string_view prefix, int& out) {
    if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return false;
    const char* b = name.data() + prefix.size();
    const char* e = name.data() + name.size();
    unsigned v = 0;
    auto r = std::from_chars(b, e, v);
    if (r.ec != std::errc() || r.ptr != e || v > 1u << 20) return false;
    out = static_cast<int>(v);
    return true;
}

// Sorts v stably, given that it is the concatenation of the sorted runs starting at `starts`
// (starts[0] == 0): merges neighbouring runs pairwise, O(n log runs) with no comparisons inside a run.
template <class T, class Less>
void merge_sorted_runs(std::vector<T>& v, std::vector<std::size_t> starts, Less less) {
    if (starts.size() <= 1) return;
    if (starts.size() > 4096) {   // hardly sorted at all
        std::stable_sort(v.begin(), v.end(), less);
        return;
    }
    starts.push_back(v.size());
    while (starts.size() > 2) {
        std::vector<std::size_t> merged;
        merged.reserve(starts.size() / 2 + 2);
        std::size_t k = 0;
        for (; k + 2 < starts.size(); k += 2) {
            std::inplace_merge(v.begin() + starts[k], v.begin() + starts[k + 1], v.begin() + starts[k + 2], less);
            merged.push_back(starts[k]);
        }
        for (; k < starts.size(); ++k) merged.push_back(starts[k]);
        starts = std::move(merged);
    }
}

// The starts of the maximal sorted runs of v.
template <class T, class Less>
std::vector<std::size_t> sorted_runs(const std::vector<T>& v, Less less) {
    std::vector<std::size_t> starts;
    if (v.empty()) return starts;
    starts.push_back(0);
    for (std::size_t i = 1; i < v.size(); ++i)
        if (less(v[i], v[i - 1])) starts.push_back(i);
    return starts;
}

class model_builder final : public perfetto_visitor {
public:
    model_builder(trace_model& m) : m_(m) {}

    void on_packet() override { ++m_.packets; }
    void on_problem(std::string p) override { m_.problems.push_back(std::move(p)); }

    void on_track(const decoded_track& d) override {
        const std::uint32_t i = track_index(d.uuid);
        track& t = m_.tracks[i];
        t.described = true;
        t.parent_uuid = d.parent;
        t.name = strings_[d.name];
        t.pid = d.pid;
        t.tid = d.tid;
        t.kind = d.is_process ? track_kind::process
                 : d.is_thread ? track_kind::thread
                 : d.is_counter ? track_kind::counter
                                : track_kind::other;
    }

    void on_event(const decoded_event& e) override {
        ++m_.events;
        if (!seen_ts_ || e.ts < m_.first_ts) m_.first_ts = e.ts;
        if (!seen_ts_ || e.ts > m_.last_ts) m_.last_ts = e.ts;
        seen_ts_ = true;
        const std::uint32_t ti = e.track == last_uuid_ && last_index_ != no_index ? last_index_ : track_index(e.track);
        last_uuid_ = e.track;
        last_index_ = ti;
        if (e.type == 4) {
            ++m_.counter_values;
            if (!e.has_counter) {
                m_.problems.push_back(where(e) + "counter event without a value (dropped by the importer)");
                return;
            }
            if (m_.tracks[ti].kind != track_kind::counter)
                m_.problems.push_back(where(e) + "counter value on track " + std::to_string(e.track) +
                                      ", which is not a counter track (dropped by the importer)");
            counters_[ti].push_back({e.ts, e.counter()});
            return;
        }
        if (e.type < 1 || e.type > 3) {
            m_.problems.push_back(where(e) + "track event of type " + std::to_string(e.type) + " ignored");
            return;
        }
        raw_event r{};
        r.ts = e.ts;
        r.type = static_cast<std::uint8_t>(e.type);
        r.name = e.name;
        if (e.type != 2 && !e.args.empty()) {
            std::size_t n = e.args.size();
            if (n > 0xFFFF) {
                m_.problems.push_back(where(e) + "more than 65535 annotations on one event (the rest dropped)");
                n = 0xFFFF;
            }
            r.args_first = static_cast<std::uint32_t>(m_.args.size());
            r.args_count = static_cast<std::uint16_t>(n);
            for (std::size_t k = 0; k < n; ++k) m_.args.push_back({e.args[k].name, e.args[k].kind, e.args[k].bits});
        }
        const std::size_t nflows = e.flows.size() + e.terminating.size();
        if (nflows) {
            r.flows_first = static_cast<std::uint32_t>(flows_.size());
            std::size_t kept = 0;
            for (auto id : e.flows)
                if (kept++ < 255) flows_.push_back({id, e.position, false});
            for (auto id : e.terminating)
                if (kept++ < 255) flows_.push_back({id, e.position, true});
            if (kept > 255) m_.problems.push_back(where(e) + "more than 255 flow ids on one event (the rest dropped)");
            r.flows_count = static_cast<std::uint8_t>(std::min<std::size_t>(kept, 255));
        }
        raw_[ti].push_back(r);
    }

    // Reserves the annotation pool from the file's size (about one annotation per 8 bytes at most
    // for our files, fewer for compressed ones): address space only, pages are touched as used, and
    // no reallocation copies the pool while it grows.
    void reserve_for(std::size_t file_bytes) { m_.args.reserve(std::min<std::size_t>(file_bytes / 8, std::size_t{1} << 28)); }

    void finish(string_table& strings_table) {
        match_slices();
        link_flows();
        m_.strings = strings_table.take();
        find_runs();
    }

    string_table strings_;

private:
    std::uint32_t track_index(std::uint64_t uuid) {
        auto [it, inserted] = index_.try_emplace(uuid, static_cast<std::uint32_t>(m_.tracks.size()));
        if (inserted) {
            track t;
            t.uuid = uuid;
            t.described = false;
            t.name = uuid == 0 ? "global" : "track " + std::to_string(uuid);
            m_.tracks.push_back(std::move(t));
            raw_.emplace_back().reserve(1024);
            counters_.emplace_back();
        }
        return it->second;
    }

    void match_slices() {
        std::vector<std::uint32_t> open;
        for (std::size_t ti = 0; ti < m_.tracks.size(); ++ti) {
            track& t = m_.tracks[ti];
            auto& raw = raw_[ti];
            const auto by_ts = [](const raw_event& a, const raw_event& b) { return a.ts < b.ts; };
            // Our files are sorted per sequence: a track written by several sequences is a few
            // sorted runs, merged (stably: ties stay in file order).
            merge_sorted_runs(raw, sorted_runs(raw, by_ts), by_ts);
            auto& cs = counters_[ti];
            const auto c_by_ts = [](const counter_sample& a, const counter_sample& b) { return a.ts < b.ts; };
            merge_sorted_runs(cs, sorted_runs(cs, c_by_ts), c_by_ts);
            t.counters = std::move(cs);
            std::size_t begins = 0, instants = 0;
            for (const auto& r : raw) (r.type == 1 ? begins : instants) += r.type != 2;
            t.slices.reserve(begins);
            t.instants.reserve(instants);
            open.clear();
            std::uint64_t last_ts = 0;
            for (const raw_event& r : raw) {
                last_ts = r.ts;
                event_ref ref;
                if (r.type == 1) {
                    slice s;
                    s.begin = s.end = r.ts;
                    s.name = r.name;
                    s.args_first = r.args_first;
                    s.args_count = r.args_count;
                    s.depth = static_cast<std::uint16_t>(std::min<std::size_t>(open.size(), 0xFFFF));
                    t.max_depth = std::max(t.max_depth, s.depth);
                    open.push_back(static_cast<std::uint32_t>(t.slices.size()));
                    ref = {static_cast<std::uint32_t>(ti), open.back(), false};
                    t.slices.push_back(s);
                } else if (r.type == 2) {
                    if (open.empty()) {
                        ++t.unmatched_ends;
                    } else {
                        t.slices[open.back()].end = r.ts;
                        ref = {static_cast<std::uint32_t>(ti), open.back(), false};
                        open.pop_back();
                    }
                } else {
                    instant in;
                    in.ts = r.ts;
                    in.name = r.name;
                    in.args_first = r.args_first;
                    in.args_count = r.args_count;
                    in.depth = static_cast<std::uint16_t>(std::min<std::size_t>(open.size(), 0xFFFF));
                    ref = {static_cast<std::uint32_t>(ti), static_cast<std::uint32_t>(t.instants.size()), true};
                    t.instants.push_back(in);
                }
                if (r.flows_count && ref.valid())
                    for (std::uint32_t k = r.flows_first; k < r.flows_first + r.flows_count; ++k)
                        steps_.push_back({r.ts, flows_[k].position, flows_[k].id, flows_[k].terminating, ref});
            }
            for (auto i : open) {
                t.slices[i].end = last_ts;
                t.slices[i].unterminated = true;
            }
            m_.unterminated_slices += open.size();
            m_.unmatched_ends += t.unmatched_ends;
            m_.slices += t.slices.size();
            m_.instants += t.instants.size();
            raw.clear();
            raw.shrink_to_fit();
        }
    }

    void link_flows() {
        // The steps are in track order, each track's sorted by timestamp and file position.
        const auto less = [](const flow_step& a, const flow_step& b) {
            return std::tie(a.ts, a.position) < std::tie(b.ts, b.position);
        };
        merge_sorted_runs(steps_, sorted_runs(steps_, less), less);
        std::unordered_map<std::uint64_t, event_ref> active;
        for (const auto& s : steps_) {
            auto it = active.find(s.id);
            if (s.terminating) {
                if (it == active.end()) continue;   // not active: ignored, like the importer
                if (!(it->second == s.ref)) m_.flows.push_back({s.id, it->second, s.ref});
                active.erase(it);
            } else if (it == active.end()) {
                active.emplace(s.id, s.ref);
            } else {
                if (!(it->second == s.ref)) m_.flows.push_back({s.id, it->second, s.ref});
                it->second = s.ref;
            }
        }
        steps_.clear();
        steps_.shrink_to_fit();
    }

    void find_runs() {
        auto& tracks = m_.tracks;
        for (auto& t : tracks) {
            if (t.parent_uuid) {
                auto it = index_.find(t.parent_uuid);
                if (it != index_.end()) t.parent = it->second;
            }
        }
        std::map<std::int64_t, std::uint32_t> run_of_pid;
        for (std::size_t i = 0; i < tracks.size(); ++i) {
            if (tracks[i].kind != track_kind::process) continue;
            run r;
            r.track = static_cast<std::uint32_t>(i);
            r.pid = tracks[i].pid;
            r.name = tracks[i].name;
            tracks[i].run = static_cast<std::uint32_t>(m_.runs.size());
            run_of_pid.emplace(r.pid, tracks[i].run);
            m_.runs.push_back(std::move(r));
        }
        // Each other track: its own pid (threads), else its nearest ancestor's run.
        for (std::size_t i = 0; i < tracks.size(); ++i) {
            track& t = tracks[i];
            if (t.kind == track_kind::process) continue;
            if (t.kind == track_kind::thread) {
                auto it = run_of_pid.find(t.pid);
                if (it != run_of_pid.end()) t.run = it->second;
                continue;
            }
            std::uint32_t p = t.parent;
            for (int hops = 0; p != no_index && hops < 64; ++hops) {
                const track& pt = tracks[p];
                if (pt.kind == track_kind::process) {
                    t.run = pt.run;
                    break;
                }
                if (pt.kind == track_kind::thread) {
                    auto it = run_of_pid.find(pt.pid);
                    if (it != run_of_pid.end()) t.run = it->second;
                    break;
                }
                p = pt.parent;
            }
        }
        for (std::size_t i = 0; i < tracks.size(); ++i) {
            track& t = tracks[i];
            if (t.run == no_index) continue;
            run& r = m_.runs[t.run];
            r.tracks.push_back(static_cast<std::uint32_t>(i));
            int k = 0;
            if (t.kind == track_kind::thread && parse_suffix(t.name, "worker ", k)) {
                t.worker = k;
                if (r.workers.size() <= static_cast<std::size_t>(k)) r.workers.resize(k + 1, no_index);
                r.workers[k] = static_cast<std::uint32_t>(i);
            } else if (t.kind == track_kind::other && t.parent != no_index && tracks[t.parent].name == "lines" &&
                       parse_suffix(t.name, "line ", k)) {
                t.kind = track_kind::line;
                t.line = k;
                if (r.lines.size() <= static_cast<std::size_t>(k)) r.lines.resize(k + 1, no_index);
                r.lines[k] = static_cast<std::uint32_t>(i);
            }
        }
        for (run& r : m_.runs) {
            std::stable_sort(r.tracks.begin(), r.tracks.end(), [&](auto a, auto b) {
                return (a == r.track) > (b == r.track);
            });
            read_run_instant(r);
            r.dag = build_pipeline_dag(m_, r, &m_.problems);
        }
    }

    void read_run_instant(run& r) {
        const track& pt = m_.tracks[r.track];
        for (const instant& in : pt.instants) {
            if (m_.strings[in.name] != "run") continue;
            if (auto n = m_.string_arg(in, "name")) r.name = std::string(*n);
            if (auto w = m_.uint_arg(in, "workers")) r.declared_workers = *w;
            if (auto md = m_.string_arg(in, "metadata")) {
                r.metadata_json = std::string(*md);
                parse_metadata(r);
            }
            break;
        }
    }

    void parse_metadata(run& r) {
        const auto meta = nlohmann::json::parse(r.metadata_json, nullptr, false);
        if (meta.is_discarded() || !meta.is_object()) {
            m_.problems.push_back("run '" + r.name + "': its metadata annotation is not a JSON object");
            return;
        }
        r.metadata_valid = true;
        auto str = [](const nlohmann::json& j, const char* key) {
            auto it = j.find(key);
            return it != j.end() && it->is_string() ? it->get<std::string>() : std::string();
        };
        r.workload = str(meta, "workload");
        r.policy = str(meta, "policy");
        auto prog = meta.find("program");
        if (prog == meta.end() || !prog->is_object()) return;
        r.program_kind = str(*prog, "kind");
        auto K = prog->find("K");
        if (K != prog->end() && K->is_number_unsigned()) r.dag.K = K->get<std::uint64_t>();
        else if (K != prog->end() && K->is_number_integer() && K->get<std::int64_t>() > 0) r.dag.K = K->get<std::uint64_t>();
        auto stages = prog->find("stages");
        if (stages != prog->end() && stages->is_array()) {
            for (const auto& s : *stages) {
                if (!s.is_object()) continue;
                stage_info si;
                auto idx = s.find("index");
                if (idx != s.end() && idx->is_number_unsigned()) si.index = idx->get<std::uint64_t>();
                else si.index = r.stages.size();
                si.name = str(s, "name");
                si.kind = str(s, "kind");
                r.stages.push_back(std::move(si));
            }
        }
    }

    trace_model& m_;
    std::unordered_map<std::uint64_t, std::uint32_t> index_;
    std::vector<std::vector<raw_event>> raw_;
    std::vector<std::vector<counter_sample>> counters_;
    std::vector<raw_flow> flows_;
    std::vector<flow_step> steps_;
    std::uint64_t last_uuid_ = 0;
    std::uint32_t last_index_ = no_index;
    bool seen_ts_ = false;
};

}  // namespace

pipeline_dag build_pipeline_dag(const trace_model& m, const run& r, std::vector<std::string>* problems) {
    pipeline_dag dag;
    dag.K = r.dag.K;
    // The annotation names, looked up once: events refer to them by string id.
    string_id iteration_id = no_index, stage_id = no_index, waited_id = no_index;
    for (std::size_t i = 0; i < m.strings.size(); ++i) {
        if (m.strings[i] == "iteration") iteration_id = static_cast<string_id>(i);
        else if (m.strings[i] == "stage") stage_id = static_cast<string_id>(i);
        else if (m.strings[i] == "waited") waited_id = static_cast<string_id>(i);
    }
    if (iteration_id == no_index || stage_id == no_index) return dag;
    std::vector<bool> is_node_name(m.strings.size());
    for (std::size_t i = 0; i < m.strings.size(); ++i)
        is_node_name[i] = m.strings[i].size() > 6 && m.strings[i].compare(0, 6, "stage ") == 0;
    std::size_t count = 0;
    for (auto w : r.workers)
        if (w != no_index) count += m.tracks[w].slices.size();
    dag.nodes.reserve(count);
    for (std::size_t w = 0; w < r.workers.size(); ++w) {
        if (r.workers[w] == no_index) continue;
        const track& t = m.tracks[r.workers[w]];
        for (std::size_t k = 0; k < t.slices.size(); ++k) {
            const slice& s = t.slices[k];
            if (!is_node_name[s.name]) continue;
            bool has_it = false, has_stage = false;
            dag_node n;
            for (std::uint32_t a = s.args_first; a < s.args_first + s.args_count; ++a) {
                const model_arg& arg = m.args[a];
                if (arg.kind == arg_kind::string_value || arg.kind == arg_kind::double_value) continue;
                if (arg.name == iteration_id) n.iteration = arg.bits, has_it = true;
                else if (arg.name == stage_id) n.stage = arg.bits, has_stage = true;
                else if (arg.name == waited_id) n.waited = (arg.bits & 1) != 0;
            }
            if (!has_it || !has_stage) continue;
            n.start = s.begin;
            n.end = s.end;
            n.worker = static_cast<int>(w);
            n.slice = {r.workers[w], static_cast<std::uint32_t>(k), false};
            dag.nodes.push_back(n);
        }
    }
    // Sort by (iteration, stage, start). The nodes come worker by worker, each worker's in
    // iteration order: when the iterations are dense (as they are), a counting sort by iteration
    // and a sort of each iteration's nodes by (stage, start); a plain sort otherwise.
    {
        const auto less = [](const dag_node& a, const dag_node& b) {
            return std::tie(a.iteration, a.stage, a.start) < std::tie(b.iteration, b.stage, b.start);
        };
        if (!std::is_sorted(dag.nodes.begin(), dag.nodes.end(), less)) {
            std::uint64_t lo = ~std::uint64_t{0}, hi = 0;
            for (const auto& n : dag.nodes) lo = std::min(lo, n.iteration), hi = std::max(hi, n.iteration);
            if (hi - lo < 4 * dag.nodes.size() + 1024) {
                std::vector<std::uint32_t> start(static_cast<std::size_t>(hi - lo) + 2, 0);
                for (const auto& n : dag.nodes) ++start[static_cast<std::size_t>(n.iteration - lo) + 1];
                for (std::size_t i = 1; i < start.size(); ++i) start[i] += start[i - 1];
                std::vector<dag_node> sorted(dag.nodes.size());
                for (const auto& n : dag.nodes) sorted[start[static_cast<std::size_t>(n.iteration - lo)]++] = n;
                // start[i] is now the end of iteration lo + i's bucket
                std::size_t b = 0;
                for (std::size_t i = 0; i + 1 < start.size(); ++i) {
                    const std::size_t e = start[i];
                    if (e - b > 16) {   // an iteration of many nodes (from several workers)
                        std::stable_sort(sorted.begin() + b, sorted.begin() + e, less);
                        b = e;
                        continue;
                    }
                    for (std::size_t k = b + 1; k < e; ++k) {   // stable insertion sort of one bucket
                        if (!less(sorted[k], sorted[k - 1])) continue;
                        dag_node x = sorted[k];
                        std::size_t m = k;
                        for (; m > b && less(x, sorted[m - 1]); --m) sorted[m] = sorted[m - 1];
                        sorted[m] = x;
                    }
                    b = e;
                }
                dag.nodes = std::move(sorted);
            } else {
                std::stable_sort(dag.nodes.begin(), dag.nodes.end(), less);
            }
        }
    }
    // A node appears once; a second slice for the same (i, j) is reported and dropped.
    std::size_t out = 0;
    for (std::size_t i = 0; i < dag.nodes.size(); ++i) {
        if (out > 0 && dag.nodes[out - 1].iteration == dag.nodes[i].iteration && dag.nodes[out - 1].stage == dag.nodes[i].stage) {
            if (problems)
                problems->push_back("run '" + r.name + "': node (" + std::to_string(dag.nodes[i].iteration) + ", " +
                                    std::to_string(dag.nodes[i].stage) + ") appears more than once");
            continue;
        }
        dag.nodes[out++] = dag.nodes[i];
    }
    dag.nodes.resize(out);

    // Iteration ranges: iteration -> [first, last] node indices.
    struct range {
        std::uint64_t iteration;
        std::uint32_t first, last;
    };
    std::vector<range> iters;
    for (std::uint32_t i = 0; i < dag.nodes.size(); ++i) {
        if (iters.empty() || iters.back().iteration != dag.nodes[i].iteration) iters.push_back({dag.nodes[i].iteration, i, i});
        else iters.back().last = i;
    }
    dag.iterations = iters.size();
    // iteration -> its range: by index when the iterations are dense, else by binary search.
    const std::uint64_t it_lo = iters.empty() ? 0 : iters.front().iteration;
    const bool dense = !iters.empty() && iters.back().iteration - it_lo < 4 * iters.size() + 1024;
    std::vector<std::uint32_t> iter_index;
    if (dense) {
        iter_index.assign(static_cast<std::size_t>(iters.back().iteration - it_lo) + 1, no_index);
        for (std::uint32_t k = 0; k < iters.size(); ++k) iter_index[static_cast<std::size_t>(iters[k].iteration - it_lo)] = k;
    }
    auto find_iter = [&](std::uint64_t it) -> const range* {
        if (dense) {
            if (it < it_lo || it - it_lo >= iter_index.size()) return nullptr;
            const std::uint32_t k = iter_index[static_cast<std::size_t>(it - it_lo)];
            return k == no_index ? nullptr : &iters[k];
        }
        auto p = std::lower_bound(iters.begin(), iters.end(), it, [](const range& a, std::uint64_t v) { return a.iteration < v; });
        return p != iters.end() && p->iteration == it ? &*p : nullptr;
    };
    dag.edges.reserve(dag.nodes.size() * 2);
    for (const range& cur : iters) {
        const range* prev = cur.iteration > 0 ? find_iter(cur.iteration - 1) : nullptr;
        const range* throttler = dag.K && cur.iteration >= dag.K ? find_iter(cur.iteration - dag.K) : nullptr;
        // The node of i-1 that holds stage j: its last node with stage <= j. Stages ascend in both
        // iterations, so one pointer walks i-1's nodes once (not once per node of i).
        std::uint32_t holder = no_index;   // last node of i-1 with stage <= the current node's stage
        std::uint32_t next_p = prev ? prev->first : 0;
        for (std::uint32_t i = cur.first; i <= cur.last; ++i) {
            if (i > cur.first) dag.edges.push_back({i - 1, i, dag_edge_kind::stage});
            std::uint32_t cross_from = no_index;
            if (dag.nodes[i].waited && prev) {
                while (next_p <= prev->last && dag.nodes[next_p].stage <= dag.nodes[i].stage) holder = next_p++;
                cross_from = holder;
                if (cross_from != no_index) dag.edges.push_back({cross_from, i, dag_edge_kind::cross});
            }
            if (i == cur.last && prev && cross_from != prev->last) dag.edges.push_back({prev->last, i, dag_edge_kind::retire});
            if (i == cur.first && throttler) dag.edges.push_back({throttler->last, i, dag_edge_kind::throttle});
        }
    }
    return dag;
}

trace_model load_trace(std::string_view bytes, const read_options& options) {
    trace_model m;
    model_builder b(m);
    b.reserve_for(bytes.size());
    decode_perfetto(bytes, b, b.strings_, options);
    b.finish(b.strings_);
    return m;
}

trace_model load_trace_file(const std::filesystem::path& path, const read_options& options, std::uint64_t max_bytes) {
    std::error_code ec;
    const auto status = std::filesystem::status(path, ec);
    if (ec || !std::filesystem::exists(status)) throw std::runtime_error(path.string() + ": cannot open (no such file)");
    if (std::filesystem::is_directory(status)) throw std::runtime_error(path.string() + ": is a directory, not a trace file");
    std::ifstream in(path, std::ios::binary);
    if (!in) throw std::runtime_error(path.string() + ": cannot open for reading");
    in.seekg(0, std::ios::end);
    const std::streamoff size = in.tellg();
    if (size < 0) throw std::runtime_error(path.string() + ": cannot determine its size");
    if (static_cast<std::uint64_t>(size) > max_bytes)
        throw std::runtime_error(path.string() + ": " + std::to_string(size) + " bytes is larger than the limit of " +
                                 std::to_string(max_bytes) + " bytes");
    in.seekg(0, std::ios::beg);
    std::string bytes(static_cast<std::size_t>(size), '\0');
    if (!in.read(bytes.data(), size)) throw std::runtime_error(path.string() + ": read error");
    return load_trace(bytes, options);
}

}  // namespace pipescope::trace
