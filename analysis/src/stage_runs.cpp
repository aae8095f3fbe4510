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

std::vector<std::uint32_t> indices(std::size_t n) {
    std::vector<std::uint32_t> v(n);
    std::iota(v.begin(), v.end(), 0u);
    return v;
}

}   // namespace

// summarize's sweep over the stage numbers (see the header). The ranges covering the current stage
// stay counted in the Fenwick tree; a stage's singles join them only while its summary is read.
class stage_runs::sweep {
public:
    explicit sweep(const stage_runs& runs)
        : r_(runs),
          values_(distinct_durations(runs)),
          fw_(values_.size()),
          by_stage_(indices(runs.singles_.size())),
          by_first_(indices(runs.ranges_.size())),
          by_last_(indices(runs.ranges_.size())),
          active_(longer{&runs}) {
        const auto& singles = r_.singles_;
        const auto& ranges = r_.ranges_;
        std::stable_sort(by_stage_.begin(), by_stage_.end(),
                         [&](auto a, auto b) { return singles[a].stage < singles[b].stage; });
        std::stable_sort(by_first_.begin(), by_first_.end(),
                         [&](auto a, auto b) { return ranges[a].first < ranges[b].first; });
        std::stable_sort(by_last_.begin(), by_last_.end(), [&](auto a, auto b) { return ranges[a].last < ranges[b].last; });
    }

    std::vector<result> run() {
        std::vector<result> out;
        std::uint64_t j = std::min(by_stage_.empty() ? ~std::uint64_t{0} : r_.singles_[by_stage_[0]].stage,
                                   by_first_.empty() ? ~std::uint64_t{0} : r_.ranges_[by_first_[0]].first);
        do {
            enter_ranges(j);
            leave_ranges(j);
            const std::size_t sb = si_;
            while (si_ < by_stage_.size() && r_.singles_[by_stage_[si_]].stage == j) ++si_;
            if (si_ > sb || !active_.empty()) out.push_back(summarize_stage(j, sb, si_));
        } while (next_stage(j));
        return out;
    }

private:
    // The longest range first (ties: the first added).
    struct longer {
        const stage_runs* runs;
        bool operator()(std::uint32_t a, std::uint32_t b) const {
            const auto &x = runs->ranges_[a], &y = runs->ranges_[b];
            return x.duration > y.duration || (x.duration == y.duration && x.place < y.place);
        }
    };

    // Distinct durations, ascending: a duration's index is its rank in the Fenwick tree.
    static std::vector<double> distinct_durations(const stage_runs& runs) {
        std::vector<double> values;
        values.reserve(runs.singles_.size() + runs.ranges_.size());
        for (const auto& s : runs.singles_) values.push_back(s.duration);
        for (const auto& r : runs.ranges_) values.push_back(r.duration);
        std::sort(values.begin(), values.end());
        values.erase(std::unique(values.begin(), values.end()), values.end());
        return values;
    }

    std::size_t rank(double v) const {
        return static_cast<std::size_t>(std::lower_bound(values_.begin(), values_.end(), v) - values_.begin());
    }

    // The ranges that begin at or before stage j start covering.
    void enter_ranges(std::uint64_t j) {
        for (; ai_ < by_first_.size() && r_.ranges_[by_first_[ai_]].first <= j; ++ai_) {
            const range& r = r_.ranges_[by_first_[ai_]];
            fw_.add(rank(r.duration), 1);
            active_total_ += r.duration;
            active_.insert(by_first_[ai_]);
            active_last_.insert(r.last);
        }
    }

    // The ranges that ended before stage j stop covering.
    void leave_ranges(std::uint64_t j) {
        for (; ri_ < by_last_.size() && r_.ranges_[by_last_[ri_]].last < j; ++ri_) {
            const range& r = r_.ranges_[by_last_[ri_]];
            fw_.add(rank(r.duration), -1);
            active_total_ -= r.duration;
            active_.erase(by_last_[ri_]);
            active_last_.erase(active_last_.find(r.last));
        }
    }

    // Stage j: the covering ranges and the singles by_stage_[sb, se).
    result summarize_stage(std::uint64_t j, std::size_t sb, std::size_t se) {
        result res;
        res.stage = j;
        std::uint64_t n = active_.size();
        long double total = active_total_;
        res.shares = active_.size();
        double best = -1;
        const run_place* best_at = nullptr;
        if (!active_.empty())
            best = r_.ranges_[*active_.begin()].duration, best_at = &r_.places_[r_.ranges_[*active_.begin()].place];
        for (std::size_t k = sb; k < se; ++k) {
            const single& s = r_.singles_[by_stage_[k]];
            n += s.count;
            total += static_cast<long double>(s.duration) * static_cast<long double>(s.count);
            if (s.share) res.shares += s.count;
            if (s.duration > best ||
                (s.duration == best && best_at && s.place < static_cast<std::uint32_t>(best_at - r_.places_.data())))
                best = s.duration, best_at = &r_.places_[s.place];
            fw_.add(rank(s.duration), static_cast<std::int64_t>(s.count));
        }
        res.service.count = n;
        res.service.total = whole_ns(total);
        res.service.mean = static_cast<double>(total / static_cast<long double>(n));
        res.service.p50 = percentile(0.50, n);
        res.service.p95 = percentile(0.95, n);
        res.service.max = whole_ns(best);
        if (best_at) res.longest = *best_at;
        for (std::size_t k = sb; k < se; ++k)
            fw_.add(rank(r_.singles_[by_stage_[k]].duration), -static_cast<std::int64_t>(r_.singles_[by_stage_[k]].count));
        return res;
    }

    // Nearest rank among the n executions counted: p_q is the ceil(q n)-th smallest.
    std::uint64_t percentile(double q, std::uint64_t n) const {
        const auto k = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(n))), 1, n);
        return whole_ns(values_[fw_.kth(k)]);
    }

    // The next stage: the next single's, the next range's first, or the next one a range covers;
    // false when there is none.
    bool next_stage(std::uint64_t& j) const {
        std::uint64_t next = ~std::uint64_t{0};
        bool any = false;
        if (si_ < by_stage_.size()) next = r_.singles_[by_stage_[si_]].stage, any = true;
        if (ai_ < by_first_.size()) next = std::min(next, r_.ranges_[by_first_[ai_]].first), any = true;
        if (!active_last_.empty() && *active_last_.rbegin() > j) next = std::min(next, j + 1), any = true;   // still covered
        if (any) j = next;
        return any;
    }

    const stage_runs& r_;
    const std::vector<double> values_;
    fenwick fw_;                                                 // counts of the executions counted, by rank
    std::vector<std::uint32_t> by_stage_, by_first_, by_last_;   // singles by stage, ranges by first and by last
    std::set<std::uint32_t, longer> active_;                     // the ranges covering the current stage
    std::multiset<std::uint64_t> active_last_;                   // their last stages
    long double active_total_ = 0;                               // their durations' sum
    std::size_t si_ = 0, ai_ = 0, ri_ = 0;                       // the next single, range to enter, range to leave
};

std::vector<stage_runs::result> stage_runs::summarize() const {
    if (singles_.empty() && ranges_.empty()) return {};
    return sweep(*this).run();
}

}   // namespace pipescope::analysis::detail
