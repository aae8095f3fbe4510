// The help overlay: controls and what the colours mean (H or F1 toggles it).
#include "palette.hpp"
#include "view.hpp"

namespace pipescope::viewer {

void draw_help_overlay(view_context& ctx) {
    view_state& st = ctx.state;
    if (!st.show_help) return;
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f), ImGuiCond_Always,
                            ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowBgAlpha(0.94f);
    bool open = true;
    if (ImGui::Begin("Help", &open, ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings)) {
        ImGui::TextUnformatted("pipescope-viewer: how pipeline-parallel programs were scheduled");
        ImGui::Separator();
        if (ImGui::BeginTable("##keys", 2, ImGuiTableFlags_SizingFixedFit)) {
            const char* rows[][2] = {
                {"mouse wheel", "zoom at the cursor"},
                {"shift + wheel", "scroll the tracks"},
                {"drag", "pan (time and tracks)"},
                {"W / S", "zoom in / out (as in Perfetto)"},
                {"A / D", "pan left / right"},
                {"F", "frame the selection"},
                {"0 or Home", "show everything"},
                {"click", "select a slice or instant; details on the right"},
                {"Page Down / Page Up", "lesson: next / previous step (--lesson)"},
                {"L", "lesson panel: hide / show"},
                {"H or F1", "this help"},
                {"Ctrl+O", "open a trace (or drop files on the window)"},
            };
            for (auto& r : rows) {
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::TextColored(ImVec4(0.6f, 0.8f, 1.f, 1.f), "%s", r[0]);
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(r[1]);
            }
            ImGui::EndTable();
        }
        ImGui::Separator();
        ImGui::TextUnformatted("Worker tracks: node slices coloured by stage (legend above the timeline),");
        ImGui::TextUnformatted("idle light grey, parked dark grey, a red bar where events were lost.");
        ImGui::TextUnformatted("Triangles: steals (cyan), wake-ups (yellow), suspend/resume (magenta).");
        ImGui::TextUnformatted("Lines: one track per in-flight iteration slot; control: throttling (K).");
        ImGui::TextUnformatted("Arrows: the selection's flows; 'All flows' draws every flow in view.");
        ImGui::TextUnformatted("Slices narrower than a pixel merge into blocks of their dominant colour.");
    }
    ImGui::End();
    if (!open) st.show_help = false;
}

}  // namespace pipescope::viewer
