// The viewer's state as JSON: what `dump FILE` writes and `expect /pointer VALUE` reads in the
// scripted-input mode (docs/viewer.md, "Scripted input"). Tests check what input did through it.
//
// To add a field (e.g. the state of a new panel), add one line to dump_state() in state_dump.cpp
// that calls a `to_json`-style function next to the model it describes, under a key of its own.
#pragma once

#include "shell.hpp"

#include <nlohmann/json.hpp>

namespace pipescope::viewer {

struct window_size {
    int width = 0, height = 0;
};

nlohmann::json dump_state(const shell& sh, window_size win);

}   // namespace pipescope::viewer
