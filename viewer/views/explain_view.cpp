// Explain: the analysis of each run in plain words (analysis/report.hpp, docs/analysis.md) — the
// verdicts with their evidence and suggestions, the key numbers (makespan, work/span, speedup bound,
// queueing bounds), and the full text report. Clicking a verdict goes to the place it cites: the
// cited node (iteration, stage) is selected when there is one, the time cursor is put at the start
// of the cited range, and the timeline frames the range when it is shown next.
#include "palette.hpp"
#include "view.hpp"

#include "../model/breakdown.hpp"
#include "../model/compare.hpp"
#include "../model/speedup_note.hpp"

#include <pipescope/analysis/numbers.hpp>
#include <pipescope/analysis/report.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

namespace pipescope::viewer {
namespace {

namespace an = pipescope::analysis;

class explain_view final : public view {
public:
    void draw(view_context& ctx) override;

private:
    void go_to(view_context& ctx, std::uint32_t run, const an::place& where);
    document_key key_;
    std::vector<an::run_report> reports_;   // per document run
    std::vector<std::string> texts_;        // to_text of each, for the "full report" section
    int last_clicked_ = -1;
};

void explain_view::go_to(view_context& ctx, std::uint32_t run, const an::place& where) {
    const document& doc = ctx.doc;
    view_state& st = ctx.state;
    const run_ref& rr = doc.runs[run];
    if (where.iteration >= 0 && where.stage >= 0) {
        const selection s =
            select_node(doc, static_cast<std::uint64_t>(where.iteration), static_cast<std::uint64_t>(where.stage), run);
        if (s.valid()) st.select(doc, s);
    }
    const double off = display_offset(doc, rr, st.align_runs);
    double a = static_cast<double>(where.begin) - off, b = static_cast<double>(where.end) - off;
    if (b - a < 1000) {   // a point or a tiny node: show some context around it
        const double mid = (a + b) * 0.5, w = std::max(20.0 * (b - a), 20000.0);
        a = mid - w * 0.5;
        b = mid + w * 0.5;
    }
    st.frame_request = std::pair{a, b};
    st.cursor = static_cast<double>(where.begin) - off;
}

void explain_view::draw(view_context& ctx) {
    const document& doc = ctx.doc;
    if (!key_.matches(doc)) {
        key_ = document_key::of(doc);
        reports_.clear();
        texts_.clear();
        for (const auto& rr : doc.runs) {
            reports_.push_back(an::analyze(scope_of(*doc.files[rr.file], rr)));
            texts_.push_back(an::to_text(reports_.back(), 40));
        }
        last_clicked_ = -1;
    }
    if (reports_.empty()) {
        ImGui::TextDisabled("no runs: open a trace");
        return;
    }
    ImGui::TextDisabled(
        "Click a verdict to select the place it cites (the timeline frames it when shown). docs/analysis.md explains every number.");
    ImGui::BeginChild("##explain_runs", ImVec2(0, 0), false);
    int item = 0;
    for (std::size_t ri = 0; ri < reports_.size(); ++ri) {
        const an::run_report& r = reports_[ri];
        ImGui::PushID(static_cast<int>(ri));
        ImGui::Spacing();
        ImGui::TextColored(ImColor(rgb(0xF0F0F5)), "%s", r.title.c_str());
        ImGui::SameLine(0, 20);
        ImGui::TextDisabled("makespan %s  ·  %u workers  ·  %llu iterations",
                            format_duration(static_cast<double>(r.makespan()), 2).c_str(), r.dag.workers,
                            static_cast<unsigned long long>(r.stats.iterations));
        ImGui::Separator();

        // Verdicts.
        for (const auto& v : r.verdicts) {
            ImGui::PushID(item);
            const ImU32 col = !v.limiting ? rgb(0x4C9F70) : v.severity >= 0.5 ? rgb(0xE05050) : rgb(0xE0A040);
            // A selectable as large as the wrapped text, the text drawn over it.
            const ImVec2 pos = ImGui::GetCursorScreenPos();
            const float w = ImGui::GetContentRegionAvail().x;
            const ImVec2 ts = ImGui::CalcTextSize(v.text.c_str(), nullptr, false, w - ImGui::GetFontSize() * 1.2f);
            const bool clicked = ImGui::Selectable("##verdict", last_clicked_ == item, ImGuiSelectableFlags_AllowItemOverlap,
                                                   ImVec2(w, ts.y));
            if (ImGui::IsItemHovered()) ImGui::SetTooltip("rule %s: click to go to the place it cites", v.rule.c_str());
            if (clicked) {
                last_clicked_ = item;
                go_to(ctx, static_cast<std::uint32_t>(ri), v.where);
            }
            ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(pos.x + 2, pos.y + 3),
                                                      ImVec2(pos.x + ImGui::GetFontSize() * 0.7f,
                                                             pos.y + ImGui::GetFontSize() - 2),
                                                      col);
            ImGui::SetCursorScreenPos(ImVec2(pos.x + ImGui::GetFontSize() * 1.2f, pos.y));
            ImGui::PushTextWrapPos(0);
            ImGui::TextUnformatted(v.text.c_str());
            ImGui::Indent(ImGui::GetFontSize() * 1.2f);
            ImGui::TextDisabled("-> %s", v.suggestion.c_str());
            std::string at = "at " +
                             format_duration(static_cast<double>(v.where.begin - std::min(v.where.begin, r.start)), 2) +
                             " .. " + format_duration(static_cast<double>(v.where.end - std::min(v.where.end, r.start)), 2);
            if (v.where.worker >= 0) at += ", worker " + std::to_string(v.where.worker);
            if (v.where.stage >= 0) at += ", stage " + std::to_string(v.where.stage);
            if (v.where.iteration >= 0) at += ", iteration " + std::to_string(v.where.iteration);
            ImGui::TextDisabled("%s", at.c_str());
            ImGui::Unindent(ImGui::GetFontSize() * 1.2f);
            ImGui::PopTextWrapPos();
            ImGui::PopID();
            ++item;
        }

        // Key numbers.
        if (ctx.mono) ImGui::PushFont(ctx.mono);
        const auto& d = r.dag;
        if (d.available) {
            // A folded trace: the span is an upper bound, parallelism and speedup bound lower bounds.
            const char *le = d.approximate ? "<= " : "", *ge = d.approximate ? ">= " : "";
            ImGui::Text("work T1 %s   span Tinf %s%s (unthrottled %s%s)   parallelism %s%.2f (%s%.2f)",
                        format_duration(static_cast<double>(d.work), 2).c_str(), le,
                        format_duration(static_cast<double>(d.with_throttle.span), 2).c_str(), le,
                        format_duration(static_cast<double>(d.without_throttle.span), 2).c_str(), ge, d.parallelism, ge,
                        d.parallelism_unthrottled);
            ImGui::Text("speedup bound min(P, T1/Tinf) %s%.2f   observed %.2f (%s)   critical path %llu nodes", ge,
                        d.speedup_bound, d.observed_speedup,
                        d.observed_from_reference ? "vs serial reference" : "T1 / makespan",
                        static_cast<unsigned long long>(analysis::path_nodes(d.with_throttle)));
            if (d.approximate) ImGui::TextWrapped("approximate: %s", d.approximate_reason.c_str());
            const std::string above = speedup_above_bound_note({.observed = d.observed_speedup,
                                                                .bound = d.speedup_bound,
                                                                .from_reference = d.observed_from_reference,
                                                                .approximate = d.approximate});
            if (!above.empty()) ImGui::TextWrapped("%s", above.c_str());
        }
        const auto& q = r.queueing;
        if (q.available) {
            namespace num = pipescope::analysis::numbers;
            const std::string line =
                fmt::format("lambda_max {}/s   bind-to-element {}/s   bind-to-stage {}/s   observed {}/s ({} of {})",
                            num::rate(q.lambda_max), num::rate(q.bound_element), num::rate(q.bound_stage),
                            num::rate(q.observed), num::percent(q.efficiency), q.model);
            ImGui::TextUnformatted(line.c_str());
        }
        if (ImGui::CollapsingHeader("Full report (as `pipescope stats` prints it)"))
            ImGui::TextUnformatted(texts_[ri].c_str());
        if (ctx.mono) ImGui::PopFont();
        ImGui::PopID();
        ImGui::Spacing();
    }
    ImGui::EndChild();
}

}   // namespace

std::unique_ptr<view> make_explain_view() { return std::make_unique<explain_view>(); }

}   // namespace pipescope::viewer
