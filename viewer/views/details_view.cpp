// The details panel: everything about the selection (annotations, flows in and out with links
// that jump to the other end), or a summary of the document when nothing is selected.
#include "bookmarks_view.hpp"
#include "clipboard.hpp"
#include "palette.hpp"
#include "view.hpp"

#include "../model/copy_text.hpp"

#include <pipescope/analysis/numbers.hpp>

#include <cstdio>

namespace pipescope::viewer {

namespace {

std::string event_label(const loaded_file& f, const tm::event_ref& e) {
    const tm::trace_model& m = f.model;
    const tm::track& t = m.tracks[e.track];
    std::string s = e.is_instant ? m.str(t.instants[e.index].name) : m.str(t.slices[e.index].name);
    using vocab::arg_key;
    const auto it = e.is_instant ? m.uint_arg(t.instants[e.index], arg_key::iteration)
                                 : m.uint_arg(t.slices[e.index], arg_key::iteration);
    if (it) s += " i" + std::to_string(*it);
    return s + " on " + t.name;
}

void summary(view_context& ctx) {
    const document& d = ctx.doc;
    // Wrapped, not cut off, in a narrow panel (issue 22, item 5).
    ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetStyleColorVec4(ImGuiCol_TextDisabled));
    ImGui::TextWrapped("Nothing selected: click a slice or an instant.");
    ImGui::PopStyleColor();
    ImGui::Separator();
    for (const auto& f : d.files) {
        const tm::trace_model& m = f->model;
        ImGui::TextWrapped("%s", f->name.c_str());
        ImGui::TextDisabled("%s, loaded in %.2f s", analysis::numbers::bytes(static_cast<double>(f->file_bytes)).c_str(),
                            f->load_seconds);
        ImGui::TextWrapped("%llu slices, %llu instants, %llu counter values, %zu flows",
                           static_cast<unsigned long long>(m.slices), static_cast<unsigned long long>(m.instants),
                           static_cast<unsigned long long>(m.counter_values), m.flows.size());
        const auto fi = static_cast<std::uint32_t>(&f - d.files.data());
        for (const auto& r : m.runs) {
            ImGui::BulletText("%s", r.name.c_str());
            const auto ri = static_cast<std::uint32_t>(&r - m.runs.data());
            for (const run_ref& rr : d.runs)   // a run on virtual workers: its badge (model/document.hpp)
                if (rr.file == fi && rr.run == ri && !rr.virtual_badge.empty())
                    ImGui::TextColored(ImVec4(0.78f, 0.62f, 1.f, 1.f), "    %s", rr.virtual_badge.c_str());
            if (!r.stages.empty() && ImGui::TreeNode(&r, "%zu stages", r.stages.size())) {
                for (const auto& s : r.stages) {
                    ImGui::ColorButton("##c", ImColor(key_colour(static_cast<colour_key>(s.index))),
                                       ImGuiColorEditFlags_NoTooltip, ImVec2(10, 10));
                    ImGui::SameLine();
                    ImGui::TextWrapped("%s (%s)", s.name.c_str(), s.kind.c_str());
                }
                ImGui::TreePop();
            }
            if (!r.metadata_json.empty() && ImGui::TreeNode(&r.metadata_json, "metadata")) {
                ImGui::TextWrapped("%s", r.metadata_json.c_str());
                ImGui::TreePop();
            }
        }
        if (!m.problems.empty() && ImGui::TreeNode(&m.problems, "%zu problems", m.problems.size())) {
            for (const auto& p : m.problems) ImGui::TextWrapped("%s", p.c_str());
            ImGui::TreePop();
        }
        ImGui::Separator();
    }
}

// A folded slice (docs/tracing.md, "Detail levels"; docs/viewer.md, "Folded traces"): what it holds,
// in words, above the raw annotations.
void folded_note(const tm::trace_model& m, const tm::slice& s) {
    const tm::node_extent x = m.node_of(s);
    if (!x.folded() || x.stage < 0) return;
    ImGui::Separator();
    using ull = unsigned long long;
    const std::string each = format_duration(static_cast<double>(s.duration()) / static_cast<double>(x.nodes), 3);
    if (x.last_stage > static_cast<std::uint64_t>(x.stage) && x.iteration >= 0)
        ImGui::TextWrapped(
            "folded run of %llu nodes: stages %llu\xE2\x80\x93%llu of iteration %llu, run by this worker one after "
            "the other as one slice; each node is given an equal share, %s",
            static_cast<ull>(x.nodes), static_cast<ull>(x.stage), static_cast<ull>(x.last_stage),
            static_cast<ull>(x.iteration), each.c_str());
    else
        ImGui::TextWrapped(
            "folded run of %llu instances of stage %llu%s, run one after the other as one slice; each is given an "
            "equal share, %s",
            static_cast<ull>(x.nodes), static_cast<ull>(x.stage),
            x.iteration >= 0 && x.last_iteration >= 0
                ? (" (" + std::to_string(x.iteration) + "\xE2\x80\x93" + std::to_string(x.last_iteration) + ")").c_str()
                : "",
            each.c_str());
}

}   // namespace

void draw_details_panel(view_context& ctx) {
    const document& d = ctx.doc;
    view_state& st = ctx.state;
    draw_bookmarks_panel(ctx);   // bookmarks_view.cpp
    draw_area_panel(ctx);
    if (!st.sel.valid() || st.sel.file >= d.files.size()) {
        if (!st.area) summary(ctx);
        return;
    }
    const loaded_file& f = *d.files[st.sel.file];
    const tm::trace_model& m = f.model;
    const tm::event_ref e = st.sel.ev;
    const tm::track& t = m.tracks[e.track];
    const std::uint32_t r = run_of(d, st.sel.file, e.track);
    const double off = display_offset_of(d, st.sel.file, e.track, st.align_runs);
    const tm::model_arg *a0, *a1;
    if (e.is_instant) {
        const tm::instant& in = t.instants[e.index];
        ImGui::TextWrapped("%s", m.str(in.name).c_str());
        ImGui::TextDisabled("instant");
        ImGui::Separator();
        ImGui::Text("at       %s", format_duration(static_cast<double>(in.ts) - off, 3).c_str());
        ImGui::Text("ts       %llu ns", static_cast<unsigned long long>(in.ts));
        a0 = m.args_begin(in);
        a1 = m.args_end(in);
    } else {
        const tm::slice& s = t.slices[e.index];
        const colour_key k = f.key(s);
        ImGui::ColorButton("##k", ImColor(key_colour(k)), ImGuiColorEditFlags_NoTooltip, ImVec2(14, 14));
        ImGui::SameLine();
        ImGui::TextWrapped("%s", m.str(s.name).c_str());
        ImGui::TextDisabled("slice, depth %u%s", unsigned(s.depth), s.unterminated ? ", unterminated" : "");
        ImGui::Separator();
        ImGui::Text("start    %s", format_duration(static_cast<double>(s.begin) - off, 3).c_str());
        ImGui::Text("end      %s", format_duration(static_cast<double>(s.end) - off, 3).c_str());
        ImGui::Text("duration %s", format_duration(static_cast<double>(s.duration()), 3).c_str());
        ImGui::Text("ts       %llu ns", static_cast<unsigned long long>(s.begin));
        folded_note(m, s);
        a0 = m.args_begin(s);
        a1 = m.args_end(s);
    }
    ImGui::Text("track    %s", t.name.c_str());
    if (r != tm::no_index) ImGui::TextWrapped("run      %s", d.runs[r].title.c_str());
    if (a0 != a1) {
        ImGui::Separator();
        ImGui::TextDisabled("annotations");
        if (ImGui::BeginTable("##args", 2, ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchProp)) {
            for (auto* a = a0; a != a1; ++a) {
                ImGui::TableNextRow();
                ImGui::TableNextColumn();
                ImGui::TextUnformatted(m.str(a->name).c_str());
                ImGui::TableNextColumn();
                ImGui::TextWrapped("%s", m.arg_text(*a).c_str());
            }
            ImGui::EndTable();
        }
    }
    ImGui::Separator();
    if (st.sel_flows.empty()) {
        ImGui::TextDisabled("no flows");
    } else {
        ImGui::TextDisabled("flows (click to jump to the other end)");
        selection jump;
        for (const flow_link& l : st.sel_flows) {
            ImGui::PushID(static_cast<int>(l.flow));
            const std::string text = std::string(l.outgoing ? "-> " : "<- ") + event_label(f, l.other);
            if (ImGui::Selectable(text.c_str())) jump = {st.sel.file, l.other};
            if (ImGui::IsItemHovered())
                ImGui::SetTooltip("flow %llu, %s %s", static_cast<unsigned long long>(m.flows[l.flow].id),
                                  l.outgoing ? "to" : "from",
                                  format_duration(static_cast<double>(f.event_ts(l.other)) - off, 3).c_str());
            ImGui::PopID();
        }
        if (jump.valid()) {
            st.select(d, jump);
            if (auto range = selection_range(d, st.sel, st.align_runs)) st.bring_into_view(*range);
        }
    }
    ImGui::Separator();
    if (ImGui::Button("Frame (F)")) st.frame_request = selection_range(d, st.sel, st.align_runs);
    ImGui::SameLine();
    if (ImGui::Button("Clear")) st.select(d, {});
    // Copy (Ctrl+C outside a text field): the details as "key<TAB>value" lines (model/copy_text.hpp).
    ImGui::SameLine();
    const bool ctrl_c = ImGui::GetIO().KeyCtrl && !ImGui::GetIO().WantTextInput && ImGui::IsKeyPressed('C', false);
    if (ImGui::Button("Copy") || ctrl_c) copy_to_clipboard(st, event_details_text(d, st.sel, st.align_runs));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Copy these details to the clipboard (Ctrl+C), tab-separated");
}

}   // namespace pipescope::viewer
