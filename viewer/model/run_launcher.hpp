// The run panel's model (no ImGui): the choices the form holds, the runs it started, and which of
// them have finished and should be opened. views/run_panel.cpp draws it; the shell opens what
// take_finished() hands out beside the open runs.
#pragma once

#include "run_catalog.hpp"
#include "run_job.hpp"

#include <array>
#include <filesystem>
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace pipescope::viewer {

struct param_field {
    catalog_parameter parameter;
    std::array<char, 128> value{};   // empty: the default (not passed)
};

class run_launcher {
public:
    bool show = false;   // the panel is open (File > New run..., Ctrl+R)
    std::filesystem::path cli = find_cli();
    std::filesystem::path dir = runs_dir();
    std::function<void()> on_change;   // a job's progress or end (wakes the window)
    std::string refused;               // why the last Run did not start (no command, no directory)

    // The form.
    int workload = 0, policy = 0, size = 0;   // size: tiny, small, large
    int workers = 2;
    bool virtual_time = false;
    std::vector<param_field> params;   // the workload's, K first

    static constexpr std::array<const char*, 3> sizes{"tiny", "small", "large"};

    const run_catalog& catalog();   // `pipescope list --json`, read once
    bool catalog_read() const { return catalog_read_; }
    const std::string& catalog_error() const { return catalog_.error; }
    void select_workload(int index);   // its policies and parameters; pipe-fib · piper at first
    const catalog_workload* current_workload() const;
    run_choice choice() const;
    // Starts a run of the form's choice into a new file of `dir`; "" or why it could not start.
    std::string start();
    void cancel(std::size_t job);

    const std::vector<std::unique_ptr<run_job>>& jobs() const { return jobs_; }
    // The traces of the runs that finished since the last call (each handed out once).
    std::vector<std::filesystem::path> take_finished();
    bool busy() const;
    bool recording() const;   // a run's command is still going   // a run is recording, or finished and not yet taken
    const std::filesystem::path& last_path() const { return last_path_; }

private:
    run_catalog catalog_;
    bool catalog_read_ = false;
    std::vector<std::unique_ptr<run_job>> jobs_;
    std::vector<bool> taken_;
    std::filesystem::path last_path_;
};

}   // namespace pipescope::viewer
