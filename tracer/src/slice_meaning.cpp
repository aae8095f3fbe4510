// What a slice means: its kind from its name, a node's identity from its annotations. The one place
// that decodes them (docs/architecture.md, "The trace model"); the DAG, the analysis, the viewer and
// the lessons read slice::kind, trace_model::names and trace_model::node_of.
#include <pipescope/trace/trace_model.hpp>

#include <pipescope/trace/vocabulary.hpp>

#include <algorithm>
#include <limits>

namespace pipescope::trace {

namespace v = vocab;

namespace {

// "stage 3", "stage 3 · load", "waiting at stage 3" -> 3 (the first "stage " and the number after
// it); -1 when there is none or it does not fit a long.
std::int64_t stage_in_name(std::string_view n) {
    const auto p = n.find(v::stage_prefix);
    if (p == std::string_view::npos) return -1;
    const auto j = v::leading_number(n.substr(p), v::stage_prefix);
    if (!j || *j > static_cast<std::uint64_t>(std::numeric_limits<long>::max())) return -1;
    return static_cast<std::int64_t>(*j);
}

slice_kind kind_of_class(v::slice_class c) {
    switch (c) {
        case v::slice_class::node: return slice_kind::node;
        case v::slice_class::task: return slice_kind::task;
        case v::slice_class::idle: return slice_kind::idle;
        case v::slice_class::parked: return slice_kind::parked;
        case v::slice_class::blocked: return slice_kind::blocked;
        case v::slice_class::queue_operation: return slice_kind::queue;
        case v::slice_class::running: return slice_kind::running;
        case v::slice_class::waiting: return slice_kind::waiting;
        case v::slice_class::throttled: return slice_kind::throttled;
        case v::slice_class::other: break;
    }
    return slice_kind::other;
}

}   // namespace

name_meaning meaning_of_name(std::string_view name) {
    name_meaning m;
    m.stage = stage_in_name(name);
    m.kind = kind_of_class(v::classify_slice(name));
    // A node's stage number must fit (a "stage 99999999999999999999" slice is something else).
    if (m.kind == slice_kind::node && m.stage < 0) m.kind = slice_kind::other;
    return m;
}

std::uint64_t node_extent::nodes_of_stage(std::uint64_t j) const {
    if (stage < 0 || j < static_cast<std::uint64_t>(stage) || j > last_stage) return 0;
    const std::uint64_t stages = last_stage - static_cast<std::uint64_t>(stage) + 1;
    // nodes spread over the stages in order (one each for a pipeline block, all of them for one stage)
    const std::uint64_t k = j - static_cast<std::uint64_t>(stage);
    return nodes / stages + (k < nodes % stages ? 1 : 0);
}

node_extent trace_model::node_of(const slice& s) const {
    node_extent e;
    if (s.kind != slice_kind::node) return e;
    e.stage = stage_of(s.name);
    bool has_last = false;
    const node_arg_ids& ids = node_args;
    for (const model_arg* a = args_begin(s); a != args_end(s); ++a) {
        if (a->kind == arg_kind::string_value || a->kind == arg_kind::double_value) continue;
        const std::uint64_t b = a->bits();
        if (a->name == ids.stage) e.stage = static_cast<long>(b), e.stage_annotated = true;
        else if (a->name == ids.iteration) e.iteration = static_cast<long long>(b);
        else if (a->name == ids.nodes) e.nodes = std::clamp<std::uint64_t>(b, 1, 0xFFFFFFFFu);   // as the DAG keeps it
        else if (a->name == ids.last_stage) e.last_stage = b, has_last = true;
        else if (a->name == ids.last_iteration) e.last_iteration = static_cast<long long>(b);
        else if (a->name == ids.waited) e.waited = (b & 1) != 0;
    }
    if (e.stage < 0) return e;
    const auto first = static_cast<std::uint64_t>(e.stage);
    // A range that does not fit its node count (or no range) is the nodes of the first stage.
    if (!has_last || e.last_stage < first || e.last_stage - first + 1 > e.nodes) e.last_stage = first;
    return e;
}

void type_slices(trace_model& m) {
    m.names.resize(m.strings.size());
    for (std::size_t i = 0; i < m.strings.size(); ++i) {
        m.names[i] = meaning_of_name(m.strings[i]);
        const auto key = v::classify_arg(m.strings[i]);
        if (!key) continue;
        const auto id = static_cast<string_id>(i);
        auto& ids = m.node_args;
        switch (*key) {
            case v::arg_key::iteration: ids.iteration = id; break;
            case v::arg_key::stage: ids.stage = id; break;
            case v::arg_key::last_stage: ids.last_stage = id; break;
            case v::arg_key::last_iteration: ids.last_iteration = id; break;
            case v::arg_key::nodes: ids.nodes = id; break;
            case v::arg_key::waited: ids.waited = id; break;
            default: break;
        }
    }
    for (track& t : m.tracks) {
        t.stage = static_cast<long>(stage_in_name(t.name));
        for (slice& s : t.slices) s.kind = m.names[s.name].kind;
    }
}

}   // namespace pipescope::trace
