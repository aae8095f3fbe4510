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

// First position in [lo, hi) whose slice begins at or after t.
std::size_t first_beginning_at_or_after(const row_view& row, std::size_t lo, std::size_t hi, double t) {
    while (lo < hi) {
        const std::size_t mid = lo + (hi - lo) / 2;
        if (static_cast<double>(row[mid].begin) < t) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

colour_key dominant(const row_view& row, const colour_key* keys, std::size_t i, std::size_t j, int max_exact) {
    struct acc { colour_key key; double w; };
    std::array<acc, 128> a;
    std::size_t na = 0;
    auto add = [&](const tm::slice& s) {
        const colour_key k = keys[s.name];
        const double w = static_cast<double>(s.end - s.begin) + 1.0;  // +1: zero-length slices count too
        for (std::size_t q = 0; q < na; ++q)
            if (a[q].key == k) { a[q].w += w; return; }
        if (na < a.size()) a[na++] = {k, w};
    };
    const std::size_t n = j - i;
    const std::size_t cap = static_cast<std::size_t>(std::clamp(max_exact, 1, 128));
    if (n <= cap) {
        for (std::size_t q = i; q < j; ++q) add(row[q]);
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

}  // namespace

void lod_merge(const row_view& row, const colour_key* keys, const lod_params& p, std::vector<lod_block>& out) {
    out.clear();
    if (row.size == 0 || p.npp <= 0 || p.width <= 0) return;
    const double tl = p.t_left, npp = p.npp;
    const double tr = tl + p.width * npp;
    auto px = [&](double t) { return (t - tl) / npp; };
    std::size_t i = first_ending_at_or_after(row, tl);
    const std::size_t n = row.size;
    while (i < n) {
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
        const double x1 = std::max(c + 1, px(static_cast<double>(row[j - 1].end)));
        const colour_key k = dominant(row, keys, i, j, p.max_exact);
        if (!out.empty() && out.back().merged_flag && out.back().key == k && out.back().x1 >= c) {
            out.back().x1 = std::max(out.back().x1, x1);
            out.back().count += static_cast<std::uint32_t>(j - i);
        } else {
            lod_block b;
            b.x0 = c;
            b.x1 = x1;
            b.first = static_cast<std::uint32_t>(i);
            b.count = static_cast<std::uint32_t>(j - i);
            b.key = k;
            b.merged_flag = true;
            out.push_back(b);
        }
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
        if (d <= best) { best = d; hit = k; }
    }
    if (k > 0) {
        const double d = t - static_cast<double>(row[k - 1].end);
        if (d <= best) { best = d; hit = k - 1; }
    }
    return hit;
}

std::size_t hit_instant(const std::vector<tm::instant>& v, double t, double tol) {
    auto it = std::partition_point(v.begin(), v.end(), [&](const tm::instant& x) { return static_cast<double>(x.ts) < t; });
    std::size_t k = static_cast<std::size_t>(it - v.begin());
    std::size_t hit = npos;
    double best = tol;
    if (k < v.size() && static_cast<double>(v[k].ts) - t <= best) { best = static_cast<double>(v[k].ts) - t; hit = k; }
    if (k > 0 && t - static_cast<double>(v[k - 1].ts) <= best) hit = k - 1;
    return hit;
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

}  // namespace pipescope::viewer
