#include "arrangement_state.hpp"

#include "../model/bookmarks.hpp"
#include "../model/track_arrangement.hpp"

namespace pipescope::viewer {

namespace {

using json = nlohmann::json;

json named_tracks(const document& d, std::uint32_t file, const std::vector<std::uint32_t>& tracks) {
    json a = json::array();
    for (const std::uint32_t t : tracks)
        if (t < d.files[file]->model.tracks.size())
            a.push_back({{"file", file}, {"name", d.files[file]->model.tracks[t].name}});
    return a;
}

json tracks_json(const document& d, const view_state& st) {
    const track_arrangement arr = arrange_tracks(d, st.arranged, st.track_filter);
    json pinned = json::array(), hidden = json::array(), collapsed = json::array(), drawn = json::array();
    for (std::uint32_t f = 0; f < st.arranged.size() && f < d.files.size(); ++f) {
        for (const json& e : named_tracks(d, f, st.arranged[f].pinned)) pinned.push_back(e);
        for (const json& e : named_tracks(d, f, st.arranged[f].hidden)) hidden.push_back(e);
    }
    auto name = [&](std::uint32_t f, std::uint32_t t) { return d.files[f]->model.tracks[t].name; };
    for (const pinned_track& p : arr.pinned) drawn.push_back(name(p.file, p.track.track));
    for (std::uint32_t r = 0; r < arr.runs.size(); ++r) {
        if (arr.runs[r].collapsed) collapsed.push_back(r);
        for (const run_track& t : arr.runs[r].shown) drawn.push_back(name(d.runs[r].file, t.track));
    }
    return {{"filter", st.track_filter},    {"pinned", std::move(pinned)},       {"hidden", std::move(hidden)},
            {"hidden_count", arr.hidden()}, {"collapsed", std::move(collapsed)}, {"drawn", std::move(drawn)}};
}

json bookmarks_json(const document& d, const view_state& st) {
    json a = json::array();
    for (const placed_bookmark& p : placed_bookmarks(d, st))
        a.push_back({{"file", p.ref.file},
                     {"run", p.b->run},
                     {"ts", p.b->ts},
                     {"time", p.t},
                     {"note", p.b->note},
                     {"current", st.bookmark_current && *st.bookmark_current == p.ref}});
    return a;
}

}   // namespace

json arrangement_state_json(const document& d, const view_state& st) {
    return {{"tracks", tracks_json(d, st)}, {"bookmarks", bookmarks_json(d, st)}};
}

}   // namespace pipescope::viewer
