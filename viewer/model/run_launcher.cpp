// The run panel's model (run_launcher.hpp).
#include "run_launcher.hpp"

#include <algorithm>
#include <ctime>

namespace fs = std::filesystem;

namespace pipescope::viewer {

const run_catalog& run_launcher::catalog() {
    if (!catalog_read_) {
        catalog_read_ = true;
        catalog_ = load_catalog(cli);
        // The classroom's first question is about pipe-fib under PIPER and its K.
        const auto it = std::find_if(catalog_.workloads.begin(), catalog_.workloads.end(),
                                     [](const catalog_workload& w) { return w.name == "pipe-fib"; });
        select_workload(it == catalog_.workloads.end() ? 0 : static_cast<int>(it - catalog_.workloads.begin()));
    }
    return catalog_;
}

const catalog_workload* run_launcher::current_workload() const {
    if (workload < 0 || static_cast<std::size_t>(workload) >= catalog_.workloads.size()) return nullptr;
    return &catalog_.workloads[static_cast<std::size_t>(workload)];
}

void run_launcher::select_workload(int index) {
    workload = index;
    policy = 0;
    params.clear();
    const catalog_workload* w = current_workload();
    if (!w) return;
    const auto piper = std::find(w->policies.begin(), w->policies.end(), "piper");
    if (piper != w->policies.end()) policy = static_cast<int>(piper - w->policies.begin());
    for (const catalog_parameter& p : w->parameters) params.push_back(param_field{.parameter = p, .value = {}});
    // K (the throttle) first: the parameter a class varies most.
    std::stable_partition(params.begin(), params.end(), [](const param_field& f) { return f.parameter.name == "K"; });
}

run_choice run_launcher::choice() const {
    run_choice c;
    const catalog_workload* w = current_workload();
    if (!w) return c;
    c.workload = w->name;
    if (policy >= 0 && static_cast<std::size_t>(policy) < w->policies.size())
        c.policy = w->policies[static_cast<std::size_t>(policy)];
    c.workers = static_cast<unsigned>(std::max(1, workers));
    c.virtual_time = virtual_time;
    c.size = sizes[static_cast<std::size_t>(std::clamp(size, 0, 2))];
    for (const param_field& f : params)
        if (const std::string v = f.value.data(); !v.empty()) c.params.emplace_back(f.parameter.name, v);
    return c;
}

std::string run_launcher::start() {
    const run_choice c = choice();
    if (c.workload.empty() || c.policy.empty()) return "choose a workload and a policy";
    if (cli.empty()) return "no pipescope command found next to the viewer (set PIPESCOPE_CLI)";
    std::error_code ec;
    fs::create_directories(dir, ec);
    if (ec) return "cannot create " + dir.string() + ": " + ec.message();
    last_path_ = new_trace_path(dir, c, std::time(nullptr));
    jobs_.push_back(std::make_unique<run_job>(cli, c, last_path_, on_change));
    taken_.push_back(false);
    return "";
}

void run_launcher::cancel(std::size_t job) {
    if (job < jobs_.size()) jobs_[job]->cancel();
}

std::vector<fs::path> run_launcher::take_finished() {
    std::vector<fs::path> out;
    for (std::size_t i = 0; i < jobs_.size(); ++i)
        if (!taken_[i] && !jobs_[i]->running()) {
            taken_[i] = true;
            if (jobs_[i]->get().state == run_job::status::finished) out.push_back(jobs_[i]->trace());
        }
    return out;
}

bool run_launcher::recording() const {
    return std::any_of(jobs_.begin(), jobs_.end(), [](const auto& j) { return j->running(); });
}

bool run_launcher::busy() const {
    for (std::size_t i = 0; i < jobs_.size(); ++i)
        if (!taken_[i]) return true;
    return false;
}

}   // namespace pipescope::viewer
