#include "search_box.hpp"

#include <fmt/format.h>

#include <cstdio>

namespace pipescope::viewer {

void search_box::draw(view_context& ctx, bool focus, toolbar_flow& flow) {
    view_state& st = ctx.state;
    if (focus || refocus_) ImGui::SetKeyboardFocusHere();
    refocus_ = false;
    const float box_w = ImGui::GetFontSize() * 14;   // 210 px at scale 1
    flow.next(box_w, "search box");
    ImGui::SetNextItemWidth(box_w);
    const bool enter =
        ImGui::InputTextWithHint("##search", "search  ( / )", query_, sizeof query_, ImGuiInputTextFlags_EnterReturnsTrue);
    // ImGui's Esc reverts what was typed since the box took the keyboard; here it only leaves the box.
    if (ImGui::IsItemActive()) typed_ = query_;
    else if (ImGui::IsItemDeactivated() && ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Escape), false))
        *fmt::format_to_n(query_, sizeof query_ - 1, "{}", typed_).out = '\0';
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "A slice name or part of it, a stage's name, \"stage 3\" / s3, \"iteration 12\" / i12; words combine.\n"
            "Enter: next match, Shift+Enter: previous (Esc leaves the box)");
    st.search.update(ctx.doc, query_, st.align_runs);
    st.search.marked = 0;   // counted again as this frame's tracks are drawn
    results_.draw(ctx);
    if (enter) {
        step(ctx, ImGui::GetIO().KeyShift);
        refocus_ = true;
    }
    const std::string counter = st.search.counter();
    if (counter.empty()) return;
    // The arrows and "3 / 41" stay together.
    const float arrow = ImGui::GetFrameHeight(), spacing = ImGui::GetStyle().ItemSpacing.x;
    flow.next(2 * arrow + 2 + 2 * spacing + toolbar_flow::text_width(counter) + toolbar_flow::button_width("List"), counter);
    if (ImGui::ArrowButton("##prev", ImGuiDir_Left)) step(ctx, true);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Previous match (Shift+Enter)");
    ImGui::SameLine(0, 2);
    if (ImGui::ArrowButton("##next", ImGuiDir_Right)) step(ctx, false);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Next match (Enter)");
    ImGui::SameLine();
    ImGui::TextUnformatted(counter.c_str());
    ImGui::SameLine();
    ImGui::BeginDisabled(st.search.matches.empty());
    if (ImGui::Button("List")) st.search.list_open = !st.search.list_open;
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled))
        ImGui::SetTooltip("Every match in a list: run, track, name, start, duration; click one to go there");
}

void search_box::step(view_context& ctx, bool backwards) {
    view_state& st = ctx.state;
    show_match(ctx, st.search.step(backwards, backwards ? st.vp.t1() : st.vp.t0));
}

void show_match(view_context& ctx, std::size_t i) {
    view_state& st = ctx.state;
    if (i >= st.search.matches.size()) return;
    st.search.current = i;
    const search_match& m = st.search.matches[i];
    if (!holds(ctx.doc, m.file, m.ev)) return;   // the files changed since the search (it runs again next frame)
    st.select(ctx.doc, {m.file, m.ev});
    if (auto range = selection_range(ctx.doc, st.sel, st.align_runs)) st.bring_into_view(*range);
}

}   // namespace pipescope::viewer
