// A new file under a fresh name, written atomically and never over an existing file (File > Save
// screenshot..., app/save_screenshot.cpp): the content goes to a temporary file in the directory,
// which is then hard-linked to the first free name (a link fails rather than replace a file) and
// removed. Pure C++.
#pragma once

#include <ctime>
#include <filesystem>
#include <functional>
#include <string>

namespace pipescope::viewer {

// YYYYMMDD-HHMMSS in local time: the stamp of the files the viewer names (screenshots, run panel traces).
std::string local_stamp(std::time_t when);

// pipescope-YYYYMMDD-HHMMSS.png (local time), with -N before .png when n > 1.
std::string screenshot_file_name(std::time_t when, int n);

// Writes a new file in `dir` through `write(temporary path)` (false: it failed) under the first free
// screenshot_file_name(when, 1, 2, ...); returns its path, or throws std::runtime_error saying why not.
std::filesystem::path save_new_file(const std::filesystem::path& dir, std::time_t when,
                                    const std::function<bool(const std::string&)>& write);

}   // namespace pipescope::viewer
