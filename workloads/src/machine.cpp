#include <pipescope/workloads/machine.hpp>

#include <sys/utsname.h>

#include <fstream>
#include <thread>

namespace pipescope::workloads {

namespace {
std::string cpu_model() {
    std::ifstream in("/proc/cpuinfo");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("model name", 0) == 0) {
            const auto colon = line.find(':');
            if (colon != std::string::npos) return line.substr(line.find_first_not_of(" \t", colon + 1));
        }
    }
    return "unknown";
}
}   // namespace

machine_info describe_machine() {
    machine_info m;
    m.cpu = cpu_model();
    m.hardware_threads = std::thread::hardware_concurrency();
    utsname u{};
    if (uname(&u) == 0) {
        m.kernel = u.sysname;
        m.kernel += ' ';
        m.kernel += u.release;
    }
    return m;
}

}   // namespace pipescope::workloads
