// The shell's side of the lesson panel: loading a lesson's traces and applying a step's move. The
// panel itself (views/lesson_panel.cpp) only draws and says which step to go to.
#include "shell.hpp"

#include <fmt/core.h>

#include <cstdio>

namespace pipescope::viewer {

void shell::open_lesson(lesson l, std::size_t first) {
    for (const auto& path : l.trace_paths) open(path, open_origin::command_line);   // the lesson file is the recent one
    lesson_loaded = std::move(l);
    lesson_step = first;
    lesson_pending_ = true;   // frame() goes to the step when the loads are done
    state.show_lesson = true;
}

void shell::go_to_step(std::size_t k) {
    if (!lesson_loaded || lesson_loaded->steps.empty()) return;
    lesson_step = std::min(k, lesson_loaded->steps.size() - 1);
    lesson_pending_ = false;
    state.show_lesson = true;
    // Runs from different files ran at unrelated times: the document's default is aligned then
    // (add_loaded), and a step that does not say otherwise keeps it.
    const resolved_move m = resolve_move(doc, lesson_loaded->steps[lesson_step].move, doc.files.size() >= 2);
    set_view(m.view);   // a fresh view: a step looks the same whichever step came before
    state.align_runs = m.align_runs;
    state.cursor = m.cursor;
    state.frame_request = m.frame;
    state.select(doc, m.sel);
    state.scroll_to_selection = m.sel.valid();
    lesson_note = m.problem;
    if (!m.problem.empty())
        fmt::print(stderr, "pipescope-viewer: {}: step {}: {}\n", lesson_loaded->file.string(), lesson_step + 1, m.problem);
}

void shell::side_column(view_context& ctx) {
    const bool lesson_open = lesson_loaded && state.show_lesson;
    ImGui::BeginChild("##side", ImVec2(0, 0), false, ImGuiWindowFlags_NoScrollbar);
    // With the lesson open, the details panel shows only a selection (a step may select a node), under
    // the lesson; the document summary it shows otherwise would crowd the lesson's text.
    const bool details = state.show_details && (!lesson_open || (state.sel.valid() && !doc.empty()));
    if (lesson_open) {
        const float h = details ? ImGui::GetContentRegionAvail().y * 0.6f : 0.f;
        ImGui::BeginChild("##lesson", ImVec2(0, h), true);
        const std::size_t go = draw_lesson_panel(ctx, *lesson_loaded, lesson_step, lesson_note);
        ImGui::EndChild();
        if (go != lesson_step) go_to_step(go);
    }
    if (details) {
        ImGui::BeginChild("##details", ImVec2(0, 0), true);
        draw_details_panel(ctx);
        ImGui::EndChild();
    }
    ImGui::EndChild();
}

}   // namespace pipescope::viewer
