// File > Open in Perfetto UI: hands a trace to `pipescope perfetto` (cli/perfetto_command.cpp), which
// serves it on 127.0.0.1:9001 and opens ui.perfetto.dev on it in the desktop's browser, then stops
// once the UI has fetched it (or after 10 minutes). The viewer does not wait for it.
#pragma once

#include <filesystem>
#include <string>

namespace pipescope::viewer {

// Starts `pipescope perfetto TRACE`; returns an empty string, or what went wrong (for the error list).
// The pipescope command is looked up next to the viewer (an install's bin/, the build tree's cli/),
// then on PATH.
std::string open_in_perfetto(const std::filesystem::path& trace);

}   // namespace pipescope::viewer
