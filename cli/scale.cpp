// `pipescope scale <workload> --policies a,b --workers 1,2,4 [--size S] [--seed N] [--param k=v]...
// [--out DIR]`: a scaling sweep on virtual workers (docs/virtual.md, "Scaling sweeps"). The serial
// elision runs three times (the median of its CPU times is the serial time); then every (policy, P) is recorded as a
// virtual run (recording.hpp, as `pipescope run --virtual -o` does) and measured from its trace by
// the analysis (analysis/scaling.hpp). DIR gets the traces, scale.json and the speedup plot (SVG,
// PNG), all written into a temporary directory (DIR.XXXXXX.tmp) renamed to DIR when complete.
#include "arg_parser.hpp"
#include "commands.hpp"
#include <pipescope/recording/cost_table.hpp>
#include <pipescope/recording/recording.hpp>
#include "scale_chart.hpp"
#include <pipescope/recording/trace_costs.hpp>

#include <pipescope/analysis/numbers.hpp>
#include <pipescope/analysis/scaling.hpp>
#include <pipescope/trace/atomic_output.hpp>
#include <pipescope/trace/trace_model.hpp>

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

namespace an = pipescope::analysis;
namespace fs = std::filesystem;
namespace ws = pipescope::workloads;
using pipescope::recording::usage_error;

struct scale_args {
    std::string workload;
    std::vector<std::string> policies;
    std::vector<unsigned> workers;
    pipescope::recording::run_args base;   // size, seed, params
    fs::path out;
    std::string costs;          // --costs FILE: every point's node costs, and the serial time, from one recording
    unsigned serial_runs = 3;   // --serial-runs N: the serial time is the median of N measurements
};

std::vector<std::string> split_list(const std::string& option, const std::string& text) {
    std::vector<std::string> out;
    std::size_t b = 0;
    while (b <= text.size()) {
        const std::size_t e = std::min(text.find(',', b), text.size());
        if (e == b) throw usage_error(fmt::format("{} {}: an empty item in the list", option, text));
        out.push_back(text.substr(b, e - b));
        b = e + 1;
    }
    return out;
}

scale_args parse_scale(const std::vector<std::string>& args) {
    scale_args s;
    std::vector<std::string> params;
    pipescope::cli::arg_parser p;
    p.option({"--policies"}, [&](const std::string& v) { s.policies = split_list("--policies", v); });
    p.option({"--workers"}, [&](const std::string& v) {
        for (const std::string& n : split_list("--workers", v))
            s.workers.push_back(static_cast<unsigned>(
                pipescope::cli::whole_number("--workers", n,
                                             {1, 1024, "numbers of virtual workers between 1 and 1024, e.g. 1,2,4,8"})));
    });
    p.option({"--size"}, [&](const std::string& v) { s.base.request.size = ws::parse_size(v); });
    p.number({"--seed"}, {0, UINT64_MAX, "a non-negative integer"}, [&](std::uint64_t n) { s.base.request.seed = n; });
    p.option({"--param"}, [&](const std::string& v) { params.push_back(v); });
    p.option({"--out", "-o"}, [&](const std::string& v) {
        s.out = v;
        if (s.out.empty()) pipescope::trace::check_output_path(s.out);   // refused, not taken for the default
    });
    p.option({"--costs"}, [&](const std::string& v) { s.costs = v; });
    p.number({"--serial-runs"}, {1, 99, "a number of runs between 1 and 99"},
             [&](std::uint64_t n) { s.serial_runs = static_cast<unsigned>(n); });
    p.positional([&](const std::string& v) {
        if (!s.workload.empty()) throw usage_error("unexpected argument " + v + " (one workload per sweep)");
        s.workload = v;
    });
    p.parse(args);
    if (s.workload.empty()) throw usage_error("scale: which workload? (see `pipescope list`)");
    if (s.policies.empty()) throw usage_error("scale: which policies? (--policies piper,tbb)");
    if (s.workers.empty()) throw usage_error("scale: which numbers of virtual workers? (--workers 1,2,4,8)");
    std::sort(s.workers.begin(), s.workers.end());
    s.workers.erase(std::unique(s.workers.begin(), s.workers.end()), s.workers.end());
    for (const std::string& p : s.policies) (void)pipescope::recording::refusal_reason(s.workload, p);   // unknown names
    // --param NAME_ns=V sets a virtual cost of every point, as in `run --virtual` (docs/virtual.md).
    s.base.cost_params = pipescope::recording::take_cost_params(params);
    (void)ws::param_set::parse(params);   // "k" without "=": a usage error
    // A scheduler parameter goes to the policies that take it (DANBI's config not to gramps), so
    // one no swept policy takes is a mistake.
    for (const std::string& kv : params) {
        const std::string key = kv.substr(0, kv.find('='));
        if (ws::is_policy_parameter(key) && std::none_of(s.policies.begin(), s.policies.end(), [&](const std::string& p) {
                return ws::policy_takes_parameter(p, key);
            }))
            throw usage_error(fmt::format("--param {}: a scheduler parameter none of the policies swept takes", kv));
    }
    s.base.workload = s.workload;
    s.base.params = params;
    s.base.costs_trace = s.costs;
    if (s.out.empty()) s.out = "scale-" + s.workload;
    return s;
}

// The run of `policy` with the sweep's --param values it takes: every program parameter, and the
// scheduler parameters of that policy (docs/virtual.md, "Parameters: the program's or the policy's").
pipescope::recording::run_args with_params_of(const scale_args& s, const std::string& policy) {
    pipescope::recording::run_args run = s.base;
    run.request.policy = policy;
    run.params.clear();
    for (const std::string& kv : s.base.params) {
        const std::string key = kv.substr(0, kv.find('='));
        if (!ws::is_policy_parameter(key) || ws::policy_takes_parameter(policy, key)) run.params.push_back(kv);
    }
    run.request.params = ws::param_set::parse(run.params);
    return run;
}

// A fresh directory "<base>.XXXXXX<suffix>" (mkdtemp: its name was free, so nothing was planted in
// it), mode 0700 until the sweep is complete.
fs::path unique_directory(const fs::path& base, const char* suffix, const fs::path& shown) {
    std::string name = base.string() + ".XXXXXX";
    if (!::mkdtemp(name.data())) {
        const int e = errno;
        throw std::runtime_error(fmt::format("cannot create the sweep's directory next to {}: {}", shown.string(),
                                             std::generic_category().message(e)));
    }
    fs::path dir = name + suffix;
    if (::rename(name.c_str(), dir.c_str()) != 0) {   // mkdtemp wants the X's last
        const int e = errno;
        ::rmdir(name.c_str());
        throw pipescope::trace::output_error(shown, e, "naming the sweep's directory " + dir.string());
    }
    return dir;
}

// The sweep's files go into a directory next to DIR ("DIR.XXXXXX.tmp"), renamed to DIR when
// complete; a failed sweep removes it, so DIR is never half written. An existing DIR is replaced
// only if it is a sweep. Each file in it is written through atomic_output too.
class staging_dir {
public:
    explicit staging_dir(const fs::path& target) : target_(fs::absolute(target).lexically_normal()) {
        if (target_.filename().empty()) target_ = target_.parent_path();
        if (fs::is_symlink(target_))   // the swap would replace the link, not the sweep it points at
            throw pipescope::trace::output_path_error(
                fmt::format("cannot write {}: is a symbolic link (to {}); give the directory itself", target.string(),
                            fs::read_symlink(target_).string()));
        if (fs::exists(target_) && !fs::exists(target_ / an::scale_manifest_name))
            throw std::runtime_error(fmt::format("{} exists and is not a sweep (no {}): choose another --out",
                                                 target.string(), an::scale_manifest_name));
        staging_ = unique_directory(target_, ".tmp", target);
    }
    ~staging_dir() {
        std::error_code ec;
        if (!committed_) fs::remove_all(staging_, ec);
    }
    staging_dir(const staging_dir&) = delete;
    staging_dir& operator=(const staging_dir&) = delete;

    fs::path file(const std::string& name) const { return staging_ / name; }

    // Moves the finished sweep to DIR (a previous sweep there is removed once the new one is in place).
    void commit() {
        const mode_t mode = 0777 & ~pipescope::trace::current_umask();   // what mkdir would have given
        if (::chmod(staging_.c_str(), mode) != 0) throw pipescope::trace::output_error(target_, errno);
        fs::path old;
        if (fs::exists(target_)) {
            // Into an empty directory of a free name (rename may replace an empty directory).
            old = unique_directory(target_, ".old", target_);
            fs::rename(target_, old);
        }
        fs::rename(staging_, target_);
        committed_ = true;
        std::error_code ec;
        if (!old.empty()) fs::remove_all(old, ec);
    }

private:
    fs::path target_, staging_;
    bool committed_ = false;
};

std::string trace_name(const std::string& workload, const std::string& policy, unsigned workers) {
    return fmt::format("{}-{}-P{}.pftrace", workload, policy, workers);
}

// The analysis of the one run a virtual run's trace holds.
an::run_report analyze_trace(const fs::path& path) {
    const pipescope::trace::trace_model model = pipescope::trace::load_trace_file(path.string());
    std::vector<an::run_report> reports = an::analyze_all(model);
    if (reports.size() != 1)
        throw std::runtime_error(fmt::format("{}: expected one run, found {}", path.string(), reports.size()));
    return std::move(reports.front());
}

std::string peak_text(const an::scale_row& r) {
    namespace numbers = an::numbers;
    if (r.peak_live) return numbers::value(*r.peak_live) + " live";
    if (r.peak_footprint) return numbers::bytes(*r.peak_footprint) + " footprint";
    return "-";
}

void print_row(const an::scale_row& r) {
    namespace numbers = an::numbers;
    fmt::print("  {:>5}  {:>12}  {:>8}  {:>10}  {:>6}  {:>9}  {}\n", r.workers, numbers::duration(r.makespan_ns),
               numbers::ratio(r.speedup, 2), numbers::percent(r.efficiency), numbers::percent(r.idle_share),
               numbers::count(r.steals), peak_text(r));
    std::fflush(stdout);
}

// The serial elision's cost: the CPU time the whole process spent on its measured run, the
// currency of a virtual run's job costs (measured thread CPU time), so that a loaded machine does
// not inflate the speedups. Not the calling thread's alone: the serial elision's pool worker runs
// what the program forks (x264's B-frame tasks, dedup's fan-out) and a stage graph's instances
// (graph-serial), while the calling thread waits. The run records no trace, so no drain thread
// runs; the progress line and the interrupt watcher sleep (docs/virtual.md, "Scaling sweeps").
// It is measured --serial-runs times and the median taken: on a VM one run can be a third off.
//
// With --costs the serial time is the recording's work T1, the sum of the node costs every point is
// priced with: nothing is measured, so the same sweep prints the same table.
std::vector<double> serial_samples_ns(const scale_args& s, bool& matches) {
    if (!s.costs.empty()) {
        const pipescope::recording::trace_node_costs recorded(s.costs, {.workload = s.workload,
                                                                        .size = ws::size_name(s.base.request.size),
                                                                        .seed = s.base.request.seed,
                                                                        .params = s.base.params});
        matches = true;
        return {static_cast<double>(recorded.total_ns())};
    }
    const ws::workload* w = ws::find_workload(s.workload);
    // The program's parameters only: the swept policies' (DANBI's config, K) are not graph-serial's.
    pipescope::recording::run_args serial = s.base;
    serial.request.policy = w && w->is_graph() ? "graph-serial" : "serial";
    serial.params = ws::program_parameters(s.base.params);
    serial.request.params = ws::param_set::parse(serial.params);
    serial.workers = 1;
    std::vector<double> samples;
    for (unsigned i = 0; i < s.serial_runs; ++i) {
        const pipescope::recording::recorded_run r = pipescope::recording::record_run(serial);
        matches = matches && r.report.matches_reference;
        samples.push_back(r.measured_process_cpu_seconds * 1e9);
    }
    return samples;
}

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Where the serial time came from, e.g. "CPU time of the serial elision, median of 3: 3.9 ms to 4.3 ms".
std::string serial_source(const scale_args& s, const std::vector<double>& samples) {
    namespace numbers = an::numbers;
    if (!s.costs.empty()) return fmt::format("the node costs {} recorded, which price every point", s.costs);
    if (samples.size() == 1) return "CPU time of the serial elision, one run";
    const auto [lo, hi] = std::minmax_element(samples.begin(), samples.end());
    return fmt::format("CPU time of the serial elision, median of {}: {} to {}", samples.size(), numbers::duration(*lo),
                       numbers::duration(*hi));
}

// A machine noisier than what the sweep measures: the serial runs disagree by more than a quarter,
// or one worker beat the serial elision by more than 5 % (it does the same work plus scheduling).
// Either way the speedups carry that noise; pricing every point from one recording removes it.
void warn_if_noisy(const scale_args& s, const an::scale_sweep& sweep) {
    if (!s.costs.empty()) return;
    std::vector<std::string> why;
    const auto [lo, hi] = std::minmax_element(sweep.serial_samples_ns.begin(), sweep.serial_samples_ns.end());
    if (*lo > 0 && *hi / *lo > 1.25)
        why.push_back(fmt::format("the serial runs differ by {}", an::numbers::ratio(*hi / *lo, 2)));
    for (const an::scale_row& r : sweep.rows)
        if (r.workers == 1 && r.efficiency > 1.05)
            why.push_back(fmt::format("{} on 1 worker ran {} faster than the serial elision", r.policy,
                                      an::numbers::ratio(r.efficiency, 2)));
    if (why.empty()) return;
    std::string joined;
    for (const std::string& w : why) joined += (joined.empty() ? "" : "; ") + w;
    fmt::print("\nnote: the machine is noisy ({}): the speedups carry that noise. For a sweep priced from one "
               "recording, record once (pipescope run {} --virtual -o costs.pftrace) and pass --costs costs.pftrace.\n",
               joined, s.workload);
}

}   // namespace

int scale_command(const std::vector<std::string>& args) {
    const scale_args s = parse_scale(args);
    staging_dir dir(s.out);
    an::scale_sweep sweep;
    sweep.workload = s.workload;
    sweep.size = ws::size_name(s.base.request.size);
    sweep.seed = s.base.request.seed;
    sweep.params = s.base.params;
    bool all_match = true;
    sweep.serial_samples_ns = serial_samples_ns(s, all_match);
    sweep.serial_ns = median_of(sweep.serial_samples_ns);
    fmt::print("{} · size {} · seed {} · serial {} ({})\n", s.workload, sweep.size, sweep.seed,
               an::numbers::duration(sweep.serial_ns), serial_source(s, sweep.serial_samples_ns));

    for (const std::string& policy : s.policies) {
        fmt::print("\n{} on virtual workers\n  {:>5}  {:>12}  {:>8}  {:>10}  {:>6}  {:>9}  {}\n", policy, "P", "makespan",
                   "speedup", "efficiency", "idle", "steals", "peak");
        if (const std::string why = pipescope::recording::refusal_reason(s.workload, policy); !why.empty()) {
            fmt::print("  refused: {} cannot run under {}: {}\n", s.workload, policy, why);
            sweep.refused.push_back({policy, why});
            continue;
        }
        for (unsigned p : s.workers) {
            pipescope::recording::run_args run = with_params_of(s, policy);
            run.workers = p;
            run.virtual_time = true;
            const std::string name = trace_name(s.workload, policy, p);
            run.trace_path = dir.file(name).string();
            pipescope::recording::recorded_run r;
            try {
                r = pipescope::recording::record_run(run);
            } catch (const std::exception& e) {   // e.g. a policy that does not run on virtual workers yet
                std::error_code ec;
                fs::remove(run.trace_path, ec);
                fmt::print("  refused: {} at P = {}: {}\n", policy, p, e.what());
                sweep.refused.push_back({policy, e.what()});
                break;
            }
            if (!r.report.matches_reference) {
                all_match = false;
                fmt::print("  P = {}: the output DIFFERS from the serial reference\n", p);
            }
            an::scale_row row = an::scale_row_of(analyze_trace(run.trace_path), sweep.serial_ns);
            row.trace = name;
            print_row(row);
            sweep.rows.push_back(std::move(row));
        }
    }

    sweep.svg = "speedup.svg";
    sweep.png = "speedup.png";
    const pipescope::cli::chart c = pipescope::cli::chart_of(sweep);
    pipescope::cli::write_svg(c, dir.file(sweep.svg));
    pipescope::cli::write_png(c, dir.file(sweep.png));
    pipescope::trace::write_file_atomically(dir.file(an::scale_manifest_name), an::to_json(sweep).dump(2) + "\n");
    dir.commit();
    fmt::print("\n{}: {} runs, {}, the plot {} and {}\n", s.out.string(), sweep.rows.size(), an::scale_manifest_name,
               sweep.svg, sweep.png);
    warn_if_noisy(s, sweep);
    if (!sweep.refused.empty())
        fmt::print("{} of {} policies could not run on virtual workers (listed under \"refused\" in {})\n",
                   sweep.refused.size(), s.policies.size(), an::scale_manifest_name);
    return all_match && sweep.refused.empty() ? 0 : 1;
}
