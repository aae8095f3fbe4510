#include "bookmarks.hpp"

#include "track_arrangement.hpp"

#include <algorithm>
#include <tuple>

namespace pipescope::viewer {

double bookmark_time(const document& d, std::uint32_t file, const bookmark& b, bool aligned) {
    const std::uint32_t r = run_of_ordinal(d, file, b.run);
    const double off = r == tm::no_index ? static_cast<double>(d.start) : display_offset(d, d.runs[r], aligned);
    return static_cast<double>(b.ts) - off;
}

std::vector<placed_bookmark> placed_bookmarks(const document& d, const view_state& st) {
    std::vector<placed_bookmark> v;
    for (std::uint32_t f = 0; f < st.arranged.size() && f < d.files.size(); ++f)
        for (std::size_t i = 0; i < st.arranged[f].bookmarks.size(); ++i) {
            const bookmark& b = st.arranged[f].bookmarks[i];
            v.push_back({{f, i}, bookmark_time(d, f, b, st.align_runs), &b});
        }
    std::sort(v.begin(), v.end(), [](const placed_bookmark& a, const placed_bookmark& b) {
        return std::tie(a.t, a.ref.file, a.ref.index) < std::tie(b.t, b.ref.file, b.ref.index);
    });
    return v;
}

std::optional<bookmark_ref> add_bookmark(const document& d, view_state& st) {
    if (d.runs.empty()) return std::nullopt;
    std::uint32_t run = 0;
    double t = st.cursor ? *st.cursor : st.vp.t0 + st.vp.width * st.vp.npp / 2;
    if (const auto r = selection_range(d, st.sel, st.align_runs)) {
        t = r->first;
        if (const std::uint32_t sr = run_of(d, st.sel.file, st.sel.ev.track); sr != tm::no_index) run = sr;
    }
    const run_ref& rr = d.runs[run];
    const double ts = std::max(0.0, t + display_offset(d, rr, st.align_runs));
    if (st.arranged.size() < d.files.size()) st.arranged.resize(d.files.size());
    auto& list = st.arranged[rr.file].bookmarks;
    list.push_back({run_ordinal(d, run), static_cast<std::uint64_t>(ts + 0.5), ""});
    const bookmark_ref ref{rr.file, list.size() - 1};
    st.bookmark_edit = ref;
    st.bookmark_current = ref;
    st.cursor = bookmark_time(d, rr.file, list.back(), st.align_runs);
    return ref;
}

void jump_to_bookmark(const document& d, view_state& st, const placed_bookmark& p) {
    (void)d;
    st.cursor = p.t;
    st.playing = false;
    st.bookmark_current = p.ref;
    const double span = st.vp.width * st.vp.npp;
    if (p.t < st.vp.t0 || p.t > st.vp.t1()) st.vp.t0 = p.t - span / 2;
}

std::optional<bookmark_ref> step_bookmark(const document& d, view_state& st, int dir) {
    const std::vector<placed_bookmark> v = placed_bookmarks(d, st);
    if (v.empty()) return std::nullopt;
    const double from = st.cursor ? *st.cursor : st.vp.t0 + st.vp.width * st.vp.npp / 2;
    const auto cur = std::find_if(v.begin(), v.end(), [&](const placed_bookmark& p) {
        return st.bookmark_current && p.ref == *st.bookmark_current && p.t == from;
    });
    std::ptrdiff_t k;
    const auto n = static_cast<std::ptrdiff_t>(v.size());
    if (cur != v.end()) {
        k = ((cur - v.begin()) + (dir > 0 ? 1 : -1) + n) % n;
    } else if (dir > 0) {
        k = std::find_if(v.begin(), v.end(), [&](const placed_bookmark& p) { return p.t > from; }) - v.begin();
        if (k == n) k = 0;
    } else {
        k = std::find_if(v.rbegin(), v.rend(), [&](const placed_bookmark& p) { return p.t < from; }).base() - v.begin() - 1;
        if (k < 0) k = n - 1;
    }
    jump_to_bookmark(d, st, v[static_cast<std::size_t>(k)]);
    return v[static_cast<std::size_t>(k)].ref;
}

void remove_bookmark(view_state& st, bookmark_ref r) {
    if (r.file >= st.arranged.size() || r.index >= st.arranged[r.file].bookmarks.size()) return;
    auto& list = st.arranged[r.file].bookmarks;
    list.erase(list.begin() + static_cast<std::ptrdiff_t>(r.index));
    st.bookmark_edit.reset();
    st.bookmark_current.reset();
}

}   // namespace pipescope::viewer
