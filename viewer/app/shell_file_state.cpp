// The shell's part of the per-file state (model/file_state.hpp): a file's saved arrangement and
// bookmarks restored when it is added, the states written (atomically) when they change, and the
// Bookmarks items of the View menu.
#include "shell.hpp"

#include "../model/bookmarks.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace pipescope::viewer {

void shell::attach_file_state(bool user_opened) {
    const loaded_file& f = *doc.files.back();
    std::vector<std::string> names;
    names.reserve(f.model.tracks.size());
    for (const tm::track& t : f.model.tracks) names.push_back(t.name);
    std::string warning;
    file_arrangement a = file_states_.attach(f.path, keep_state_of_all_files || user_opened, names, warning);
    if (!warning.empty()) {   // a malformed state file: the file opens as if it had none
        fmt::print(stderr, "pipescope-viewer: {}\n", warning);
        warnings.push_back(std::move(warning));
    }
    if (state.track_filter.empty()) state.track_filter = a.filter;
    state.arranged.resize(doc.files.size() - 1);
    state.arranged.push_back(std::move(a));
}

void shell::save_file_states() {
    if (state.arranged.size() > doc.files.size()) state.arranged.resize(doc.files.size());
    for (file_arrangement& a : state.arranged) a.filter = state.track_filter;   // the filter goes with every file
    for (std::string& e : file_states_.save_changed(state.arranged)) {
        fmt::print(stderr, "pipescope-viewer: could not keep the track arrangement: {}\n", e);
        warnings.push_back("could not keep the track arrangement: " + e);
    }
}

void shell::forget_file_states() {
    file_states_.clear();
    state.arranged.clear();
    state.bookmark_edit.reset();
    state.bookmark_current.reset();
}

void shell::bookmark_menu() {
    ImGui::Separator();
    if (ImGui::MenuItem("Add bookmark", "B", false, !doc.runs.empty()) && add_bookmark(doc, state)) {
        state.show_details = true;   // its note is edited there
        if (state.active_view != "timeline") set_view("timeline");
    }
    if (ImGui::MenuItem("Next bookmark", "]")) step_bookmark(doc, state, +1);
    if (ImGui::MenuItem("Previous bookmark", "[")) step_bookmark(doc, state, -1);
}

}   // namespace pipescope::viewer
