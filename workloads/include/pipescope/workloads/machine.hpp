// What machine a run happened on, for trace metadata and benchmark headers.
#pragma once

#include <string>

namespace pipescope::workloads {

struct machine_info {
    std::string cpu;                 // /proc/cpuinfo "model name", or "unknown"
    unsigned hardware_threads = 0;   // std::thread::hardware_concurrency()
    std::string kernel;              // uname -sr
};

machine_info describe_machine();

}   // namespace pipescope::workloads
