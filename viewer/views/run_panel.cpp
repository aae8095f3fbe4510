// The run panel (run_panel.hpp): a form over `pipescope list --json`'s choices and the runs started.
#include "run_panel.hpp"

#include <imgui.h>

#include <fmt/format.h>

#include <algorithm>
#include <string>

namespace pipescope::viewer {

namespace {

// A line that may be wider than the panel: cut at its edge, whole in a tooltip.
void line_with_tooltip(const std::string& text) {
    ImGui::TextDisabled("%s", text.c_str());
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", text.c_str());
}

// A combo over `names`; true when the choice changed.
bool choose(const char* label, int& index, const std::vector<std::string>& names) {
    const char* shown = index >= 0 && static_cast<std::size_t>(index) < names.size() ? names[index].c_str() : "";
    bool changed = false;
    if (ImGui::BeginCombo(label, shown)) {
        for (std::size_t i = 0; i < names.size(); ++i)
            if (ImGui::Selectable(names[i].c_str(), static_cast<int>(i) == index)) {
                changed = static_cast<int>(i) != index;
                index = static_cast<int>(i);
            }
        ImGui::EndCombo();
    }
    return changed;
}

// One parameter's text field, its default as the hint and its meaning as the tooltip.
void parameter_field(param_field& f, float label_w) {
    ImGui::PushID(f.parameter.name.c_str());
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted(f.parameter.name == "K" ? "K (throttle)" : f.parameter.name.c_str());
    if (!f.parameter.meaning.empty() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", f.parameter.meaning.c_str());
    ImGui::SameLine(label_w);
    ImGui::SetNextItemWidth(-1);
    const std::string hint = f.parameter.default_value.empty() ? "(default)" : f.parameter.default_value;
    ImGui::InputTextWithHint("##v", hint.c_str(), f.value.data(), f.value.size());
    ImGui::PopID();
}

// The form: workload, policy, workers, size, K and the other parameters, and the Run button.
void form(run_launcher& l, const run_catalog& c, float s) {
    std::vector<std::string> names;
    for (const auto& w : c.workloads) names.push_back(w.name);
    const float label_w = 120 * s;
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Workload");
    ImGui::SameLine(label_w);
    ImGui::SetNextItemWidth(-1);
    if (choose("##workload", l.workload, names)) l.select_workload(l.workload);
    const catalog_workload* w = l.current_workload();
    if (!w) return;
    line_with_tooltip(w->summary);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Policy");
    ImGui::SameLine(label_w);
    ImGui::SetNextItemWidth(-1);
    choose("##policy", l.policy, w->policies);
    if (l.policy >= 0 && static_cast<std::size_t>(l.policy) < w->policies.size())
        if (const auto it = c.policy_summaries.find(w->policies[l.policy]); it != c.policy_summaries.end())
            line_with_tooltip(it->second);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Workers");
    ImGui::SameLine(label_w);
    ImGui::SetNextItemWidth(160 * s);
    ImGui::SliderInt("##workers", &l.workers, 1, 32);
    ImGui::SameLine();
    ImGui::Checkbox("virtual", &l.virtual_time);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("virtual workers in virtual time: any count on this machine (docs/virtual.md)");
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("Size");
    for (std::size_t i = 0; i < run_launcher::sizes.size(); ++i) {
        ImGui::SameLine(i == 0 ? label_w : 0);
        ImGui::RadioButton(run_launcher::sizes[i], &l.size, static_cast<int>(i));
    }
    if (!l.params.empty() && l.params.front().parameter.name == "K") parameter_field(l.params.front(), label_w);
    if (ImGui::TreeNode("Parameters")) {
        for (auto& f : l.params)
            if (f.parameter.name != "K") parameter_field(f, label_w);
        ImGui::TreePop();
    }
}

const char* phase_text(const std::string& phase) {
    if (phase == "reference") return "serial reference";
    if (phase == "measured") return "measured run";
    if (phase == "writing") return "writing the trace";
    if (phase == "done") return "done";
    return "starting";
}

// One run: its name, progress bar (or how it ended), path, messages, Cancel.
void job_row(run_launcher& l, std::size_t i, float s) {
    const run_job& j = *l.jobs()[i];
    const run_job::snapshot snap = j.get();
    const run_choice& c = j.choice();
    ImGui::PushID(static_cast<int>(i));
    std::string params;
    for (const auto& [k, v] : c.params) params += fmt::format(" · {}={}", k, v);
    ImGui::Text("%s · %s · P=%u%s%s · %s", c.workload.c_str(), c.policy.c_str(), c.workers, c.virtual_time ? " virtual" : "",
                params.c_str(), c.size.c_str());
    if (snap.state == run_job::status::running) {
        const std::string overlay = fmt::format("{} · {:.1f} s", phase_text(snap.progress.phase), snap.progress.elapsed_s);
        ImGui::ProgressBar(progress_fraction(snap.progress), ImVec2(-90 * s, 0), overlay.c_str());
        ImGui::SameLine();
        if (ImGui::Button("Cancel", ImVec2(-1, 0))) l.cancel(i);
    } else {
        const ImVec4 colour = snap.state == run_job::status::finished ? ImVec4(0.55f, 0.85f, 0.55f, 1)
                              : snap.state == run_job::status::failed ? ImVec4(1, 0.5f, 0.5f, 1)
                                                                      : ImVec4(0.8f, 0.8f, 0.8f, 1);
        ImGui::TextColored(colour, "%s%s", to_string(snap.state),
                           snap.state == run_job::status::finished    ? ": opened beside the other runs"
                           : snap.state == run_job::status::cancelled ? ": nothing kept"
                                                                      : "");
    }
    if (snap.state == run_job::status::running || snap.state == run_job::status::finished)
        line_with_tooltip(j.trace().string());   // a failed or cancelled run has no file
    if (snap.state == run_job::status::failed && !snap.messages.empty()) ImGui::TextWrapped("%s", snap.messages.c_str());
    ImGui::Separator();
    ImGui::PopID();
}

}   // namespace

void draw_run_panel(run_launcher& l, float s) {
    if (!l.show) return;
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    // Bottom left, over the view's lower part: the runs it adds appear at the top of the tracks.
    const ImVec2 size(std::min(560 * s, vp->WorkSize.x - 80 * s), std::min(440 * s, vp->WorkSize.y * 0.6f));
    ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + 40 * s, vp->WorkPos.y + vp->WorkSize.y - size.y - 40 * s),
                            ImGuiCond_Appearing);
    ImGui::SetNextWindowSize(size, ImGuiCond_Appearing);
    if (ImGui::Begin("New run", &l.show, ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings)) {
        const run_catalog& c = l.catalog();
        if (!c.error.empty()) {
            ImGui::TextColored(ImVec4(1, 0.5f, 0.5f, 1), "Cannot offer runs:");
            ImGui::TextWrapped("%s", c.error.c_str());
        } else {
            form(l, c, s);
            if (ImGui::Button("Run", ImVec2(120 * s, 0))) l.refused = l.start();
            ImGui::SameLine();
            ImGui::TextDisabled("into %s", l.dir.string().c_str());
            if (!l.refused.empty()) ImGui::TextColored(ImVec4(1, 0.5f, 0.5f, 1), "%s", l.refused.c_str());
        }
        ImGui::Separator();
        for (std::size_t i = l.jobs().size(); i-- > 0;) job_row(l, i, s);   // newest first
    }
    ImGui::End();
}

nlohmann::json run_panel_state(const run_launcher& l) {
    nlohmann::json jobs = nlohmann::json::array();
    for (const auto& j : l.jobs()) {
        const run_job::snapshot s = j->get();
        jobs.push_back({{"state", to_string(s.state)},
                        {"phase", s.progress.phase},
                        {"progress", progress_fraction(s.progress)},
                        {"path", j->trace().string()},
                        {"exit_code", s.exit_code},
                        {"messages", s.messages}});
    }
    const run_choice c = l.choice();
    nlohmann::json params = nlohmann::json::object();
    for (const auto& [k, v] : c.params) params[k] = v;
    return {{"open", l.show},
            {"cli", l.cli.string()},
            {"dir", l.dir.string()},
            {"catalog_error", !l.catalog_read()           ? nlohmann::json("not read yet")
                              : l.catalog_error().empty() ? nlohmann::json(nullptr)
                                                          : nlohmann::json(l.catalog_error())},
            {"choice",
             {{"workload", c.workload},
              {"policy", c.policy},
              {"workers", c.workers},
              {"size", c.size},
              {"virtual", c.virtual_time},
              {"params", std::move(params)}}},
            {"jobs", std::move(jobs)},
            {"last_path", l.last_path().string()}};
}

}   // namespace pipescope::viewer
