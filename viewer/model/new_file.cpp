#include "new_file.hpp"

#include <fmt/format.h>

#include <stdexcept>
#include <system_error>
#include <unistd.h>

namespace pipescope::viewer {

namespace fs = std::filesystem;

std::string local_stamp(std::time_t when) {
    std::tm local{};
    localtime_r(&when, &local);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &local);
    return stamp;
}

std::string screenshot_file_name(std::time_t when, int n) {
    const std::string stamp = local_stamp(when);
    return n > 1 ? fmt::format("pipescope-{}-{}.png", stamp, n) : fmt::format("pipescope-{}.png", stamp);
}

fs::path save_new_file(const fs::path& dir, std::time_t when, const std::function<bool(const std::string&)>& write) {
    const fs::path tmp = dir / fmt::format(".pipescope-screenshot-{}.png.tmp", static_cast<long>(::getpid()));
    if (!write(tmp.string())) {
        std::error_code ignored;
        fs::remove(tmp, ignored);
        throw std::runtime_error("cannot write " + tmp.string());
    }
    for (int n = 1; n < 1000; ++n) {
        const fs::path target = dir / screenshot_file_name(when, n);
        std::error_code ec;
        fs::create_hard_link(tmp, target, ec);   // fails if target exists: never overwrites
        if (ec == std::errc::file_exists) continue;
        if (ec && !fs::exists(target)) fs::rename(tmp, target, ec);   // a file system without hard links
        else if (!ec) fs::remove(tmp, ec);
        if (ec) {
            std::error_code ignored;
            fs::remove(tmp, ignored);
            throw std::runtime_error("cannot save " + target.string() + ": " + ec.message());
        }
        return target;
    }
    std::error_code ignored;
    fs::remove(tmp, ignored);
    throw std::runtime_error("every screenshot name of this second is taken in " + dir.string());
}

}   // namespace pipescope::viewer
