// The lesson panel: a lesson written by `pipescope lesson NAME` (lesson.json, model/lesson.hpp) told
// in steps beside the view each step chooses. Shows the lesson's title and seed sections, the current
// step (title, text, Prev / Next), the findings measured against what the paper reports, the
// programs a policy refused, and the runs. Going to a step is the shell's job (it switches views):
// this panel only says which step to go to.
#include "palette.hpp"
#include "view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <string>

namespace pipescope::viewer {

namespace {

const ImVec4 col_heading(0.62f, 0.80f, 1.00f, 1.f);
const ImVec4 col_not_here(0.96f, 0.62f, 0.35f, 1.f);
// The badges' fills: colours of this panel alone (the screenshot test finds them).
constexpr ImU32 col_holds_badge = rgb(0x3E9B57);
constexpr ImU32 col_not_here_badge = rgb(0xC7793A);
const ImVec4 col_note(1.00f, 0.72f, 0.30f, 1.f);

// A word on a filled rounded box, as an item.
void badge(const char* text, ImU32 fill) {
    const ImVec2 ts = ImGui::CalcTextSize(text), pad(6, 1);
    const ImVec2 p = ImGui::GetCursorScreenPos();
    ImGui::Dummy(ImVec2(ts.x + 2 * pad.x, ts.y + 2 * pad.y));
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddRectFilled(p, ImVec2(p.x + ts.x + 2 * pad.x, p.y + ts.y + 2 * pad.y), fill, 3);
    dl->AddText(ImVec2(p.x + pad.x, p.y + pad.y), text_colour_on(fill), text);
}

void section(const char* title) {
    ImGui::Dummy(ImVec2(0, 4));
    ImGui::TextColored(col_heading, "%s", title);
    ImGui::Separator();
}

// Each finding in two columns: what was measured here (big) and whether it holds; what it is and
// what the paper found (and, when it does not hold here, why).
void findings(view_context& ctx, const lesson& l) {
    if (l.findings.empty()) return;
    section("Findings: this run and the paper");
    if (!ImGui::BeginTable("##findings", 2, ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp)) return;
    ImGui::TableSetupColumn("here", ImGuiTableColumnFlags_WidthFixed, 86);
    ImGui::TableSetupColumn("what", ImGuiTableColumnFlags_WidthStretch);
    for (const lesson_finding& f : l.findings) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        if (ctx.mono) ImGui::PushFont(ctx.mono);
        ImGui::SetWindowFontScale(1.25f);
        ImGui::TextUnformatted(f.shown.empty() ? "-" : f.shown.c_str());
        ImGui::SetWindowFontScale(1.0f);
        if (ctx.mono) ImGui::PopFont();
        badge(f.holds ? "holds" : "not here", f.holds ? col_holds_badge : col_not_here_badge);
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip("%s",
                              f.holds ? "this run shows the paper's finding" : "this run does not show the paper's finding");
        ImGui::TableNextColumn();
        ImGui::TextWrapped("%s", f.what.c_str());
        if (ImGui::IsItemHovered() && !f.name.empty()) ImGui::SetTooltip("%s", f.name.c_str());
        if (!f.paper.empty()) {
            ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
            ImGui::TextWrapped("paper: %s", f.paper.c_str());
            ImGui::PopStyleColor();
        }
        if (!f.holds && !f.why_not.empty()) {
            ImGui::PushStyleColor(ImGuiCol_Text, col_not_here);
            ImGui::TextWrapped("why not here: %s", f.why_not.c_str());
            ImGui::PopStyleColor();
        }
    }
    ImGui::EndTable();
}

void refusals(const lesson& l) {
    if (l.refusals.empty()) return;
    section("Refused");
    for (const lesson_refusal& r : l.refusals) {
        ImGui::Bullet();
        ImGui::TextWrapped("%s under %s: %s", r.workload.c_str(), r.policy.c_str(),
                           r.reason.empty() ? "accepted (no refusal)" : r.reason.c_str());
    }
}

void runs(const lesson& l) {
    if (l.runs.empty()) return;
    ImGui::Dummy(ImVec2(0, 4));
    char label[48];
    *fmt::format_to_n(label, sizeof label - 1, "Runs ({})", l.runs.size()).out = '\0';
    if (!ImGui::CollapsingHeader(label)) return;
    for (const lesson_run& r : l.runs) {
        std::string what = r.workload + " under " + r.policy;
        for (const auto& p : r.params) what += ", " + p;
        if (r.workers) what += ", P = " + std::to_string(r.workers);
        if (!r.size.empty()) what += ", " + r.size;
        ImGui::Bullet();
        ImGui::TextWrapped("%s: %s", r.key.c_str(), what.c_str());
        ImGui::Indent();
        ImGui::TextDisabled("%s", r.trace.c_str());
        ImGui::Unindent();
    }
}

// Step k of n, a button per step, Prev / Next. Prev / Next are as wide as their words and go to a
// line of their own, right-aligned, when the step buttons leave no room for them ("Next →" was cut
// at the panel's edge: issue 37); the layout audit checks they fit.
void step_buttons(view_context& ctx, const lesson& l, std::size_t step, std::size_t& go) {
    const std::size_t n = l.steps.size();
    ImGui::AlignTextToFramePadding();
    ImGui::Text("Step %zu of %zu", step + 1, n);
    ImGui::SameLine();
    for (std::size_t k = 0; k < n; ++k) {
        ImGui::PushID(static_cast<int>(k));
        const bool current = k == step;
        if (current) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
        if (ImGui::SmallButton(std::to_string(k + 1).c_str())) go = k;
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", l.steps[k].title.c_str());
        if (current) ImGui::PopStyleColor();
        ImGui::PopID();
        ImGui::SameLine(0, 3);
    }
    const char* prev = "\xe2\x86\x90 Prev";
    const char* next = "Next \xe2\x86\x92";
    const float pad = ImGui::GetStyle().FramePadding.x * 2;
    const float bw = std::max(ImGui::CalcTextSize(prev).x, ImGui::CalcTextSize(next).x) + pad, pair = 2 * bw + 4;
    const float right = ImGui::GetWindowContentRegionMax().x;
    if (ImGui::GetCursorPosX() + 6 + pair > right) ImGui::NewLine();
    ImGui::SetCursorPosX(std::max(ImGui::GetCursorPosX() + 6, right - pair));
    ctx.state.layout.check("lesson step buttons", next, ImGui::GetCursorPosX() + pair, right);
    ImGui::BeginDisabled(step == 0);
    if (ImGui::Button(prev, ImVec2(bw, 0))) go = step - 1;
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("Previous step (Page Up)");
    ImGui::SameLine(0, 4);
    ImGui::BeginDisabled(step + 1 >= n);
    if (ImGui::Button(next, ImVec2(bw, 0))) go = step + 1;
    ImGui::EndDisabled();
    if (ImGui::IsItemHovered(ImGuiHoveredFlags_AllowWhenDisabled)) ImGui::SetTooltip("Next step (Page Down)");
}

}   // namespace

std::size_t draw_lesson_panel(view_context& ctx, const lesson& l, std::size_t step, const std::string& note) {
    const std::size_t n = l.steps.size();
    if (n == 0) return step;
    step = std::min(step, n - 1);
    std::size_t go = step;

    ImGui::PushTextWrapPos(0);
    ImGui::SetWindowFontScale(1.15f);
    ImGui::TextWrapped("%s", l.title.c_str());
    ImGui::SetWindowFontScale(1.0f);
    std::string sub = "lesson " + l.name;
    if (!l.seeds.empty()) sub += "  \xc2\xb7  seeds " + l.seeds;
    ImGui::TextDisabled("%s", sub.c_str());
    ImGui::PopTextWrapPos();
    ImGui::Separator();

    step_buttons(ctx, l, step, go);
    if (!ImGui::GetIO().WantTextInput) {
        if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_PageDown), false) && step + 1 < n) go = step + 1;
        if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_PageUp), false) && step > 0) go = step - 1;
    }

    const lesson_step& s = l.steps[step];
    ImGui::Dummy(ImVec2(0, 2));
    ImGui::SetWindowFontScale(1.1f);
    ImGui::TextColored(col_heading, "%s", s.title.c_str());
    ImGui::SetWindowFontScale(1.0f);
    if (const view_entry* v = find_view(s.move.view)) {   // what the step put on the left
        ImGui::SameLine();
        ImGui::TextDisabled("(%s)", v->title);
    }
    ImGui::TextWrapped("%s", s.text.c_str());
    if (!note.empty()) {
        ImGui::PushStyleColor(ImGuiCol_Text, col_note);
        ImGui::TextWrapped("%s", note.c_str());
        ImGui::PopStyleColor();
    }

    findings(ctx, l);
    refusals(l);
    runs(l);
    return go;
}

}   // namespace pipescope::viewer
