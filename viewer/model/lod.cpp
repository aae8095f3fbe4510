#include "lod.hpp"

#include <algorithm>
#include <array>
#include <cmath>

namespace pipescope::viewer {

std::size_t first_ending_at_or_after(const row_view& row, double t) {
    std::size_t lo = 0, hi = row.size;
    while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (static_cast<double>(row[mid].end) < t) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

namespace {

// First position in [lo, hi) whose slice begins at or after t. Galloping from lo: the answer is
// usually near lo (the next pixel column), so probing lo+1, lo+3, lo+7, ... before the binary search
// keeps the reads within a few cache lines instead of jumping across the whole row. `begin_of(k)`
// gives the begin of position k (of the slices, or of a summary's groups).
template <class BeginOf>
std::size_t first_at_or_after(std::size_t lo, std::size_t hi, double t, BeginOf begin_of) {
    for (std::size_t step = 1; lo + step < hi; step *= 2) {
        if (static_cast<double>(begin_of(lo + step)) >= t) {
            hi = lo + step;
            break;
        }
        lo += step;
    }
    while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (static_cast<double>(begin_of(mid)) < t) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

std::size_t first_beginning_at_or_after(const row_view& row, std::size_t lo, std::size_t hi, double t) {
    return first_at_or_after(lo, hi, t, [&](std::size_t k) { return row[k].begin; });
}

// A pixel column made of whole summary groups (document.hpp, row_summary) never reads the slices:
// it starts at group g0 and takes every group that begins before the column's end, if there are at
// least this many (so that the dominant colour comes from the summary, not from the slices).
constexpr std::size_t min_whole_groups = 5;   // 80 slices: more than max_exact (64)

colour_key dominant(const row_view& row, const colour_key* keys, std::size_t i, std::size_t j, int max_exact) {
    struct acc {
        colour_key key;
        double w;
    };
    std::array<acc, 128> a;
    std::size_t na = 0;
    auto add_key = [&](colour_key k, double w) {
        for (std::size_t q = 0; q < na; ++q)
            if (a[q].key == k) {
                a[q].w += w;
                return;
            }
        if (na < a.size()) a[na++] = {k, w};
    };
    auto add = [&](const tm::slice& s) {   // +1: zero-length slices count too
        add_key(keys[s.name], static_cast<double>(s.end - s.begin) + 1.0);
    };
    const std::size_t n = j - i;
    const std::size_t cap = static_cast<std::size_t>(std::clamp(max_exact, 1, 128));
    if (n <= cap) {
        for (std::size_t q = i; q < j; ++q) add(row[q]);
    } else if (const row_summary* sum = row.summary; sum && n >= 4 * row_summary::fan_out) {
        // From the summary: the coarsest level with at least 4 whole groups inside [i, j), read in
        // one contiguous run (at most ~4 * 16 entries); the partial groups at the edges are left out.
        std::size_t level = 0, size = row_summary::fan_out;
        while (level + 1 < sum->levels.size() && n >= 4 * size * row_summary::fan_out) {
            ++level;
            size *= row_summary::fan_out;
        }
        const auto& entries = sum->levels[level];
        const std::size_t b0 = (i + size - 1) / size, b1 = std::min(j / size, entries.size());
        for (std::size_t b = b0; b < b1; ++b) add_key(entries[b].key, entries[b].weight);
    } else {
        // Sampled: 16 evenly spread slices (each is likely a cache miss at this zoom).
        constexpr std::size_t samples = 16;
        for (std::size_t q = 0; q < samples; ++q) add(row[i + q * (n - 1) / (samples - 1)]);
    }
    std::size_t best = 0;
    for (std::size_t q = 1; q < na; ++q)
        if (a[q].w > a[best].w) best = q;
    return na ? a[best].key : key_other;
}

}   // namespace

void lod_merge(const row_view& row, const colour_key* keys, const lod_params& p, std::vector<lod_block>& out) {
    out.clear();
    if (row.size == 0 || p.npp <= 0 || p.width <= 0) return;
    const double tl = p.t_left, npp = p.npp;
    const double tr = tl + p.width * npp;
    auto px = [&](double t) { return (t - tl) / npp; };
    std::size_t i = first_ending_at_or_after(row, tl);
    const std::size_t n = row.size;
    auto emit_merged = [&](double c, double x1, std::size_t i0, std::size_t j, colour_key k) {
        if (!out.empty() && out.back().merged_flag && out.back().key == k && out.back().x1 >= c) {
            out.back().x1 = std::max(out.back().x1, x1);
            out.back().count += static_cast<std::uint32_t>(j - i0);
            return;
        }
        lod_block b;
        b.x0 = c;
        b.x1 = x1;
        b.first = static_cast<std::uint32_t>(i0);
        b.count = static_cast<std::uint32_t>(j - i0);
        b.key = k;
        b.merged_flag = true;
        out.push_back(b);
    };
    const row_summary* sum = row.summary;
    constexpr std::size_t F = row_summary::fan_out;
    const double narrow = p.min_px * npp;   // slices narrower than this are merged
    while (i < n) {
        if (sum && i % F == 0) {
            // Group level: every slice of a group that spans less than `narrow` (first begin to last
            // end) is narrow. Groups g0 + 1 .. g - 2 lie inside the column, so they are narrow too.
            const std::vector<std::uint64_t>& gb = sum->group_begin;
            const std::vector<std::uint64_t>& ge = sum->group_end;
            const std::size_t g0 = i / F;
            if (static_cast<double>(gb[g0]) >= tr) break;
            if (static_cast<double>(ge[g0] - gb[g0]) < narrow) {
                const double c = std::floor(px(static_cast<double>(gb[g0])));
                const double tc1 = tl + (c + 1) * npp;
                const std::size_t g = first_at_or_after(g0 + 1, gb.size(), tc1, [&](std::size_t k) { return gb[k]; });
                if (g - g0 >= min_whole_groups && static_cast<double>(ge[g - 1] - gb[g - 1]) < narrow) {
                    // Group g - 1's slices that begin at or after tc1 join this column (less than a
                    // pixel at this density); the block still covers exactly the slices' union.
                    const std::size_t j = std::min(n, g * F);
                    emit_merged(c, std::max(c + 1, px(static_cast<double>(ge[g - 1]))), i, j,
                                dominant(row, keys, i, j, p.max_exact));
                    i = j;
                    continue;
                }
            }
        }
        const tm::slice& s = row[i];
        if (static_cast<double>(s.begin) >= tr) break;
        const double w = static_cast<double>(s.end - s.begin) / npp;
        if (w >= p.min_px) {
            lod_block b;
            b.x0 = px(static_cast<double>(s.begin));
            b.x1 = px(static_cast<double>(s.end));
            b.first = static_cast<std::uint32_t>(i);
            b.count = 1;
            b.key = keys[s.name];
            out.push_back(b);
            ++i;
            continue;
        }
        const double c = std::floor(px(static_cast<double>(s.begin)));
        const double tc1 = tl + (c + 1) * npp;
        std::size_t j = first_beginning_at_or_after(row, i + 1, n, tc1);
        if (j == i) j = i + 1;
        if (j - 1 > i && static_cast<double>(row[j - 1].end - row[j - 1].begin) / npp >= p.min_px) --j;
        emit_merged(c, std::max(c + 1, px(static_cast<double>(row[j - 1].end))), i, j,
                    dominant(row, keys, i, j, p.max_exact));
        i = j;
    }
}

std::size_t hit_row(const row_view& row, double t, double tol) {
    if (row.size == 0) return npos;
    const std::size_t k = first_ending_at_or_after(row, t);
    if (k < row.size && static_cast<double>(row[k].begin) <= t) return k;
    double best = tol;
    std::size_t hit = npos;
    if (k < row.size) {
        const double d = static_cast<double>(row[k].begin) - t;
        if (d <= best) {
            best = d;
            hit = k;
        }
    }
    if (k > 0) {
        const double d = t - static_cast<double>(row[k - 1].end);
        if (d <= best) {
            best = d;
            hit = k - 1;
        }
    }
    return hit;
}

std::size_t hit_instant(const std::vector<tm::instant>& v, double t, double tol) {
    auto it = std::partition_point(v.begin(), v.end(), [&](const tm::instant& x) { return static_cast<double>(x.ts) < t; });
    std::size_t k = static_cast<std::size_t>(it - v.begin());
    std::size_t hit = npos;
    double best = tol;
    if (k < v.size() && static_cast<double>(v[k].ts) - t <= best) {
        best = static_cast<double>(v[k].ts) - t;
        hit = k;
    }
    if (k > 0 && t - static_cast<double>(v[k - 1].ts) <= best) hit = k - 1;
    return hit;
}

void instant_buckets(const std::vector<tm::instant>& v, const instant_kind* kind_of_name, const lod_params& p,
                     double bucket_px, std::vector<instant_bucket>& out) {
    out.clear();
    const double bucket_ns = bucket_px * p.npp;
    if (v.empty() || !(bucket_ns > 0)) return;
    const double tr = p.t_left + p.width * p.npp;
    auto ts_lt = [](const tm::instant& a, double t) { return static_cast<double>(a.ts) < t; };
    auto i = std::lower_bound(v.begin(), v.end(), p.t_left, ts_lt);
    while (i != v.end() && static_cast<double>(i->ts) < tr) {
        const double b = std::floor(static_cast<double>(i->ts) / bucket_ns);   // its bucket on the fixed grid
        const double bucket_end = (b + 1) * bucket_ns;
        const auto j = std::lower_bound(i + 1, v.end(), bucket_end, ts_lt);
        instant_bucket out_b;
        out_b.x0 = std::max(0.0, (b * bucket_ns - p.t_left) / p.npp);
        out_b.x1 = std::min(p.width, (bucket_end - p.t_left) / p.npp);
        out_b.first = static_cast<std::uint32_t>(i - v.begin());
        out_b.count = static_cast<std::uint32_t>(j - i);
        // The most frequent kind, over at most 16 evenly spread instants.
        std::array<std::uint32_t, 16> votes{};
        const std::size_t n = out_b.count, samples = std::min<std::size_t>(n, 16);
        for (std::size_t q = 0; q < samples; ++q) {
            const auto k = static_cast<std::size_t>(kind_of_name[(i + static_cast<std::ptrdiff_t>(q * n / samples))->name]);
            if (k < votes.size()) ++votes[k];
        }
        out_b.kind = static_cast<instant_kind>(std::max_element(votes.begin(), votes.end()) - votes.begin());
        out.push_back(out_b);
        i = j;
    }
}

lost_events lost_events_near(const loaded_file& f, std::uint32_t track, double t, double tol) {
    lost_events out;
    if (track >= f.lost_instants.size()) return out;
    const auto& lost = f.lost_instants[track];   // positions in the track's instants, in time order
    const auto& v = f.model.tracks[track].instants;
    auto it = std::lower_bound(lost.begin(), lost.end(), t - tol,
                               [&](std::uint32_t k, double x) { return static_cast<double>(v[k].ts) < x; });
    for (; it != lost.end() && static_cast<double>(v[*it].ts) <= t + tol; ++it) {
        if (!out.markers) out.first_ts = v[*it].ts;
        out.dropped += f.model.uint_arg(v[*it], vocab::arg_key::dropped).value_or(1);
        ++out.markers;
    }
    return out;
}

void counter_lod(const std::vector<tm::counter_sample>& v, const lod_params& p, std::vector<counter_column>& out,
                 double* value_before) {
    out.clear();
    if (v.empty() || p.npp <= 0) return;
    const double tl = p.t_left, npp = p.npp, tr = tl + p.width * npp;
    auto ts_lt = [](const tm::counter_sample& s, double t) { return static_cast<double>(s.ts) < t; };
    std::size_t i = static_cast<std::size_t>(std::lower_bound(v.begin(), v.end(), tl, ts_lt) - v.begin());
    if (value_before) *value_before = i > 0 ? v[i - 1].value : v.front().value;
    const std::size_t cap = static_cast<std::size_t>(std::max(1, p.max_exact));
    while (i < v.size() && static_cast<double>(v[i].ts) < tr) {
        const double c = std::floor((static_cast<double>(v[i].ts) - tl) / npp);
        const double tc1 = tl + (c + 1) * npp;
        std::size_t j = static_cast<std::size_t>(std::lower_bound(v.begin() + i + 1, v.end(), tc1, ts_lt) - v.begin());
        counter_column col;
        col.x = c;
        col.lo = col.hi = v[i].value;
        const std::size_t n = j - i;
        const std::size_t step = n <= cap ? 1 : n / cap;
        for (std::size_t q = i; q < j; q += step) {
            col.lo = std::min(col.lo, v[q].value);
            col.hi = std::max(col.hi, v[q].value);
        }
        col.last = v[j - 1].value;
        col.lo = std::min(col.lo, col.last);
        col.hi = std::max(col.hi, col.last);
        out.push_back(col);
        i = j;
    }
}

}   // namespace pipescope::viewer
