#include "stage_graph.hpp"
#include "viewport.hpp"

#include <pipescope/trace/run_metadata.hpp>

#include <algorithm>
#include <cmath>
#include <map>

namespace pipescope::viewer {

namespace {

// A count from a capacity another writer gave as any number: nullopt if negative or not finite.
std::optional<std::uint64_t> count_of(const std::optional<double>& v) {
    if (!v || *v < 0 || !std::isfinite(*v)) return std::nullopt;
    return static_cast<std::uint64_t>(std::llround(*v));
}

// Stage k -> stage k+1, with bind-to-stage's queue in front of every stage but the first, and each
// stage's buffer counter for the policies that record one.
void link_chain(program_structure& p) {
    const auto family = vocab::classify_policy(p.policy);
    const bool bts = family == vocab::policy_family::bound_threads;
    for (std::uint32_t k = 0; k + 1 < p.stages.size(); ++k) {
        graph_edge e;
        e.from = k;
        e.to = k + 1;
        const graph_stage& to = p.stages[k + 1];
        if ((bts || p.queue) && !to.all_from && !to.formula) {
            e.queue_counter = vocab::numbered(vocab::queue_prefix, to.number, vocab::fill_suffix);
            if (p.queue) e.capacity = static_cast<double>(*p.queue);
        }
        p.edges.push_back(std::move(e));
    }
    for (auto& s : p.stages) {
        if (s.all_from || s.formula) continue;
        if (bts) s.buffer_counter = vocab::numbered(vocab::stage_prefix, s.number, vocab::reorder_buffer_suffix);
        else if (family == vocab::policy_family::tokens)
            s.buffer_counter = vocab::numbered(vocab::stage_prefix, s.number, vocab::buffer_suffix);
    }
}

// A stage graph: one edge per (producer, queue), into the queue's consumer, carrying the queue's
// counter of packets in use and its capacity in packets (docs/tracing.md "Metadata").
void link_queues(program_structure& p, const std::vector<trace::run_queue>& queues) {
    for (const trace::run_queue& q : queues) {
        if (!q.consumer || *q.consumer >= p.stages.size()) continue;
        for (const std::uint64_t from : q.producers) {
            if (from >= p.stages.size()) continue;
            graph_edge e;
            e.from = static_cast<std::uint32_t>(from);
            e.to = static_cast<std::uint32_t>(*q.consumer);
            e.queue_name = q.name;
            e.queue_counter = q.counter.empty() ? vocab::queue_packets(e.queue_name) : q.counter;
            if (q.capacity_packets) e.capacity = static_cast<double>(*q.capacity_packets);
            e.unbounded = q.unbounded;
            p.edges.push_back(std::move(e));
        }
    }
}

// A box per entry of program.stages, in order; bind-to-stage's threads default to 1 for a serial
// stage and c for a parallel one.
void add_stages(program_structure& p, const std::vector<trace::run_stage>& stages) {
    const bool bts = vocab::classify_policy(p.policy) == vocab::policy_family::bound_threads;
    for (const trace::run_stage& s : stages) {
        graph_stage g;
        g.entry = static_cast<std::uint32_t>(p.stages.size());
        g.index = s.index.value_or(g.entry);
        g.name = s.name;
        g.kind = s.kind;
        g.note = s.note;
        g.number = analysis::stage_number_of_name(g.name, &g.all_from, &g.formula).value_or(g.index);
        // A formula entry covers stages of many timeline colours: none of them.
        g.colour = g.formula ? key_other : stage_colour(g.number);
        g.threads = s.threads;
        if (!g.threads && bts) {
            if (analysis::is_serial_kind(g.kind)) g.threads = 1;
            else g.threads = p.c;
        }
        p.stages.push_back(std::move(g));
    }
}

}   // namespace

std::string plain_relations(std::string s) {
    for (auto [from, to] : {std::pair<std::string_view, std::string_view>{"\xE2\x89\xA5", ">="}, {"\xE2\x89\xA4", "<="}})
        for (std::size_t k; (k = s.find(from)) != std::string::npos;) s.replace(k, from.size(), to);
    return s;
}

program_structure read_program_structure(std::string_view metadata_json) {
    program_structure p;
    const std::optional<trace::run_metadata> meta = trace::run_metadata_from_json(metadata_json);
    if (!meta) return p;
    p.workload = meta->workload;
    p.policy = meta->policy;
    if (!meta->program) return p;
    const trace::run_program& prog = *meta->program;
    p.K = prog.K;
    p.c = prog.c;
    p.queue = prog.queue ? prog.queue : count_of(prog.queue_capacity);
    if (!prog.stages) return p;
    p.valid = true;
    add_stages(p, *prog.stages);
    if (prog.kind == vocab::graph_program) {
        p.graph = true;
        if (prog.queues) link_queues(p, *prog.queues);
        return p;
    }
    link_chain(p);
    return p;
}

program_structure program_structure_of(const tm::run& r) {
    program_structure p;
    if (r.metadata_valid) p = read_program_structure(r.metadata_json);
    if (p.policy.empty()) p.policy = r.policy;
    if (p.workload.empty()) p.workload = r.workload;
    if (!p.graph)   // how the iterations used each stage, as recorded, else as the DAG shows (a "?")
        for (graph_stage& g : p.stages) {
            if (g.formula || g.all_from) continue;
            if (std::string used = tm::recorded_stage_kind(r, g.number); !used.empty()) {
                g.kind = std::move(used);
            } else if (g.kind.empty() || g.kind == "on the fly") {
                if (const std::string seen = tm::inferred_stage_kind(r, g.number); !seen.empty()) g.kind = seen + "?";
            }
        }
    if (!p.stages.empty()) return p;
    p.edges.clear();
    std::vector<std::uint64_t> numbers;
    for (const auto& nd : r.dag.nodes) numbers.push_back(nd.stage);
    std::sort(numbers.begin(), numbers.end());
    numbers.erase(std::unique(numbers.begin(), numbers.end()), numbers.end());
    if (numbers.size() > 64) numbers.resize(64);
    for (std::uint64_t n : numbers) {
        graph_stage g;
        g.entry = static_cast<std::uint32_t>(p.stages.size());
        g.index = g.number = n;
        g.name = vocab::numbered(vocab::stage_prefix, n);
        g.colour = stage_colour(n);
        p.stages.push_back(std::move(g));
    }
    if (!p.K && r.dag.K) p.K = r.dag.K;
    link_chain(p);
    return p;
}

std::uint32_t stage_of_number(const program_structure& p, std::uint64_t j) {
    std::uint32_t range = tm::no_index;
    for (std::uint32_t k = 0; k < p.stages.size(); ++k) {
        const graph_stage& s = p.stages[k];
        if (s.formula) continue;
        if (!s.all_from && s.number == j) return k;
        if (s.all_from && s.number <= j && (range == tm::no_index || s.number > p.stages[range].number)) range = k;
    }
    return range;
}

std::string stage_name_of_number(std::span<const tm::stage_info> stages, std::uint64_t j) {
    program_structure p;
    for (const tm::stage_info& si : stages) {
        graph_stage g;
        g.entry = static_cast<std::uint32_t>(p.stages.size());
        g.index = si.index;
        g.name = si.name;
        g.number = analysis::stage_number_of_name(si.name, &g.all_from, &g.formula).value_or(si.index);
        p.stages.push_back(std::move(g));
    }
    const std::uint32_t k = stage_of_number(p, j);
    return k == tm::no_index ? std::string() : plain_relations(p.stages[k].name);
}

std::optional<double> counter_value_at(std::span<const tm::counter_sample> samples, std::uint64_t t) {
    auto it = std::upper_bound(samples.begin(), samples.end(), t,
                               [](std::uint64_t v, const tm::counter_sample& s) { return v < s.ts; });
    if (it == samples.begin()) return std::nullopt;
    return std::prev(it)->value;
}

counter_peak peak_of(std::span<const tm::counter_sample> samples) {
    counter_peak p;
    for (const auto& s : samples)
        if (!p.any || s.value > p.value) {
            p.any = true;
            p.value = s.value;
            p.ts = s.ts;
        }
    return p;
}

std::optional<std::uint64_t> next_time(std::span<const std::uint64_t> sorted, std::uint64_t t) {
    auto it = std::upper_bound(sorted.begin(), sorted.end(), t);
    if (it == sorted.end()) return std::nullopt;
    return *it;
}

std::optional<std::uint64_t> prev_time(std::span<const std::uint64_t> sorted, std::uint64_t t) {
    auto it = std::lower_bound(sorted.begin(), sorted.end(), t);
    if (it == sorted.begin()) return std::nullopt;
    return *std::prev(it);
}

run_graph build_run_graph(const document& d, std::uint32_t doc_run) {
    run_graph g;
    g.doc_run = doc_run;
    if (doc_run >= d.runs.size()) return g;
    const run_ref& rr = d.runs[doc_run];
    const loaded_file& f = *d.files[rr.file];
    const tm::trace_model& m = f.model;
    if (rr.run != tm::no_index) g.program = program_structure_of(m.runs[rr.run]);
    const program_structure& p = g.program;
    std::map<std::string_view, std::uint32_t> by_name;
    for (auto ti : rr.counters) by_name.emplace(m.tracks[ti].name, ti);   // the first of a name
    auto find = [&](std::string_view name) {
        if (name.empty()) return tm::no_index;
        auto it = by_name.find(name);
        return it == by_name.end() ? tm::no_index : it->second;
    };
    auto samples = [&](std::uint32_t ti) {
        return ti == tm::no_index ? std::span<const tm::counter_sample>()
                                  : std::span<const tm::counter_sample>(m.tracks[ti].counters);
    };
    for (const auto& e : p.edges) {
        g.edge_counter.push_back(find(e.queue_counter));
        g.edge_peak.push_back(peak_of(samples(g.edge_counter.back())));
    }
    for (const auto& s : p.stages) {
        g.buffer_counter.push_back(find(s.buffer_counter));
        g.buffer_peak.push_back(peak_of(samples(g.buffer_counter.back())));
    }
    g.live = find(vocab::live_iterations);
    g.tokens = find(vocab::tokens_in_flight);
    g.footprint = find(vocab::footprint_packets);
    g.live_peak = peak_of(samples(g.live));
    g.tokens_peak = peak_of(samples(g.tokens));
    g.footprint_peak = peak_of(samples(g.footprint));
    auto add_events = [&](std::uint32_t ti) {
        for (const auto& s : samples(ti)) g.events.push_back(s.ts);
    };
    for (auto ti : g.edge_counter) add_events(ti);
    for (auto ti : g.buffer_counter) add_events(ti);
    add_events(g.live);
    add_events(g.tokens);
    add_events(g.footprint);

    g.node_starts.assign(p.stages.size(), {});
    g.node_ends.assign(p.stages.size(), {});
    g.nodes_by_start.assign(p.stages.size(), {});
    g.stage_numbers.assign(p.stages.size(), 0);
    if (rr.run != tm::no_index) {
        const tm::pipeline_dag& dag = m.runs[rr.run].dag;
        std::vector<std::vector<std::uint64_t>> numbers(p.stages.size());
        for (std::uint32_t v = 0; v < dag.nodes.size(); ++v) {
            const tm::dag_node& nd = dag.nodes[v];
            const std::uint32_t s = stage_of_number(p, nd.stage);
            if (s == tm::no_index) continue;
            g.nodes_by_start[s].push_back(v);
            g.node_ends[s].push_back(nd.end);
            numbers[s].push_back(nd.stage);
            g.events.push_back(nd.start);
            g.events.push_back(nd.end);
        }
        for (std::size_t s = 0; s < p.stages.size(); ++s) {
            auto& ids = g.nodes_by_start[s];
            std::stable_sort(ids.begin(), ids.end(),
                             [&](std::uint32_t a, std::uint32_t b) { return dag.nodes[a].start < dag.nodes[b].start; });
            for (auto v : ids) g.node_starts[s].push_back(dag.nodes[v].start);
            std::sort(g.node_ends[s].begin(), g.node_ends[s].end());
            std::sort(numbers[s].begin(), numbers[s].end());
            g.stage_numbers[s] =
                static_cast<std::uint64_t>(std::unique(numbers[s].begin(), numbers[s].end()) - numbers[s].begin());
        }
    }
    std::sort(g.events.begin(), g.events.end());
    g.events.erase(std::unique(g.events.begin(), g.events.end()), g.events.end());
    return g;
}

std::uint64_t running_at(const run_graph& g, std::uint32_t s, std::uint64_t t) {
    if (s >= g.node_starts.size()) return 0;
    const auto& a = g.node_starts[s];
    const auto& b = g.node_ends[s];
    const auto started = std::upper_bound(a.begin(), a.end(), t) - a.begin();
    const auto ended = std::upper_bound(b.begin(), b.end(), t) - b.begin();
    return started > ended ? static_cast<std::uint64_t>(started - ended) : 0;
}

std::uint32_t latest_node_at(const run_graph& g, std::uint32_t s, std::uint64_t t) {
    if (s >= g.node_starts.size()) return tm::no_index;
    const auto& a = g.node_starts[s];
    const auto k = std::upper_bound(a.begin(), a.end(), t) - a.begin();
    return k == 0 ? tm::no_index : g.nodes_by_start[s][static_cast<std::size_t>(k - 1)];
}

std::string nothing_started_note(const run_graph& g, std::uint32_t s, std::uint64_t t, double off,
                                 std::string_view stage_name) {
    if (latest_node_at(g, s, t) != tm::no_index) return {};
    const std::string name(stage_name);
    if (s >= g.node_starts.size() || g.node_starts[s].empty()) return name + " ran no node in this run: nothing to select";
    const double first = static_cast<double>(g.node_starts[s].front()) - off, now = static_cast<double>(t) - off;
    return name + " has not started at the cursor (" + format_duration(now) + "): its first node starts at " +
           format_duration(first) + "; move the cursor past it to select one";
}

// --- layout ----------------------------------------------------------------------------------------

namespace {

bool valid_edge(const graph_edge& e, std::uint32_t n) { return e.from < n && e.to < n; }

// The edges leaving each stage, in edge order.
std::vector<std::vector<std::uint32_t>> edges_by_source(std::uint32_t n, std::span<const graph_edge> edges) {
    std::vector<std::vector<std::uint32_t>> out_edges(n);
    for (std::uint32_t k = 0; k < edges.size(); ++k)
        if (valid_edge(edges[k], n)) out_edges[edges[k].from].push_back(k);
    return out_edges;
}

// Feedback edges: those reaching a stage on the depth-first search's stack (self-loops too).
// Leaving them out makes the graph acyclic, so that it has layers; they are routed under the boxes.
std::vector<char> feedback_edges(std::span<const graph_edge> edges,
                                 const std::vector<std::vector<std::uint32_t>>& out_edges) {
    const auto n = static_cast<std::uint32_t>(out_edges.size());
    std::vector<char> feedback(edges.size(), 0);
    std::vector<char> colour(n, 0);   // 0 new, 1 on the stack, 2 done
    std::vector<std::pair<std::uint32_t, std::size_t>> stack;
    for (std::uint32_t root = 0; root < n; ++root) {
        if (colour[root]) continue;
        colour[root] = 1;
        stack.assign(1, {root, 0});
        while (!stack.empty()) {
            auto& [v, next] = stack.back();
            if (next == out_edges[v].size()) {
                colour[v] = 2;
                stack.pop_back();
                continue;
            }
            const std::uint32_t k = out_edges[v][next++];
            const std::uint32_t w = edges[k].to;
            if (colour[w] == 1) feedback[k] = 1;
            else if (colour[w] == 0) {
                colour[w] = 1;
                stack.push_back({w, 0});
            }
        }
    }
    return feedback;
}

// Layers: longest path over the forward edges (Kahn's order, stages in index order), so that every
// forward edge goes right.
std::vector<std::uint32_t> longest_path_layers(std::span<const graph_edge> edges,
                                               const std::vector<std::vector<std::uint32_t>>& out_edges,
                                               const std::vector<char>& feedback) {
    const auto n = static_cast<std::uint32_t>(out_edges.size());
    std::vector<std::uint32_t> layer(n, 0), indegree(n, 0);
    for (std::uint32_t k = 0; k < edges.size(); ++k)
        if (valid_edge(edges[k], n) && !feedback[k]) ++indegree[edges[k].to];
    std::vector<std::uint32_t> ready;
    for (std::uint32_t v = n; v-- > 0;)
        if (!indegree[v]) ready.push_back(v);
    while (!ready.empty()) {
        const std::uint32_t v = ready.back();
        ready.pop_back();
        for (std::uint32_t k : out_edges[v]) {
            if (feedback[k]) continue;
            const std::uint32_t w = edges[k].to;
            layer[w] = std::max(layer[w], layer[v] + 1);
            if (--indegree[w] == 0) ready.push_back(w);
        }
    }
    return layer;
}

// The stages in layers (columns) and slots (positions down a column), and the edges closing cycles.
struct layering {
    std::uint32_t n = 0;                      // stages
    std::vector<char> feedback;               // per edge
    std::vector<std::uint32_t> layer, slot;   // per stage
    std::vector<std::uint32_t> layer_size;    // stages per layer
    std::vector<char> queued_into;            // per layer: a forward edge with a queue enters it
    std::uint32_t layers = 0, max_slots = 0;
};

layering layer_stages(std::uint32_t n, std::span<const graph_edge> edges) {
    layering L;
    L.n = n;
    const auto out_edges = edges_by_source(n, edges);
    L.feedback = feedback_edges(edges, out_edges);
    L.layer = longest_path_layers(edges, out_edges, L.feedback);
    for (auto l : L.layer) L.layers = std::max(L.layers, l + 1);
    L.layer_size.assign(L.layers, 0);
    L.slot.assign(n, 0);
    for (std::uint32_t v = 0; v < n; ++v) L.slot[v] = L.layer_size[L.layer[v]]++;
    for (auto s : L.layer_size) L.max_slots = std::max(L.max_slots, s);
    // A queue bar needs room before the layer its edge enters.
    L.queued_into.assign(L.layers, 0);
    for (std::uint32_t k = 0; k < edges.size(); ++k)
        if (valid_edge(edges[k], n) && !L.feedback[k] && !edges[k].queue_counter.empty())
            L.queued_into[L.layer[edges[k].to]] = 1;
    return L;
}

// The space left of layer l: the margin, or the gap after the previous layer (wider when a queue
// bar sits in it).
float gap_before(const layout_params& p, const layering& L, std::uint32_t l) {
    return l == 0 ? p.margin : (L.queued_into[l] ? p.queue_gap : p.gap);
}

float total_width(const layout_params& p, const layering& L) {
    float w = 2 * p.margin + static_cast<float>(L.layers) * p.box_w;
    for (std::uint32_t l = 1; l < L.layers; ++l) w += gap_before(p, L, l);
    return w;
}

// With max_width, box widths and gaps shrink in proportion (down to their minimums) to fit.
layout_params fit_to_width(layout_params p, const layering& L) {
    if (p.max_width > 0 && total_width(p, L) > p.max_width && L.layers > 0) {
        const float f = (p.max_width - 2 * p.margin) / (total_width(p, L) - 2 * p.margin);
        // Whole pixels, so that every box of a picture has one size.
        p.box_w = std::max(p.min_box_w, std::floor(p.box_w * f));
        p.gap = std::max(p.min_gap, std::floor(p.gap * f));
        p.queue_gap = std::max(p.min_queue_gap, std::floor(p.queue_gap * f));
    }
    return p;
}

// Where the routed edges run: the channels of skip edges (spanning more than one layer) above
// the boxes end at `top`, those of feedback edges below start at `bottom`.
struct channels {
    std::uint32_t skips = 0, backs = 0;
    float top = 0, bottom = 0;
};

// The boxes, layer by layer from the left, each layer's slots centred on the tallest layer's.
// Returns the channels around them.
channels place_boxes(std::span<const graph_edge> edges, const layering& L, const layout_params& p, graph_layout& out) {
    channels ch;
    for (std::uint32_t k = 0; k < edges.size(); ++k) {
        if (!valid_edge(edges[k], L.n)) continue;
        if (L.feedback[k]) ++ch.backs;
        else if (L.layer[edges[k].to] > L.layer[edges[k].from] + 1) ++ch.skips;
    }
    std::vector<float> layer_x(L.layers, p.margin);
    for (std::uint32_t l = 1; l < L.layers; ++l) layer_x[l] = layer_x[l - 1] + p.box_w + gap_before(p, L, l);
    const float pitch = p.box_h + p.below + p.row_gap;
    ch.top = p.margin + static_cast<float>(ch.skips) * p.channel + (ch.skips ? p.channel * 0.5f : 0.f);
    const float rows_h = L.max_slots ? static_cast<float>(L.max_slots) * pitch - p.row_gap : 0.f;
    out.boxes.resize(L.n);
    for (std::uint32_t v = 0; v < L.n; ++v) {
        layout_box& b = out.boxes[v];
        const float offset = static_cast<float>(L.max_slots - L.layer_size[L.layer[v]]) * pitch * 0.5f;
        b.layer = L.layer[v];
        b.slot = L.slot[v];
        b.x0 = layer_x[L.layer[v]];
        b.x1 = b.x0 + p.box_w;
        b.y0 = ch.top + offset + static_cast<float>(L.slot[v]) * pitch;
        b.y1 = b.y0 + p.box_h;
    }
    ch.bottom = ch.top + rows_h;   // under the lowest box's reserved band
    return ch;
}

// The queue bar on the edge's longest horizontal segment, if it has room there.
void place_queue(const layout_params& p, layout_edge& le) {
    const auto& pts = le.points;
    float best = -1, sx0 = 0, sx1 = 0, sy = 0;
    for (std::size_t i = 0; i + 1 < pts.size(); ++i) {
        if (pts[i].y != pts[i + 1].y) continue;
        const float l = std::fabs(pts[i + 1].x - pts[i].x);
        if (l > best) {
            best = l;
            sx0 = std::min(pts[i].x, pts[i + 1].x);
            sx1 = std::max(pts[i].x, pts[i + 1].x);
            sy = pts[i].y;
        }
    }
    if (best < 2 * p.queue_pad + 4) return;
    le.has_queue = true;
    le.qx0 = sx0 + p.queue_pad;
    le.qx1 = sx1 - p.queue_pad;
    le.qy0 = sy - p.queue_h * 0.5f;
    le.qy1 = sy + p.queue_h * 0.5f;
}

// Each edge's polyline: a feedback edge down into its own channel under the boxes and back left,
// a skip edge up into its own channel above them, a neighbour edge straight across or with one
// step; then its queue bar.
void route_edges(std::span<const graph_edge> edges, const layering& L, const layout_params& p, const channels& ch,
                 graph_layout& out) {
    out.edges.resize(edges.size());
    std::uint32_t skip_k = 0, back_k = 0;
    const float half_pad = p.queue_pad * 0.5f;
    for (std::uint32_t k = 0; k < edges.size(); ++k) {
        const graph_edge& e = edges[k];
        layout_edge& le = out.edges[k];
        if (!valid_edge(e, L.n)) continue;
        const layout_box& a = out.boxes[e.from];
        const layout_box& b = out.boxes[e.to];
        const float ya = (a.y0 + a.y1) * 0.5f, yb = (b.y0 + b.y1) * 0.5f;
        le.feedback = L.feedback[k] != 0;
        auto& pts = le.points;
        if (le.feedback) {
            const float y = ch.bottom + p.channel * (0.5f + static_cast<float>(back_k++));
            const float xo = a.x1 + half_pad, xi = b.x0 - half_pad;
            pts = {{a.x1, ya}, {xo, ya}, {xo, y}, {xi, y}, {xi, yb}, {b.x0, yb}};
        } else if (b.layer > a.layer + 1) {
            const float y = ch.top - p.channel * (0.5f + static_cast<float>(skip_k++));
            const float xo = a.x1 + half_pad, xi = b.x0 - gap_before(p, L, b.layer) + half_pad;
            pts = {{a.x1, ya}, {xo, ya}, {xo, y}, {xi, y}, {xi, yb}, {b.x0, yb}};
        } else if (ya == yb) {
            pts = {{a.x1, ya}, {b.x0, yb}};
        } else {
            const float xo = a.x1 + half_pad;
            pts = {{a.x1, ya}, {xo, ya}, {xo, yb}, {b.x0, yb}};
        }
        if (!e.queue_counter.empty()) place_queue(p, le);
    }
}

}   // namespace

graph_layout layout_stage_graph(std::span<const graph_stage> stages, std::span<const graph_edge> edges,
                                const layout_params& params) {
    graph_layout out;
    const layering L = layer_stages(static_cast<std::uint32_t>(stages.size()), edges);
    const layout_params p = fit_to_width(params, L);
    out.used = p;
    const channels ch = place_boxes(edges, L, p, out);
    out.width = total_width(p, L);
    out.height = ch.bottom + static_cast<float>(ch.backs) * p.channel + (ch.backs ? p.channel * 0.5f : 0.f) + p.margin;
    route_edges(edges, L, p, ch, out);
    return out;
}

}   // namespace pipescope::viewer
