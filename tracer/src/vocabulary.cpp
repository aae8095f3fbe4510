// The classifiers of the trace vocabulary (vocabulary.hpp): each turns a name back into its kind.
#include <pipescope/trace/vocabulary.hpp>

#include <charconv>

namespace pipescope::trace::vocab {

namespace {

constexpr bool ends_with(std::string_view name, std::string_view suffix) {
    return name.size() >= suffix.size() && name.substr(name.size() - suffix.size()) == suffix;
}

// "prefix<number>suffix" with nothing else.
bool numbered_between(std::string_view name, std::string_view prefix, std::string_view suffix) {
    if (!starts_with(name, prefix) || !ends_with(name, suffix) || name.size() < prefix.size() + suffix.size()) return false;
    return whole_number(name.substr(0, name.size() - suffix.size()), prefix).has_value();
}

}   // namespace

std::string numbered(std::string_view prefix, std::uint64_t n, std::string_view suffix) {
    std::string s(prefix);
    s += std::to_string(n);
    s += suffix;
    return s;
}

std::optional<std::uint64_t> leading_number(std::string_view name, std::string_view prefix) {
    if (!starts_with(name, prefix)) return std::nullopt;
    const char* b = name.data() + prefix.size();
    std::uint64_t v = 0;
    const auto r = std::from_chars(b, name.data() + name.size(), v);
    if (r.ec != std::errc{} || r.ptr == b) return std::nullopt;
    return v;
}

std::optional<std::uint64_t> whole_number(std::string_view name, std::string_view prefix) {
    if (name.size() <= prefix.size() || !starts_with(name, prefix)) return std::nullopt;
    const char* e = name.data() + name.size();
    std::uint64_t v = 0;
    const auto r = std::from_chars(name.data() + prefix.size(), e, v);
    if (r.ec != std::errc{} || r.ptr != e) return std::nullopt;
    return v;
}

track_name classify_track(std::string_view n) {
    if (whole_number(n, worker_prefix)) return track_name::worker;
    if (whole_number(n, line_prefix)) return track_name::line;
    if (n == lines_group) return track_name::lines_group;
    if (n == control_line) return track_name::control;
    if (whole_number(n, thread_prefix)) return track_name::thread;
    if (const auto dot = n.find(stage_thread_infix); dot != std::string_view::npos &&
                                                     whole_number(n.substr(0, dot), stage_prefix) &&
                                                     whole_number(n.substr(dot), stage_thread_infix))
        return track_name::stage_thread;
    return track_name::other;
}

slice_class classify_slice(std::string_view n) {
    if (leading_number(n, stage_prefix)) return slice_class::node;
    if (n == task) return slice_class::task;
    if (n == idle) return slice_class::idle;
    if (n == parked) return slice_class::parked;
    if (starts_with(n, blocked_prefix)) return slice_class::blocked;
    for (std::string_view p : queue_operation_prefixes)
        if (starts_with(n, p)) return slice_class::queue_operation;
    if (n == running) return slice_class::running;
    if (starts_with(n, waiting_prefix)) return slice_class::waiting;
    if (n == throttled) return slice_class::throttled;
    return slice_class::other;
}

bool is_folded_node(std::string_view n) {
    // The signs alone ("–", "×"). "stage j (folded)" is not counted: past the writer's bound of names
    // only the `nodes` annotation tells.
    return starts_with(n, stage_prefix) &&
           (n.find(fold_dash) != std::string_view::npos || n.find(fold_times.substr(1)) != std::string_view::npos);
}

instant_name classify_instant(std::string_view n) {
    struct entry {
        std::string_view name;
        instant_name kind;
    };
    static constexpr entry exact[] = {
        {run, instant_name::run},
        {run_summary, instant_name::run_summary},
        {steal, instant_name::steal},
        {stolen, instant_name::stolen},
        {woken, instant_name::woken},
        {suspend, instant_name::suspend},
        {resume, instant_name::resume},
        {throttled, instant_name::throttled},
        {throttle_resume, instant_name::throttle_resume},
        {stage_wait_check, instant_name::stage_wait_check},
        {events_lost, instant_name::events_lost},
        {parked_in_buffer, instant_name::parked_in_buffer},
        {taken_from_buffer, instant_name::taken_from_buffer},
        {resume_earliest, instant_name::resume_earliest},
        {stage_exception, instant_name::stage_exception},
        {cancelled, instant_name::cancelled},
        {reserve_push, instant_name::reserve_push},
        {reserve_pop, instant_name::reserve_pop},
        {commit_push, instant_name::commit_push},
        {commit_pop, instant_name::commit_pop},
        {stage_blocked, instant_name::stage_blocked},
        {stage_blocked_full, instant_name::stage_blocked_full},
        {stage_blocked_empty, instant_name::stage_blocked_empty},
        {stage_blocked_order, instant_name::stage_blocked_order},
        {preempted, instant_name::preempted},
        {stage_done, instant_name::stage_done},
        {detail_folded, instant_name::detail_folded},
        {detail_nodes, instant_name::detail_nodes},
    };
    for (const entry& e : exact)
        if (n == e.name) return e.kind;
    if (starts_with(n, wake_prefix)) return instant_name::wake;
    return instant_name::other;
}

std::optional<arg_key> classify_arg(std::string_view name) {
    for (std::size_t k = 0; k < std::size(arg_names); ++k)
        if (arg_names[k] == name) return static_cast<arg_key>(k);
    return std::nullopt;
}

std::string user_arg_name(std::string_view key) {
    if (classify_arg(key) || starts_with(key, user_arg_prefix)) return std::string(user_arg_prefix) + std::string(key);
    return std::string(key);
}

std::optional<std::string_view> user_key(std::string_view name) {
    if (classify_arg(name)) return std::nullopt;
    if (starts_with(name, user_arg_prefix)) return name.substr(user_arg_prefix.size());
    return name;
}

counter_name classify_counter(std::string_view n) {
    if (n == live_iterations) return counter_name::live_iterations;
    if (n == tokens_in_flight) return counter_name::tokens_in_flight;
    if (n == suspended_iterations) return counter_name::suspended_iterations;
    if (n == footprint_packets) return counter_name::footprint_packets;
    if (n == footprint_bytes) return counter_name::footprint_bytes;
    if (numbered_between(n, stage_prefix, reorder_buffer_suffix)) return counter_name::reorder_buffer;
    if (numbered_between(n, stage_prefix, buffer_suffix)) return counter_name::stage_buffer;
    if (numbered_between(n, queue_prefix, fill_suffix)) return counter_name::queue_fill;
    if (starts_with(n, queue_prefix) && ends_with(n, packets_suffix) &&
        n.size() > queue_prefix.size() + packets_suffix.size())
        return counter_name::queue_packets;
    return counter_name::other;
}

std::string queue_packets(std::string_view queue) {
    std::string s(queue_prefix);
    s += queue;
    s += packets_suffix;
    return s;
}

policy_family classify_policy(std::string_view p) {
    if (p == piper || p == piper_earliest) return policy_family::work_stealing;
    if (p == tbb) return policy_family::tokens;
    if (p == bind_to_stage) return policy_family::bound_threads;
    if (p == serial) return policy_family::serial;
    for (std::string_view g : graph_policies)
        if (p == g) return policy_family::stage_graph;
    return policy_family::unknown;
}

}   // namespace pipescope::trace::vocab
