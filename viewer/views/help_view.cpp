// The help overlay: every shortcut, by where it works, and what the colours mean. `?`, H or F1
// toggle it; Esc closes it. docs/viewer.md ("Keyboard and mouse") lists the same keys: a new
// shortcut gets a line in both.
#include "palette.hpp"
#include "view.hpp"

namespace pipescope::viewer {

namespace {

struct shortcut {
    const char* keys;
    const char* what;
};
struct shortcut_group {
    const char* where;
    std::initializer_list<shortcut> keys;
};

const shortcut_group groups[] = {
    {"Everywhere",
     {{"? or H or F1", "this help (toggle)"},
      {"Esc", "close the help, a menu or the file browser; else clear the selection and the area"},
      {"1 .. 8 or Ctrl+1 .. 8", "views: timeline, DAG, compare, breakdown, explain, stage graph, scaling, statistics"},
      {"Ctrl+O", "open a trace (or drop files on the window)"},
      {"Ctrl+R", "new run: record a workload (policy, workers, K, size) and open it beside the others"},
      {"Ctrl+Q", "quit"},
      {"Ctrl+C", "copy the selection's details (tables: Copy as TSV, or right-click)"},
      {"File > Save screenshot...", "the window as a PNG in the current directory"},
      {"click", "select a slice, instant, node or stage; details on the right"}}},
    {"Timeline and compare",
     {{"mouse wheel", "zoom at the cursor"},
      {"Shift + wheel", "scroll the tracks"},
      {"drag", "pan (time and tracks)"},
      {"W / S", "zoom in / out at the pointer: a tap a step, held continuously (as in Perfetto)"},
      {"A / D", "pan left / right"},
      {"F", "frame the selection"},
      {"0 or Home", "show everything"},
      {"/ or Ctrl+F", "timeline: search; Enter / Shift+Enter next / previous match, Esc leaves the box"},
      {"List", "timeline: the matches (marked in the tracks) in a list; click one to go there"},
      {"Shift + drag", "timeline: select an area (time x tracks); its statistics in the details panel"},
      {"M", "timeline: mark the selection's range (again: unmark); the ruler counts from the mark"},
      {"right-click a track's name", "timeline: pin it to the top / unpin, hide it (\"N hidden\" shows it again)"},
      {"click a run header's name", "timeline: collapse / expand the run (right-click: its menu)"},
      {"B", "timeline: bookmark the selection's start or the time cursor; type its note, Enter"},
      {"[ / ]", "timeline: previous / next bookmark (the list: details panel)"}}},
    {"DAG and stage graph (replay)",
     {{"Space", "play / pause the replay"},
      {"Left / Right", "previous / next event"},
      {"Home / End", "the run's start (stage graph; DAG: show the whole DAG) / its end"},
      {"F", "DAG: frame the selected node"},
      {"wheel, drag", "DAG: zoom (Ctrl: rows only, Shift: columns only) and pan"}}},
    {"Statistics (8)",
     {{"click a column header", "sort by it (again: the other way)"},
      {"click / double-click a row", "its histogram / its longest slice in the timeline"},
      {"drag on the histogram", "count and time in that range, for both runs"}}},
    {"Lesson (--lesson)", {{"Page Down / Page Up", "next / previous step"}, {"L", "lesson panel: hide / show"}}},
};

}   // namespace

void draw_help_overlay(view_context& ctx) {
    view_state& st = ctx.state;
    if (!st.show_help) return;
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + vp->WorkSize.x * 0.5f, vp->WorkPos.y + vp->WorkSize.y * 0.5f),
                            ImGuiCond_Always, ImVec2(0.5f, 0.5f));
    ImGui::SetNextWindowSizeConstraints(ImVec2(0, 0), ImVec2(vp->WorkSize.x * 0.95f, vp->WorkSize.y * 0.95f));
    ImGui::SetNextWindowBgAlpha(0.96f);
    bool open = true;
    if (ImGui::Begin("Help", &open,
                     ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings)) {
        ImGui::TextUnformatted("pipescope-viewer: how pipeline-parallel programs were scheduled");
        // One table for every group, so that the descriptions line up.
        if (ImGui::BeginTable("##keys", 2, ImGuiTableFlags_SizingFixedFit)) {
            for (const auto& g : groups) {
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::Dummy(ImVec2(0, 2));
                ImGui::TextDisabled("%s", g.where);
                for (const auto& k : g.keys) {
                    ImGui::TableNextRow();
                    ImGui::TableNextColumn();
                    ImGui::TextColored(ImVec4(0.6f, 0.8f, 1.f, 1.f), "%s", k.keys);
                    ImGui::TableNextColumn();
                    ImGui::TextUnformatted(k.what);
                }
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

}   // namespace pipescope::viewer
