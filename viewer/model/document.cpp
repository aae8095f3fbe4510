#include <array>
#include "document.hpp"

#include <pipescope/analysis/metadata.hpp>

#include <algorithm>
#include <chrono>
#include <limits>
#include <stdexcept>

namespace pipescope::viewer {

colour_key stage_colour(std::uint64_t j) { return j < key_special ? static_cast<colour_key>(j) : key_other; }

colour_key colour_of(const tm::name_meaning& n) {
    // The model's typing (trace_model.hpp), so a slice is what `pipescope stats` says it is.
    switch (n.kind) {
        case tm::slice_kind::node: return stage_colour(static_cast<std::uint64_t>(n.stage));   // node: stage >= 0
        case tm::slice_kind::idle: return key_idle;
        case tm::slice_kind::parked: return key_parked;
        case tm::slice_kind::task: return key_task;
        case tm::slice_kind::running: return key_running;
        case tm::slice_kind::waiting: return key_waiting;
        case tm::slice_kind::throttled: return key_throttled;
        default: return key_other;   // blocked and queue operations have no colour of their own
    }
}

instant_kind classify_instant_name(std::string_view n) {
    switch (vocab::classify_instant(n)) {
        case vocab::instant_name::events_lost: return instant_kind::events_lost;
        case vocab::instant_name::steal: return instant_kind::steal;
        case vocab::instant_name::stolen: return instant_kind::stolen;
        case vocab::instant_name::wake: return instant_kind::wake;
        case vocab::instant_name::woken: return instant_kind::woken;
        case vocab::instant_name::suspend: return instant_kind::suspend;
        case vocab::instant_name::resume: return instant_kind::resume;
        case vocab::instant_name::throttled:
        case vocab::instant_name::throttle_resume: return instant_kind::throttle;
        default: return instant_kind::other;
    }
}

row_view loaded_file::row(std::uint32_t track, std::uint16_t depth) const {
    const tm::track& t = model.tracks[track];
    row_view r;
    r.slices = t.slices.data();
    const auto& rows = depth_rows[track];
    if (rows.empty()) {
        if (depth == 0) r.size = t.slices.size();
    } else if (depth < rows.size()) {
        r.index = rows[depth].data();
        r.size = rows[depth].size();
    }
    const auto& sums = summaries[track];
    if (depth < sums.size() && !sums[depth].levels.empty()) r.summary = &sums[depth];
    return r;
}

namespace {

// Adds (key, weight) to a small accumulator of distinct keys; returns the entry with the most weight.
struct key_weights {
    std::array<row_summary_entry, row_summary::fan_out> a;
    std::size_t n = 0;
    void add(colour_key k, float w) {
        for (std::size_t q = 0; q < n; ++q)
            if (a[q].key == k) {
                a[q].weight += w;
                return;
            }
        if (n < a.size()) a[n++] = {k, w};
    }
    row_summary_entry best() const {
        row_summary_entry b{key_other, 0};
        for (std::size_t q = 0; q < n; ++q)
            if (a[q].weight > b.weight) b = a[q];
        return b;
    }
};

}   // namespace

row_summary build_row_summary(const row_view& row, const colour_key* keys) {
    constexpr std::size_t F = row_summary::fan_out;
    row_summary out;
    std::vector<row_summary_entry> level;
    level.reserve(row.size / F + 1);
    out.group_begin.reserve(row.size / F + 1);
    out.group_end.reserve(row.size / F + 1);
    for (std::size_t b = 0; b * F < row.size; ++b) {
        out.group_begin.push_back(row[b * F].begin);
        out.group_end.push_back(row[std::min(row.size, b * F + F) - 1].end);
        key_weights acc;
        for (std::size_t i = b * F; i < std::min(row.size, b * F + F); ++i) {
            const tm::slice& s = row[i];
            acc.add(keys[s.name], static_cast<float>(s.end - s.begin) + 1.0f);
        }
        level.push_back(acc.best());
    }
    while (level.size() > 1) {
        std::vector<row_summary_entry> up;
        up.reserve(level.size() / F + 1);
        for (std::size_t b = 0; b * F < level.size(); ++b) {
            key_weights acc;
            for (std::size_t i = b * F; i < std::min(level.size(), b * F + F); ++i) acc.add(level[i].key, level[i].weight);
            up.push_back(acc.best());
        }
        out.levels.push_back(std::move(level));
        level = std::move(up);
    }
    out.levels.push_back(std::move(level));
    return out;
}

std::uint64_t loaded_file::event_ts(const tm::event_ref& e) const {
    const tm::track& t = model.tracks[e.track];
    return e.is_instant ? t.instants[e.index].ts : t.slices[e.index].begin;
}

std::uint64_t loaded_file::event_end(const tm::event_ref& e) const {
    const tm::track& t = model.tracks[e.track];
    return e.is_instant ? t.instants[e.index].ts : t.slices[e.index].end;
}

std::unique_ptr<loaded_file> prepare_file(tm::trace_model model, std::filesystem::path path) {
    auto f = std::make_unique<loaded_file>();
    f->path = std::move(path);
    f->name = f->path.filename().string();
    f->model = std::move(model);
    // A model loaded from a file is typed already; one built by hand (tests) is typed here.
    if (f->model.names.size() != f->model.strings.size()) tm::type_slices(f->model);
    const tm::trace_model& m = f->model;
    f->key_of_string.resize(m.strings.size());
    f->instant_of_string.resize(m.strings.size());
    for (std::size_t i = 0; i < m.strings.size(); ++i) {
        f->key_of_string[i] = colour_of(m.names[i]);
        f->instant_of_string[i] = classify_instant_name(m.strings[i]);
    }
    f->depth_rows.resize(m.tracks.size());
    f->lost_instants.resize(m.tracks.size());
    f->counter_max.assign(m.tracks.size(), 0.0);
    for (std::size_t ti = 0; ti < m.tracks.size(); ++ti)
        for (const auto& c : m.tracks[ti].counters) f->counter_max[ti] = std::max(f->counter_max[ti], c.value);
    for (std::size_t ti = 0; ti < m.tracks.size(); ++ti)
        for (std::size_t k = 0; k < m.tracks[ti].instants.size(); ++k)
            if (f->instant_of_string[m.tracks[ti].instants[k].name] == instant_kind::events_lost)
                f->lost_instants[ti].push_back(static_cast<std::uint32_t>(k));
    for (std::size_t ti = 0; ti < m.tracks.size(); ++ti) {
        const tm::track& t = m.tracks[ti];
        std::uint16_t maxd = 0;
        for (const tm::slice& s : t.slices) maxd = std::max(maxd, s.depth);
        if (maxd == 0) continue;
        auto& rows = f->depth_rows[ti];
        rows.resize(maxd + 1u);
        for (std::size_t si = 0; si < t.slices.size(); ++si)
            rows[t.slices[si].depth].push_back(static_cast<std::uint32_t>(si));
    }
    f->summaries.resize(m.tracks.size());
    for (std::uint32_t ti = 0; ti < m.tracks.size(); ++ti) {
        const std::size_t depths = f->depth_rows[ti].empty() ? 1 : f->depth_rows[ti].size();
        for (std::size_t d = 0; d < depths; ++d) {
            const row_view r = f->row(ti, static_cast<std::uint16_t>(d));
            if (r.size < loaded_file::summary_min_slices) continue;
            f->summaries[ti].resize(depths);
            f->summaries[ti][d] = build_row_summary(r, f->key_of_string.data());
        }
    }
    f->flows_by_time.resize(m.flows.size());
    for (std::uint32_t i = 0; i < m.flows.size(); ++i) f->flows_by_time[i] = i;
    std::vector<std::uint64_t> ts(m.flows.size());
    for (std::uint32_t i = 0; i < m.flows.size(); ++i) {
        const tm::flow& fl = m.flows[i];
        ts[i] = std::min(fl.from.valid() ? f->event_ts(fl.from) : ~0ull, fl.to.valid() ? f->event_ts(fl.to) : ~0ull);
    }
    std::sort(f->flows_by_time.begin(), f->flows_by_time.end(), [&](auto a, auto b) { return ts[a] < ts[b]; });
    f->flow_time.resize(ts.size());
    for (std::size_t i = 0; i < ts.size(); ++i) f->flow_time[i] = ts[f->flows_by_time[i]];
    return f;
}

std::unique_ptr<loaded_file> load_file(const std::filesystem::path& path) {
    const auto t0 = std::chrono::steady_clock::now();
    // A damaged file shows what was read before the damage, as Perfetto's UI does (damage_note); a
    // recording cut short in its last packet shows its complete packets (a killed run's .tmp file).
    tm::read_options options;
    options.stop_at_damage = true;
    options.accept_cut_short = true;
    tm::trace_model model = tm::load_trace_file(path, options);
    if (!model.damage.empty() && model.packets == 0)
        throw std::runtime_error(path.string() + ": not a Perfetto trace: no packet could be read (" + model.damage + ")");
    if (model.packets == 0 && model.cut_short)
        throw std::runtime_error(path.string() + ": not a Perfetto trace: no packet could be read (its first packet is " +
                                 "cut short: the file ends at byte " + std::to_string(model.file_bytes) + ")");
    auto f = prepare_file(std::move(model), path);
    std::error_code ec;
    f->file_bytes = std::filesystem::file_size(path, ec);
    f->load_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    return f;
}

std::string damage_note(const loaded_file& f) {
    const tm::trace_model& m = f.model;
    if (m.damage.empty()) {
        std::string note;   // cut short, runs without a summary (trace_model.hpp, incomplete_notes)
        for (const std::string& n : tm::incomplete_notes(m, f.name)) note += (note.empty() ? "" : "; ") + n;
        return note;
    }
    return f.name + " is damaged at byte " + std::to_string(m.damage_offset) + " of " + std::to_string(m.damage_file_bytes) +
           ": showing the " + std::to_string(m.packets) + " packets of its first " + std::to_string(m.damage_intact_bytes) +
           " bytes, as Perfetto does (" + m.damage + ")";
}

std::string no_runs_note(const loaded_file& f) {
    const tm::trace_model& m = f.model;
    if (!m.runs.empty() || m.events > 0) return {};
    return f.name + ": no runs in this file (" + std::to_string(m.packets) + (m.packets == 1 ? " packet" : " packets") +
           ", no track event)";
}

std::uint64_t events_lost(const loaded_file& f, std::span<const std::uint32_t> tracks) {
    std::uint64_t n = 0;
    for (const std::uint32_t ti : tracks)
        for (const std::uint32_t k : f.lost_instants[ti])
            n += f.model.uint_arg(f.model.tracks[ti].instants[k], vocab::arg_key::dropped).value_or(1);
    return n;
}

void document::add(std::unique_ptr<loaded_file> f) {
    files.push_back(std::move(f));
    rebuild_runs();
}

void document::remove_file(std::uint32_t file) {
    if (file < files.size()) files.erase(files.begin() + file);
    rebuild_runs();
}

std::uint64_t document::event_count() const {
    std::uint64_t n = 0;
    // Track events as the file holds them (a slice is a begin and an end), as Perfetto counts them.
    for (const auto& f : files) n += f->model.events;
    return n;
}

namespace {
// Counts read from a run that lost events, or from a damaged file, are lower bounds: the title,
// which every view's header shows, says so.
// A run cut short (no run summary: the recording was killed) is incomplete too.
void mark_incomplete(run_ref& rr, const loaded_file& f, std::span<const std::uint32_t> tracks, bool unfinished = false) {
    rr.events_lost = events_lost(f, tracks);
    const bool cut = f.model.damage.empty() && f.model.cut_short;
    rr.truncated = !f.model.damage.empty() || cut || unfinished;
    if (rr.events_lost == 0 && !rr.truncated) return;
    rr.title += " \xC2\xB7 incomplete: ";
    if (rr.events_lost > 0) rr.title += std::to_string(rr.events_lost) + " events lost";
    if (rr.events_lost > 0 && rr.truncated) rr.title += ", ";
    if (!f.model.damage.empty()) rr.title += "file damaged at byte " + std::to_string(f.model.damage_offset);
    else if (cut) rr.title += "recording cut short at byte " + std::to_string(f.model.cut_short_at);
    else if (unfinished) rr.title += "no run summary (recording cut short)";
}
}   // namespace

void document::rebuild_runs() {
    runs.clear();
    for (std::uint32_t fi = 0; fi < files.size(); ++fi) {
        const loaded_file& f = *files[fi];
        for (analysis::run_scope& scope : analysis::scopes_of(f.model, f.name)) {
            run_ref rr;
            static_cast<analysis::run_scope&>(rr) = std::move(scope);
            rr.file = fi;
            if (rr.run != tm::no_index) {   // "ferret · piper · P=16 · virtual 16 cores"
                rr.virtual_badge = analysis::virtual_badge(analysis::read_meta(rr));
                if (!rr.virtual_badge.empty()) rr.title += " \xC2\xB7 " + rr.virtual_badge;
            }
            if (rr.run != tm::no_index && files.size() > 1) rr.title += "  [" + f.name + "]";
            if (rr.run != tm::no_index) {
                const tm::run& r = f.model.runs[rr.run];
                mark_incomplete(rr, f, r.tracks, r.metadata_valid && !r.summarized);
            } else {   // a foreign trace: every track with events is in the scope
                std::vector<std::uint32_t> all = rr.workers;
                for (const auto* group : {&rr.lines, &rr.counters, &rr.others})
                    all.insert(all.end(), group->begin(), group->end());
                mark_incomplete(rr, f, all);
            }
            runs.push_back(std::move(rr));
        }
    }
    start = ~0ull;
    end = 0;
    for (const auto& r : runs) {
        if (r.start == 0 && r.end == 0) continue;
        start = std::min(start, r.start);
        end = std::max(end, r.end);
    }
    if (start > end) start = end = 0;
}

}   // namespace pipescope::viewer
