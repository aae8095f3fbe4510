// Per-stage summaries of executions, folded ranges included (stage_runs.hpp).
#include "stage_runs.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <set>

namespace pipescope::analysis::detail {

void stage_runs::add(std::uint64_t stage, double duration, std::uint64_t count, bool share, const run_place& where) {
    if (count == 0) return;
    singles_.push_back({stage, duration, count, share, static_cast<std::uint32_t>(places_.size())});
    places_.push_back(where);
}

void stage_runs::add_range(std::uint64_t first, std::uint64_t last, double duration, const run_place& where) {
    if (last < first) return;
    ranges_.push_back({first, last, duration, static_cast<std::uint32_t>(places_.size())});
    places_.push_back(where);
}

namespace {

// Counts per value rank; the k-th smallest by descent.
class fenwick {
public:
    explicit fenwick(std::size_t n) : t_(n + 1, 0) {
        while (top_ * 2 <= n) top_ *= 2;
    }
    void add(std::size_t i, std::int64_t v) {
        for (++i; i < t_.size(); i += i & (~i + 1)) t_[i] = static_cast<std::uint64_t>(static_cast<std::int64_t>(t_[i]) + v);
    }
    // The rank of the k-th smallest (1-based k <= the total).
    std::size_t kth(std::uint64_t k) const {
        std::size_t pos = 0;
        for (std::size_t step = top_; step > 0; step /= 2)
            if (pos + step < t_.size() && t_[pos + step] < k) pos += step, k -= t_[pos];
        return pos;   // 0-based rank
    }

private:
    std::vector<std::uint64_t> t_;
    std::size_t top_ = 1;
};

std::uint64_t whole_ns(long double v) {
    return v > 0 ? static_cast<std::uint64_t>(std::llround(static_cast<double>(v))) : 0;
}

}   // namespace

std::vector<stage_runs::result> stage_runs::summarize() const {
    std::vector<result> out;
    if (singles_.empty() && ranges_.empty()) return out;
    // Distinct durations, for ranks.
    std::vector<double> values;
    values.reserve(singles_.size() + ranges_.size());
    for (const auto& s : singles_) values.push_back(s.duration);
    for (const auto& r : ranges_) values.push_back(r.duration);
    std::sort(values.begin(), values.end());
    values.erase(std::unique(values.begin(), values.end()), values.end());
    auto rank = [&](double v) {
        return static_cast<std::size_t>(std::lower_bound(values.begin(), values.end(), v) - values.begin());
    };
    fenwick fw(values.size());

    std::vector<std::uint32_t> singles(singles_.size()), adds(ranges_.size()), removes(ranges_.size());
    std::iota(singles.begin(), singles.end(), 0u);
    std::iota(adds.begin(), adds.end(), 0u);
    std::iota(removes.begin(), removes.end(), 0u);
    std::stable_sort(singles.begin(), singles.end(), [&](auto a, auto b) { return singles_[a].stage < singles_[b].stage; });
    std::stable_sort(adds.begin(), adds.end(), [&](auto a, auto b) { return ranges_[a].first < ranges_[b].first; });
    std::stable_sort(removes.begin(), removes.end(), [&](auto a, auto b) { return ranges_[a].last < ranges_[b].last; });

    // The ranges covering the current stage: counts by rank, their sum, the longest first (ties: the first added).
    auto longer = [&](std::uint32_t a, std::uint32_t b) {
        const auto &x = ranges_[a], &y = ranges_[b];
        return x.duration > y.duration || (x.duration == y.duration && x.place < y.place);
    };
    std::set<std::uint32_t, decltype(longer)> active(longer);
    std::multiset<std::uint64_t> active_last;
    long double active_total = 0;
    std::size_t si = 0, ai = 0, ri = 0;
    std::uint64_t j = std::min(si < singles.size() ? singles_[singles[0]].stage : ~std::uint64_t{0},
                               ai < adds.size() ? ranges_[adds[0]].first : ~std::uint64_t{0});
    for (;;) {
        for (; ai < adds.size() && ranges_[adds[ai]].first <= j; ++ai) {
            const range& r = ranges_[adds[ai]];
            fw.add(rank(r.duration), 1);
            active_total += r.duration;
            active.insert(adds[ai]);
            active_last.insert(r.last);
        }
        for (; ri < removes.size() && ranges_[removes[ri]].last < j; ++ri) {
            const range& r = ranges_[removes[ri]];
            fw.add(rank(r.duration), -1);
            active_total -= r.duration;
            active.erase(removes[ri]);
            active_last.erase(active_last.find(r.last));
        }
        const std::size_t sb = si;
        while (si < singles.size() && singles_[singles[si]].stage == j) ++si;
        if (si > sb || !active.empty()) {
            result res;
            res.stage = j;
            std::uint64_t n = active.size();
            long double total = active_total;
            res.shares = active.size();
            double best = -1;
            const run_place* best_at = nullptr;
            if (!active.empty())
                best = ranges_[*active.begin()].duration, best_at = &places_[ranges_[*active.begin()].place];
            for (std::size_t k = sb; k < si; ++k) {
                const single& s = singles_[singles[k]];
                n += s.count;
                total += static_cast<long double>(s.duration) * static_cast<long double>(s.count);
                if (s.share) res.shares += s.count;
                if (s.duration > best ||
                    (s.duration == best && best_at && s.place < static_cast<std::uint32_t>(best_at - places_.data())))
                    best = s.duration, best_at = &places_[s.place];
                fw.add(rank(s.duration), static_cast<std::int64_t>(s.count));
            }
            // Nearest rank: p_q is the ceil(q n)-th smallest.
            auto pct = [&](double q) {
                const auto k =
                    std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(n))), 1, n);
                return whole_ns(values[fw.kth(k)]);
            };
            res.service.count = n;
            res.service.total = whole_ns(total);
            res.service.mean = static_cast<double>(total / static_cast<long double>(n));
            res.service.p50 = pct(0.50);
            res.service.p95 = pct(0.95);
            res.service.max = whole_ns(best);
            if (best_at) res.longest = *best_at;
            for (std::size_t k = sb; k < si; ++k)
                fw.add(rank(singles_[singles[k]].duration), -static_cast<std::int64_t>(singles_[singles[k]].count));
            out.push_back(res);
        }
        // The next stage: the next single's, the next range's first, or the next one a range covers.
        std::uint64_t next = ~std::uint64_t{0};
        bool any = false;
        if (si < singles.size()) next = singles_[singles[si]].stage, any = true;
        if (ai < adds.size()) next = std::min(next, ranges_[adds[ai]].first), any = true;
        if (!active_last.empty() && *active_last.rbegin() > j) next = std::min(next, j + 1), any = true;   // still covered
        if (!any) break;
        j = next;
    }
    return out;
}

}   // namespace pipescope::analysis::detail
