// bench_pipelines_vs_tbb — ferret and dedup under every linear pipescope policy and under oneTBB's
// own parallel_pipeline, side by side (the comparison of seed 000 §2 and §4: TBB vs Pthreads).
//
// For each workload (ferret in six stages, ferret collapsed to three, dedup) the program measures
//   * the serial program (T_S);
//   * for P in --workers: every policy in pipescope::pipeline_policies() except "serial", through
//     the workload's own pipeline function (which declares the stage kinds, so construct-and-run
//     policies run it as well), on a pipescope scheduler with P workers;
//   * for P in --workers: oneTBB parallel_pipeline (bench/tbb_pipelines.hpp) with the same stage
//     functions and filter modes, max_number_of_live_tokens = 4P, in a tbb::task_arena of P threads;
//   * if the bind-to-stage policy exists: c threads per parallel stage, c in --bind-threads, at the
//     largest P (the oversubscribed configurations of seed 000 Table 1).
// Every result is compared with the serial program's; a mismatch exits with status 1.
// Runs are interleaved round-robin over all cells of a workload, starting each round one cell
// further on, so slow drift of the machine spreads over every row.
#include "bench_common.hpp"
#include "tbb_pipelines.hpp"

#include <pipescope/pipeline.hpp>
#include <pipescope/scheduler.hpp>
#include <pipescope/workloads/dedup.hpp>
#include <pipescope/workloads/ferret.hpp>

#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/version.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace {

namespace ferret = pipescope::workloads::ferret;
namespace wl = pipescope::workloads;

const char* const bind_policy = "bind-to-stage";

// =============================================================================================
// BIND-TO-STAGE OVERSUBSCRIPTION SWEEP — the one place that names the policy's option field.
//
// The bind-to-stage policy was being added to runtime/ while this benchmark was written; its
// "threads per parallel stage" (the paper's c) is pipeline_options::stage_threads (0 = P; its queue
// capacity, pipeline_options::queue_size, is left at its default, 20 as in PARSEC). The field is
// set through a compile-time check so that this bench still builds against a runtime without it:
// then this returns false and the c-sweep rows are left out, and the output says why.
template <class Options>
bool set_threads_per_parallel_stage(Options& o, unsigned c) {
    if constexpr (requires { o.stage_threads = c; }) {
        o.stage_threads = c;
        return true;
    } else {
        (void)o;
        (void)c;
        return false;
    }
}
// =============================================================================================

[[noreturn]] void mismatch(const std::string& workload, const std::string& who) {
    fmt::print(stderr, "MISMATCH: {} under {} differs from the serial program's output\n", workload, who);
    std::exit(1);
}

// ---------------------------------------------------------------------------------------------
// The workloads: each builds its input once, keeps the serial program's output as the reference,
// and times one run of each version (the check against the reference is outside the timed part).

class bench_workload {
public:
    virtual ~bench_workload() = default;
    virtual std::string name() const = 0;
    virtual std::string description() const = 0;
    virtual double serial() = 0;
    // `k` receives the throttle the runtime reports having used (pipeline_stats::throttle).
    virtual double pipescope(pipescope::scheduler& s, const pipescope::pipeline_options& o, const std::string& who,
                             unsigned& k) = 0;
    // Call with the oneTBB thread limit in place; the pipeline runs inside `arena`.
    virtual double tbb(tbb::task_arena& arena, std::size_t tokens, const std::string& who) = 0;
};

class ferret_bench final : public bench_workload {
public:
    ferret_bench(std::shared_ptr<const ferret::database> db, ferret::program_form form,
                 std::shared_ptr<const std::vector<ferret::top_list>> reference)
        : db_(std::move(db)), form_(form), reference_(std::move(reference)) {}

    std::string name() const override { return form_ == ferret::program_form::six_stage ? "ferret-6" : "ferret-3"; }
    std::string description() const override {
        std::string d = form_ == ferret::program_form::six_stage
                            ? "ferret, six stages: load | segment | extract | query | rank | output (S P P P P S)"
                            : "ferret, collapsed: load | segment+extract+query+rank | output (S P S)";
        d += "; ";
        d += std::to_string(db_->corpus.queries);
        d += " queries against ";
        d += std::to_string(db_->corpus.database_images);
        d += " images of ";
        d += std::to_string(db_->corpus.side);
        d += "x";
        d += std::to_string(db_->corpus.side);
        d += " pixels";
        return d;
    }

    double serial() override {
        std::vector<ferret::top_list> got;
        const double t = bench::time_seconds([&] { got = ferret::search_serial(*db_); });
        if (got != *reference_) mismatch(name(), "the serial program (rerun)");
        return t;
    }
    double pipescope(pipescope::scheduler& s, const pipescope::pipeline_options& o, const std::string& who,
                     unsigned& k) override {
        std::vector<ferret::top_list> got;
        pipescope::pipeline_stats stats;
        const double t = bench::time_seconds([&] { got = ferret::search_pipeline(s, *db_, form_, o, &stats); });
        if (got != *reference_) mismatch(name(), who);
        k = stats.throttle;
        return t;
    }
    double tbb(tbb::task_arena& arena, std::size_t tokens, const std::string& who) override {
        std::vector<ferret::top_list> got;
        const double t = bench::time_seconds(
            [&] { arena.execute([&] { got = bench::tbb_pipelines::ferret_tbb(*db_, form_, tokens); }); });
        if (got != *reference_) mismatch(name(), who);
        return t;
    }

private:
    std::shared_ptr<const ferret::database> db_;
    ferret::program_form form_;
    std::shared_ptr<const std::vector<ferret::top_list>> reference_;
};

class dedup_bench final : public bench_workload {
public:
    dedup_bench(std::size_t bytes, const wl::dedup_config& c) : config_(c) {
        corpus_ = wl::dedup_corpus(bytes, 1);
        wl::memory_reader in(corpus_);
        reference_ = wl::dedup_serial(in, config_, &stats_);
    }

    std::string name() const override { return "dedup"; }
    std::string description() const override {
        std::string d = "dedup, skip form: read+cut | SHA-1+table | compress | write (S P P S)";
        d += "; ";
        d += mib(stats_.input_bytes);
        d += " in ";
        d += std::to_string(stats_.coarse_chunks);
        d += " coarse / ";
        d += std::to_string(stats_.fine_chunks);
        d += " fine chunks, ";
        d += std::to_string(stats_.duplicate_chunks);
        d += " duplicates; archive ";
        d += mib(stats_.archive_bytes);
        return d;
    }

    double serial() override {
        wl::byte_vector got;
        const double t = bench::time_seconds([&] {
            wl::memory_reader in(corpus_);
            got = wl::dedup_serial(in, config_);
        });
        if (got != reference_) mismatch(name(), "the serial program (rerun)");
        return t;
    }
    double pipescope(pipescope::scheduler& s, const pipescope::pipeline_options& o, const std::string& who,
                     unsigned& k) override {
        wl::byte_vector got;
        pipescope::pipeline_stats stats;
        const double t = bench::time_seconds([&] {
            wl::memory_reader in(corpus_);
            got = wl::dedup_pipeline(s, in, config_, wl::dedup_form::skip, o, &stats);
        });
        if (got != reference_) mismatch(name(), who);
        k = stats.throttle;
        return t;
    }
    double tbb(tbb::task_arena& arena, std::size_t tokens, const std::string& who) override {
        wl::byte_vector got;
        const double t = bench::time_seconds([&] {
            arena.execute([&] {
                wl::memory_reader in(corpus_);
                got = bench::tbb_pipelines::dedup_tbb(in, config_, tokens);
            });
        });
        if (got != reference_) mismatch(name(), who);
        return t;
    }

private:
    static std::string mib(std::uint64_t bytes) { return fmt::format("{:.1f} MiB", double(bytes) / (1 << 20)); }

    wl::dedup_config config_;
    wl::byte_vector corpus_;
    wl::byte_vector reference_;
    wl::dedup_stats stats_;
};

// ---------------------------------------------------------------------------------------------
// Settings and input sizes

struct settings {
    unsigned runs = 5;
    std::vector<std::string> workloads = {"ferret-6", "ferret-3", "dedup"};
    std::vector<unsigned> workers = {1, 2};
    std::string size = "large";
    std::vector<unsigned> bind_threads = {1, 2, 4, 8};
    int settle_ms = 20;
    bool raw = false;
};

// The workloads' own size presets (workloads/src/ferret_workload.cpp, dedup_workload.cpp), so that
// `--size large` here is `--size large` of `pipescope run ferret|dedup`.
ferret::corpus_config ferret_corpus_for(const std::string& size) {
    ferret::corpus_config c;
    if (size == "tiny") {
        c.side = 24, c.database_images = 48, c.queries = 12;
    } else if (size == "small") {
        c.side = 48, c.database_images = 300, c.queries = 120;
    } else {
        c.side = 64, c.database_images = 800, c.queries = 2000;
    }
    c.seed = 1;
    return c;
}

std::size_t dedup_bytes_for(const std::string& size) {
    return size == "tiny" ? 256 * 1024 : size == "small" ? std::size_t{8} << 20 : std::size_t{256} << 20;
}

wl::dedup_config dedup_config_for(const std::string& size) {
    wl::dedup_config c;
    c.coarse_size = size == "tiny" ? 32 * 1024 : 512 * 1024;
    return c;
}

std::vector<std::string> parse_names(const std::string& text) {
    std::vector<std::string> out;
    std::string item;
    for (std::size_t i = 0; i <= text.size(); ++i) {
        if (i == text.size() || text[i] == ',') {
            if (item != "ferret-6" && item != "ferret-3" && item != "dedup")
                throw std::invalid_argument("unknown workload '" + item + "' (known: ferret-6, ferret-3, dedup)");
            out.push_back(item);
            item.clear();
        } else {
            item += text[i];
        }
    }
    return out;
}

// ---------------------------------------------------------------------------------------------
// Cells and measurement

enum class version { serial, pipescope, tbb };

struct cell {
    std::string config;
    unsigned p = 0;   // 0 for the serial program
    version kind = version::serial;
    pipescope::pipeline_options options;   // pipescope: the policy and its options
    unsigned k = 0;                        // items in flight: reported throttle, or oneTBB's tokens
    bool failed = false;                   // the policy threw; the row says so
    std::string failure;
    std::vector<double> samples;   // in run order
    bench::summary sum;
};

// One scheduler and one oneTBB arena per P, shared by all workloads.
struct runtimes {
    std::map<unsigned, std::unique_ptr<pipescope::scheduler>> sched;
    std::map<unsigned, std::unique_ptr<tbb::task_arena>> arena;
    explicit runtimes(const std::vector<unsigned>& workers) {
        for (unsigned p : workers) {
            sched[p] = std::make_unique<pipescope::scheduler>(pipescope::scheduler_options{p});
            arena[p] = std::make_unique<tbb::task_arena>(static_cast<int>(p));
        }
    }
};

std::vector<cell> make_cells(const settings& cfg, std::string& notes) {
    std::vector<cell> cells;
    cell serial;
    serial.config = "serial program (T_S)";
    cells.push_back(serial);

    bool have_bind = false;
    const auto policies = pipescope::pipeline_policies();
    for (unsigned p : cfg.workers) {
        for (const auto& info : policies) {
            if (info.name == "serial") continue;   // the serial elision; T_S is the real serial program
            if (info.name == bind_policy) have_bind = true;
            cell c;
            c.config = "pipescope ";
            c.config += info.name;
            c.p = p;
            c.kind = version::pipescope;
            c.options.policy = info.name;   // throttle 0: the default K = 4P
            cells.push_back(c);
        }
        cell t;
        t.config = "oneTBB parallel_pipeline";
        t.p = p;
        t.kind = version::tbb;
        t.k = 4 * p;
        cells.push_back(t);
    }

    const unsigned top_p = *std::max_element(cfg.workers.begin(), cfg.workers.end());
    pipescope::pipeline_options probe;
    if (!have_bind) {
        notes += "The bind-to-stage policy is not registered in pipescope::pipeline_policies() in this build: no "
                 "oversubscription rows.\n";
    } else if (!set_threads_per_parallel_stage(probe, 1)) {
        notes += "bind-to-stage is registered, but pipeline_options has no threads-per-parallel-stage field under "
                 "a name this bench knows (see set_threads_per_parallel_stage): no oversubscription rows.\n";
    } else {
        for (unsigned threads : cfg.bind_threads) {
            cell c;
            c.config = "pipescope bind-to-stage, c=";
            c.config += std::to_string(threads);
            c.p = top_p;
            c.kind = version::pipescope;
            c.options.policy = bind_policy;
            set_threads_per_parallel_stage(c.options, threads);
            cells.push_back(c);
        }
    }
    return cells;
}

void run_once(cell& c, bench_workload& w, runtimes& rt, const settings& cfg) {
    if (c.failed) return;
    std::string who = c.config;
    if (c.p) {
        who += " on P=";
        who += std::to_string(c.p);
    }
    double t = 0;
    switch (c.kind) {
        case version::serial: t = w.serial(); break;
        case version::pipescope: try { t = w.pipescope(*rt.sched.at(c.p), c.options, who, c.k);
            } catch (const std::exception& e) {
                // A policy that refuses this loop (or is half-written) loses its row, not the run.
                c.failed = true;
                c.failure = e.what();
                fmt::print(stderr, "  {}: {} threw: {}; row dropped\n", w.name(), who, e.what());
                return;
            }
            break;
        case version::tbb: {
            // Caps oneTBB's worker pool; the arena caps this pipeline's concurrency.
            tbb::global_control limit(tbb::global_control::max_allowed_parallelism, c.p);
            t = w.tbb(*rt.arena.at(c.p), c.k, who);
            break;
        }
    }
    c.samples.push_back(t);
    bench::settle(cfg.settle_ms);
}

// Returns the core-to-core round trip (ns) measured before each round: on a VM it flips between
// modes, and the P = 2 times flip with it (see README.md, "conditions").
std::vector<double> measure(std::vector<cell>& cells, bench_workload& w, runtimes& rt, const settings& cfg) {
    const std::size_t n = cells.size();
    std::vector<double> round_trip_ns;
    for (unsigned round = 0; round < cfg.runs; ++round) {
        round_trip_ns.push_back(bench::core_round_trip_ns());
        fmt::print(stderr, "  {}: round {}/{}\n", w.name(), round + 1, cfg.runs);
        for (std::size_t i = 0; i < n; ++i) run_once(cells[(round + i) % n], w, rt, cfg);
    }
    for (cell& c : cells) c.sum = bench::summarize(c.samples);
    return round_trip_ns;
}

void print_table(const std::vector<cell>& cells) {
    const double ts = cells.front().sum.median;
    std::map<unsigned, double> tbb_at;
    for (const cell& c : cells)
        if (c.kind == version::tbb && !c.samples.empty()) tbb_at[c.p] = c.sum.median;

    bench::table t({"configuration", "P", "K", "median s (spread)", "T_S/T", "T/oneTBB"}, 1);
    unsigned last_p = 0;
    bool in_sweep = false;
    for (const cell& c : cells) {
        const bool sweep = c.config.find(", c=") != std::string::npos;
        if (c.p != last_p || sweep != in_sweep) t.separator();
        last_p = c.p;
        in_sweep = sweep;
        const std::string p = c.p ? std::to_string(c.p) : "-";
        if (c.failed || c.samples.empty()) {
            std::string why = "failed: ";
            why += c.failure;
            t.add({c.config, p, "-", why, "-", "-"});
            continue;
        }
        const std::string k = c.k ? std::to_string(c.k) : "-";
        const std::string vs_tbb =
            c.kind == version::serial || !tbb_at.count(c.p) ? "-" : bench::fmt_ratio(c.sum.median / tbb_at[c.p]);
        t.add({c.config, p, k, bench::fmt_time(c.sum), bench::fmt_ratio(ts / c.sum.median), vs_tbb});
    }
    t.print();
}

void print_raw(const std::vector<cell>& cells) {
    fmt::print("\nEvery run, in run order (seconds):\n");
    bench::table t({"configuration", "P", "times"}, 1);
    for (const cell& c : cells) t.add({c.config, c.p ? std::to_string(c.p) : "-", bench::fmt_samples(c.samples)});
    t.print();
}

}   // namespace

int main(int argc, char** argv) {
    settings cfg;
    const bool go = bench::parse_command_line(
        argc, argv,
        "ferret and dedup under every linear pipescope policy and under oneTBB parallel_pipeline (same stage "
        "functions).",
        {{"--runs", "measured runs per cell, odd (default 5)",
          [&](const std::string& v) {
              cfg.runs = unsigned(bench::parse_positive(v));
              if (cfg.runs % 2 == 0) throw std::invalid_argument("must be odd, so that the median is a run");
          }},
         {"--workloads", "comma-separated: ferret-6, ferret-3, dedup (default all three)",
          [&](const std::string& v) { cfg.workloads = parse_names(v); }},
         {"--workers", "thread counts P, comma-separated (default 1,2)",
          [&](const std::string& v) { cfg.workers = bench::parse_list(v); }},
         {"--size", "input size preset: tiny, small, large (default large)",
          [&](const std::string& v) {
              if (v != "tiny" && v != "small" && v != "large") throw std::invalid_argument("expected tiny, small or large");
              cfg.size = v;
          }},
         {"--bind-threads", "bind-to-stage: threads per parallel stage c at the largest P (default 1,2,4,8)",
          [&](const std::string& v) { cfg.bind_threads = bench::parse_list(v); }},
         {"--settle-ms", "pause after each run so idle threads go to sleep (default 20)",
          [&](const std::string& v) { cfg.settle_ms = std::stoi(v); }},
         {"--raw", "also print every run's time, in run order", [&](const std::string&) { cfg.raw = true; }, false}});
    if (!go) return 0;
    std::sort(cfg.workers.begin(), cfg.workers.end());
    cfg.workers.erase(std::unique(cfg.workers.begin(), cfg.workers.end()), cfg.workers.end());
    const unsigned top_p = cfg.workers.back();

    fmt::print("bench_pipelines_vs_tbb: ferret and dedup, pipescope policies vs oneTBB {}.{} parallel_pipeline\n",
               TBB_VERSION_MAJOR, TBB_VERSION_MINOR);
    bench::print_machine();
    fmt::print("size {}; {} measured runs per cell, interleaved round-robin over a workload's cells\n", cfg.size, cfg.runs);
    bench::print_conditions("conditions at start", top_p);
    std::fflush(stdout);   // the header before the progress lines on stderr

    runtimes rt(cfg.workers);
    std::shared_ptr<const ferret::database> db;
    std::shared_ptr<const std::vector<ferret::top_list>> ferret_reference;

    for (const std::string& name : cfg.workloads) {
        std::unique_ptr<bench_workload> w;
        fmt::print(stderr, "{}: building the input (not measured)\n", name);
        if (name == "dedup") {
            w = std::make_unique<dedup_bench>(dedup_bytes_for(cfg.size), dedup_config_for(cfg.size));
        } else {
            if (!db) {   // one database and one reference for both ferret forms
                db = std::make_shared<const ferret::database>(
                    ferret::build_database(*rt.sched.at(top_p), ferret_corpus_for(cfg.size), ferret::search_config{}));
                ferret_reference = std::make_shared<const std::vector<ferret::top_list>>(ferret::search_serial(*db));
            }
            w = std::make_unique<ferret_bench>(db,
                                               name == "ferret-6" ? ferret::program_form::six_stage
                                                                  : ferret::program_form::sps,
                                               ferret_reference);
        }
        std::string notes;
        std::vector<cell> cells = make_cells(cfg, notes);
        const std::vector<double> round_trip_ns = measure(cells, *w, rt, cfg);

        fmt::print("\n== {}\n", w->description());
        if (!notes.empty()) fmt::print("{}", notes);
        fmt::print("\n");
        print_table(cells);
        fmt::print("core-to-core round trip before each round (ns): {}\n", bench::fmt_samples(round_trip_ns, 0));
        if (cfg.raw) print_raw(cells);
        // The runs above take minutes: say what the machine was like after each workload too (after
        // the last one, "conditions at end" says it).
        if (&name != &cfg.workloads.back()) {
            std::string when = "conditions after ";
            when += name;
            bench::print_conditions(when.c_str(), top_p);
        }
        std::fflush(stdout);
    }

    fmt::print("\n");
    bench::print_conditions("conditions at end", top_p);
    fmt::print("Times in seconds: median over the runs, (x%) = (max - min) / median. T_S/T: speedup over the serial\n"
               "program. T/oneTBB: this row's median / oneTBB's median at the same P, below 1 means faster than oneTBB.\n"
               "K: the limit on items in flight, as the pipescope runtime reports it (pipeline_stats::throttle: K = 4P,\n"
               "or bind-to-stage's queue size; '-' if none), and oneTBB's max_number_of_live_tokens = 4P. oneTBB runs in\n"
               "a task_arena of P threads under global_control(max_allowed_parallelism, P).\n");
    fmt::print("\nAll outputs matched the serial program's.\n");
    return 0;
}
