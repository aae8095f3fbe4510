#include "replay.hpp"

#include "palette.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace pipescope::viewer {

void replay_control::advance(view_state& st, double t0, double t1) {
    if (!st.cursor) st.cursor = (t0 + t1) / 2;   // first time: halfway through
    if (st.playing) {
        if (speed <= 0) speed = std::max(1.0, (t1 - t0) / 20);
        *st.cursor += static_cast<double>(ImGui::GetIO().DeltaTime) * speed;
        if (*st.cursor >= t1) {
            *st.cursor = t1;
            st.playing = false;
        }
    }
}

void replay_control::buttons(view_state& st, double t0, double t1, const replay_steps& steps, toolbar_flow& flow) {
    if (!st.cursor) st.cursor = (t0 + t1) / 2;
    double& cur = *st.cursor;
    auto tip = [](const char* s) {
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", s);
    };
    flow.begin_group("##replay buttons");
    if (ImGui::Button("|<")) {
        cur = t0;
        st.playing = false;
    }
    tip("Start of the run (Home)");
    ImGui::SameLine(0, 3);
    if (ImGui::Button("<")) {
        if (steps.prev)
            if (auto e = steps.prev(cur)) cur = *e;
        st.playing = false;
    }
    tip(steps.prev_tip);
    ImGui::SameLine(0, 3);
    if (ImGui::Button(st.playing ? "Pause" : "Play", ImVec2(ImGui::GetFontSize() * 3.5f, 0))) {
        st.playing = !st.playing;
        if (st.playing && cur >= t1) cur = t0;
    }
    tip("Replay the run at the chosen speed (Space)");
    ImGui::SameLine(0, 3);
    if (ImGui::Button(">")) {
        if (steps.next)
            if (auto e = steps.next(cur)) cur = *e;
        st.playing = false;
    }
    tip(steps.next_tip);
    ImGui::SameLine(0, 3);
    if (ImGui::Button(">|")) {
        cur = t1;
        st.playing = false;
    }
    tip("End of the run (End)");
    flow.end_group();
    // Speed: trace time per second, logarithmic.
    if (speed <= 0) speed = std::max(1.0, (t1 - t0) / 20);
    float lg = static_cast<float>(std::log10(speed));
    // The speed is written beside the slider, not in it: its grab covered the text (issue 37).
    const std::string text = format_duration(speed, 2) + " / s";
    const float slider_w = ImGui::GetFontSize() * 6, gap = ImGui::GetStyle().ItemInnerSpacing.x;   // 90 px at scale 1
    flow.next(slider_w + gap + toolbar_flow::text_width(text), text);
    ImGui::SetNextItemWidth(slider_w);
    if (ImGui::SliderFloat("##speed", &lg, 0.0f, 10.0f, "")) speed = std::pow(10.0, static_cast<double>(lg));
    tip("Playback speed: trace time per second");
    ImGui::SameLine(0, gap);
    ImGui::TextUnformatted(text.c_str());
    tip("Playback speed: trace time per second");
}

void replay_control::scrubber(view_state& st, double t0, double t1, float height) {
    if (height <= 0) height = std::round(ImGui::GetFontSize() * 2);
    if (!st.cursor) st.cursor = (t0 + t1) / 2;
    double& cur = *st.cursor;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float w = std::max(100.f, ImGui::GetContentRegionAvail().x);
    ImGui::InvisibleButton("##scrub", ImVec2(w, height));
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float bx0 = p.x + 8, bx1 = p.x + w - 8, by = p.y + height - 9;
    auto x_of = [&](double t) { return bx0 + static_cast<float>((t - t0) / std::max(1.0, t1 - t0)) * (bx1 - bx0); };
    if (ImGui::IsItemActive()) {
        const float mx = std::clamp(ImGui::GetIO().MousePos.x, bx0, bx1);
        cur = t0 + (mx - bx0) / (bx1 - bx0) * (t1 - t0);
        st.playing = false;
    }
    dl->AddRectFilled(ImVec2(bx0, by - 3), ImVec2(bx1, by + 3), IM_COL32(60, 62, 72, 255), 3);
    const float cx = x_of(std::clamp(cur, t0, t1));
    dl->AddRectFilled(ImVec2(bx0, by - 3), ImVec2(cx, by + 3), rgb(0x3F8FE0), 3);
    // Ticks at 1-2-5 steps of the run's time.
    const double step = nice_step((t1 - t0) / std::max(1.f, bx1 - bx0), 90);
    for (double t = std::ceil(t0 / step) * step; t <= t1; t += step) {
        const float x = x_of(t);
        dl->AddLine(ImVec2(x, by + 3), ImVec2(x, by + 6), IM_COL32(140, 140, 150, 255));
    }
    dl->AddCircleFilled(ImVec2(cx, by), 6,
                        ImGui::IsItemActive() || ImGui::IsItemHovered() ? IM_COL32(255, 255, 255, 255)
                                                                        : IM_COL32(220, 220, 228, 255));
    const std::string a = "t = " + format_duration(cur, 3), b = format_duration(t1 - t0, 3);
    const std::string whole = "run " + format_duration(t0, 3) + " to " + format_duration(t1, 3) + "   (" + b + ")";
    dl->AddText(ImVec2(bx0, p.y + 1), IM_COL32(240, 240, 245, 255), a.c_str());
    // The run's range on the right, shortened to its length where it would run into the time on the
    // left (a narrow window), and left out where even that would.
    const float a_end = bx0 + ImGui::CalcTextSize(a.c_str()).x + ImGui::GetFontSize();
    std::string c = whole;
    for (const std::string& shorter : {"(" + b + ")", std::string()})
        if (bx1 - ImGui::CalcTextSize(c.c_str()).x < a_end) c = shorter;
    st.layout.check("replay scrubber", a, ImGui::CalcTextSize(a.c_str()).x, bx1 - bx0);
    if (!c.empty())
        dl->AddText(ImVec2(bx1 - ImGui::CalcTextSize(c.c_str()).x, p.y + 1), IM_COL32(150, 150, 160, 255), c.c_str());
    if (ImGui::IsItemHovered() && !ImGui::IsItemActive())
        ImGui::SetTooltip(c == whole ? "Drag to move the time cursor" : "Drag to move the time cursor\n%s", whole.c_str());
}

void replay_control::keys(view_state& st, double, double t1, const replay_steps& steps) {
    if (!st.cursor) return;
    double& cur = *st.cursor;
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Space), false)) st.playing = !st.playing;
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_RightArrow))) {
        if (steps.next)
            if (auto e = steps.next(cur)) cur = *e;
        st.playing = false;
    }
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_LeftArrow))) {
        if (steps.prev)
            if (auto e = steps.prev(cur)) cur = *e;
        st.playing = false;
    }
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_End), false)) cur = t1;
}

}   // namespace pipescope::viewer
