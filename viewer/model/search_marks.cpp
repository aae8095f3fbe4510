#include "search_marks.hpp"

#include "search.hpp"

#include <algorithm>
#include <cmath>

namespace pipescope::viewer {

namespace {

// The first position of `row` whose slice begins at or after t (begins are sorted in a row).
std::size_t first_beginning_at_or_after(const row_view& row, double t) {
    auto before = [&](const tm::slice& s) { return static_cast<double>(s.begin) < t; };
    if (!row.index)
        return static_cast<std::size_t>(std::partition_point(row.slices, row.slices + row.size, before) - row.slices);
    const std::uint32_t* end = row.index + row.size;
    return static_cast<std::size_t>(
        std::partition_point(row.index, end, [&](std::uint32_t k) { return before(row.slices[k]); }) - row.index);
}

}   // namespace

std::size_t row_position(const row_view& row, std::uint32_t slice_index) {
    if (!row.index) return slice_index;   // the row is the whole track
    const std::uint64_t begin = row.slices[slice_index].begin;
    std::size_t lo = first_beginning_at_or_after(row, static_cast<double>(begin));
    while (lo < row.size && row.index[lo] != slice_index) ++lo;   // zero-length slices may share a begin
    return lo;
}

void search_marks::build(const document& d, const std::vector<search_match>& matches) {
    clear();
    files_.resize(d.files.size());
    for (const search_match& m : matches) {
        if (m.file >= d.files.size()) continue;
        const loaded_file& f = *d.files[m.file];
        if (m.ev.track >= f.model.tracks.size()) continue;
        auto& tracks = files_[m.file];
        if (tracks.empty()) tracks.resize(f.model.tracks.size());
        track_marks& t = tracks[m.ev.track];
        if (m.ev.is_instant) {
            t.instants.push_back(m.ev.index);
        } else {
            const std::uint16_t depth = f.model.tracks[m.ev.track].slices[m.ev.index].depth;
            if (t.rows.size() <= depth) t.rows.resize(depth + 1u);
            t.rows[depth].push_back(static_cast<std::uint32_t>(row_position(f.row(m.ev.track, depth), m.ev.index)));
        }
        ++count_;
    }
    for (auto& tracks : files_)
        for (track_marks& t : tracks) {
            for (auto& r : t.rows) std::sort(r.begin(), r.end());
            std::sort(t.instants.begin(), t.instants.end());
        }
}

const std::vector<std::uint32_t>* search_marks::row(std::uint32_t file, std::uint32_t track, std::uint16_t depth) const {
    if (file >= files_.size() || track >= files_[file].size()) return nullptr;
    const auto& rows = files_[file][track].rows;
    return depth < rows.size() && !rows[depth].empty() ? &rows[depth] : nullptr;
}

const std::vector<std::uint32_t>* search_marks::instants(std::uint32_t file, std::uint32_t track) const {
    if (file >= files_.size() || track >= files_[file].size()) return nullptr;
    const auto& v = files_[file][track].instants;
    return v.empty() ? nullptr : &v;
}

namespace {

// Appends column c (pixel [c, c + 1)) to out, joining it to the column mark before it if adjacent.
void add_column(std::vector<mark_span>& out, double c, std::uint32_t pos) {
    if (!out.empty() && out.back().column && out.back().x1 >= c) {
        out.back().x1 = std::max(out.back().x1, c + 1);
        return;
    }
    out.push_back({c, c + 1, pos, true});
}

// The first k in [lo, hi) for which before(k) is false (it holds for a prefix), probing lo, lo + 1,
// lo + 3, lo + 7, ... before a binary search: the next column's first match is usually near, so the
// reads stay within a few cache lines instead of jumping across millions of entries.
template <class Before>
std::size_t gallop(std::size_t lo, std::size_t hi, Before&& before) {
    std::size_t a = lo, b = lo, step = 1;
    while (b < hi && before(b)) {
        a = b + 1;
        step *= 2;
        b = lo + step - 1;
    }
    b = std::min(b, hi);
    while (a < b) {
        const std::size_t mid = a + (b - a) / 2;
        if (before(mid)) a = mid + 1;
        else b = mid;
    }
    return a;
}

// Walks the matched positions in view: `at(pos)` gives [x0, x1) in pixels, `begin_of(pos)` the
// event's start (ns; ascending with pos). A match at least min_px wide is a mark of its own, narrower
// ones mark their pixel column once: the walk then gallops to the first match starting after it.
template <class At, class BeginOf>
void walk_marks(const std::vector<std::uint32_t>& marks, std::size_t first_visible, const lod_params& p, At&& at,
                BeginOf&& begin_of, std::vector<mark_span>& out) {
    auto it = std::lower_bound(marks.begin(), marks.end(), first_visible);
    while (it != marks.end()) {
        const auto [x0, x1] = at(*it);
        if (x0 >= p.width) break;
        if (x1 - x0 >= p.min_px) {
            out.push_back({x0, x1, *it, false});
            ++it;
            continue;
        }
        const double c = std::floor(x0);
        add_column(out, c, *it);
        // Every other match starting in this column is in the same mark, but for the last event
        // starting in it, which may be wide (events of a row do not overlap: only the last can
        // reach past the column): then it is a mark of its own.
        const double column_end = p.t_left + (c + 1) * p.npp;
        const auto from = static_cast<std::size_t>(it - marks.begin()) + 1;
        const auto after = marks.begin() + static_cast<std::ptrdiff_t>(gallop(from, marks.size(), [&](std::size_t k) {
                               return begin_of(marks[k]) < column_end;
                           }));
        if (after - it > 1) {
            const auto [lx0, lx1] = at(*(after - 1));
            if (lx1 - lx0 >= p.min_px) out.push_back({lx0, lx1, *(after - 1), false});
        }
        it = after;
    }
}

}   // namespace

void row_marks(const row_view& row, const std::vector<std::uint32_t>& marks, const lod_params& p,
               std::vector<mark_span>& out) {
    out.clear();
    auto at = [&](std::uint32_t pos) {
        const tm::slice& s = row[pos];
        return std::pair{(static_cast<double>(s.begin) - p.t_left) / p.npp, (static_cast<double>(s.end) - p.t_left) / p.npp};
    };
    auto begin_of = [&](std::uint32_t pos) { return static_cast<double>(row[pos].begin); };
    walk_marks(marks, first_ending_at_or_after(row, p.t_left), p, at, begin_of, out);
}

void instant_marks(const std::vector<tm::instant>& instants, const std::vector<std::uint32_t>& marks, const lod_params& p,
                   std::vector<mark_span>& out) {
    out.clear();
    auto at = [&](std::uint32_t k) {
        const double x = (static_cast<double>(instants[k].ts) - p.t_left) / p.npp;
        return std::pair{x, x};   // a point: always a column
    };
    auto begin_of = [&](std::uint32_t k) { return static_cast<double>(instants[k].ts); };
    const std::size_t first_visible =
        gallop(0, instants.size(), [&](std::size_t k) { return static_cast<double>(instants[k].ts) < p.t_left; });
    walk_marks(marks, first_visible, p, at, begin_of, out);
}

}   // namespace pipescope::viewer
