#include "track_arrangement.hpp"

#include <algorithm>
#include <cctype>

namespace pipescope::viewer {

namespace {

char lower(char c) { return static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }

bool contains_nocase(std::string_view text, std::string_view word) {
    return std::search(text.begin(), text.end(), word.begin(), word.end(),
                       [](char a, char b) { return lower(a) == lower(b); }) != text.end();
}

const file_arrangement& arrangement_of(const std::vector<file_arrangement>& files, std::uint32_t f) {
    static const file_arrangement none;
    return f < files.size() ? files[f] : none;
}

}   // namespace

std::size_t track_arrangement::hidden() const {
    std::size_t n = 0;
    for (const run_arrangement& r : runs) n += r.hidden;
    return n;
}

bool track_name_matches(std::string_view name, std::string_view filter) {
    std::size_t i = 0;
    while (i < filter.size()) {
        while (i < filter.size() && std::isspace(static_cast<unsigned char>(filter[i]))) ++i;
        std::size_t j = i;
        while (j < filter.size() && !std::isspace(static_cast<unsigned char>(filter[j]))) ++j;
        if (j > i && !contains_nocase(name, filter.substr(i, j - i))) return false;
        i = j;
    }
    return true;
}

std::vector<run_track> tracks_of_run(const run_ref& r) {
    std::vector<run_track> v;
    v.reserve(r.workers.size() + r.lines.size() + r.counters.size() + r.others.size());
    for (const auto t : r.workers) v.push_back({t, track_group::worker});
    for (const auto t : r.lines) v.push_back({t, track_group::line});
    for (const auto t : r.counters) v.push_back({t, track_group::counter});
    for (const auto t : r.others) v.push_back({t, track_group::other});
    return v;
}

run_arrangement arrange_run(std::span<const run_track> tracks, std::span<const std::string_view> names,
                            const file_arrangement& a, std::string_view filter, bool collapsed) {
    run_arrangement r;
    r.collapsed = collapsed;
    for (std::size_t i = 0; i < tracks.size(); ++i) {
        const std::uint32_t t = tracks[i].track;
        if (contains(a.hidden, t)) ++r.hidden;
        else if (contains(a.pinned, t)) ++r.pinned;
        else if (!track_name_matches(i < names.size() ? names[i] : std::string_view{}, filter)) ++r.filtered;
        else if (!collapsed) r.shown.push_back(tracks[i]);
    }
    return r;
}

std::uint32_t run_ordinal(const document& d, std::uint32_t run) {
    std::uint32_t k = 0;
    for (std::uint32_t r = 0; r < run && r < d.runs.size(); ++r) k += d.runs[r].file == d.runs[run].file;
    return k;
}

std::uint32_t run_of_ordinal(const document& d, std::uint32_t file, std::uint32_t ordinal) {
    for (std::uint32_t r = 0; r < d.runs.size(); ++r)
        if (d.runs[r].file == file && ordinal-- == 0) return r;
    return tm::no_index;
}

track_arrangement arrange_tracks(const document& d, const std::vector<file_arrangement>& files, std::string_view filter) {
    track_arrangement out;
    out.runs.reserve(d.runs.size());
    std::vector<std::string_view> names;
    for (std::uint32_t ri = 0; ri < d.runs.size(); ++ri) {
        const run_ref& rr = d.runs[ri];
        const file_arrangement& a = arrangement_of(files, rr.file);
        const std::vector<run_track> tracks = tracks_of_run(rr);
        names.clear();
        for (const run_track& t : tracks) names.push_back(d.files[rr.file]->model.tracks[t.track].name);
        out.runs.push_back(arrange_run(tracks, names, a, filter, contains(a.collapsed_runs, run_ordinal(d, ri))));
    }
    for (std::uint32_t f = 0; f < d.files.size(); ++f)
        for (const std::uint32_t t : arrangement_of(files, f).pinned) {
            if (contains(arrangement_of(files, f).hidden, t)) continue;
            for (std::uint32_t ri = 0; ri < d.runs.size(); ++ri) {
                if (d.runs[ri].file != f) continue;
                const std::vector<run_track> tracks = tracks_of_run(d.runs[ri]);
                const auto it = std::find_if(tracks.begin(), tracks.end(), [&](const run_track& x) { return x.track == t; });
                if (it != tracks.end()) {
                    out.pinned.push_back({f, ri, *it});
                    break;
                }
            }
        }
    return out;
}

}   // namespace pipescope::viewer
