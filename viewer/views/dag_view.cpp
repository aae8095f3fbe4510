// The pipeline DAG view (Cilk-P's picture, seed 001 Fig. 1 and 3): iterations across, stages down,
// a box per node, small hollow marks for null nodes (stages an iteration skipped), stage / cross /
// throttle / retire edges, replayed at the shared time cursor (not ready / ready / running /
// suspended / done, or coloured by worker), the critical path, play / pause / step / speed and a
// time scrubber (the shared replay control, views/replay.hpp). The model (indices, states, critical path, camera, draw list) is
// viewer/model/dag_state.hpp; this file only draws what its draw list says and handles input.
#include "arrow_head.hpp"
#include "hatch.hpp"
#include "palette.hpp"
#include "replay.hpp"
#include "time_ruler.hpp"   // imgui_text_width
#include "toolbar_flow.hpp"
#include "view.hpp"

#include "../model/dag_state.hpp"
#include "../model/text_fit.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstdio>
#include <string>
#include <initializer_list>
#include <string_view>
#include <utility>

namespace pipescope::viewer {
namespace {

// The canvas's row-name column, its iteration axis and the scrubber above it, from the font size
// (the UI scale): 150, 22 and 30 px at the 15 px font of scale 1.
float label_w() { return std::round(ImGui::GetFontSize() * 10); }
float header_h() { return std::round(ImGui::GetFontSize() * 22 / 15); }
float scrub_h() { return std::round(ImGui::GetFontSize() * 2); }

constexpr unsigned state_hex[node_state_count] = {0x474C5A, 0xE8C547, 0x4CD97B, 0xC46BDB, 0x5F86B5};
inline ImU32 state_colour(node_state s) { return rgb(state_hex[static_cast<int>(s)]); }
// Workers: the stage palette without its red (red marks the critical path).
constexpr unsigned worker_hex[] = {0xF28E2B, 0x4E79A7, 0x59A14F, 0xB07AA1, 0x76B7B2,
                                   0xEDC948, 0xFF9DA7, 0x9C755F, 0xBAB0AC, 0x8CD17D};
inline ImU32 worker_colour(int w) {
    return w < 0 ? rgb(0x9A8FB8) : rgb(worker_hex[static_cast<unsigned>(w) % (sizeof(worker_hex) / sizeof(worker_hex[0]))]);
}
constexpr ImU32 col_stage_edge = rgb(0x9AA0AE, 150), col_cross_edge = rgb(0x5FD3F3, 190),
                col_throttle_edge = rgb(0xE07A9A, 170), col_retire_edge = rgb(0xB7A7E0, 170), col_critical = rgb(0xFF4D4D),
                col_null = rgb(0x8A8F9C), col_select = rgb(0xFFFFFF);
// Folded blocks (a run of one iteration's nodes recorded as one slice): dark diagonal hatching over
// the state colours and a pale gold frame. Neither colour is used by anything else in the view.
constexpr ImU32 col_folded_hatch = rgb(0x1B2233), col_folded_frame = rgb(0xF2D98A);

double nice_count_step(double px_per_item, double min_px) {
    double step = 1;
    for (;;) {
        for (double m : {1.0, 2.0, 5.0})
            if (step * m * px_per_item >= min_px) return step * m;
        step *= 10;
        if (step > 1e12) return step;
    }
}

void dashed_line(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 c, float thick, float dash, float gap) {
    const float dx = b.x - a.x, dy = b.y - a.y, len = std::sqrt(dx * dx + dy * dy);
    if (len < 1) return;
    const float ux = dx / len, uy = dy / len;
    int n = 0;
    for (float s = 0; s < len && n < 4000; s += dash + gap, ++n) {
        const float e = std::min(len, s + dash);
        dl->AddLine(ImVec2(a.x + ux * s, a.y + uy * s), ImVec2(a.x + ux * e, a.y + uy * e), c, thick);
    }
}

// Where the canvas is on screen: its child window's top left, and the node area [cx0, cx1) x
// [cy0, cy1) right of the row-name column and under the iteration axis. X and Y take the draw
// list's canvas-relative pixels to the screen.
struct canvas_frame {
    ImVec2 wp;
    float cx0, cy0, cx1, cy1;
    float X(float x) const { return cx0 + x; }
    float Y(float y) const { return cy0 + y; }
};

class dag_view final : public view {
public:
    void draw(view_context& ctx) override;

private:
    // The run shown and its indices (rebuilt when the run changes, never per frame).
    const loaded_file* file_ = nullptr;
    std::uint32_t doc_run_ = tm::no_index;
    std::uint32_t model_run_ = tm::no_index;
    dag_index idx_;
    std::vector<dag_row_label> row_labels_;   // per row of idx_: its stage and the metadata's name
    critical_path cp_;
    std::uint64_t cp_nodes_ = 0;   // nodes on the critical path (those inside its folded blocks included)
    dag_camera cam_;
    bool fit_pending_ = true;
    bool auto_fit_ = true;   // refit when the canvas changes size, until the user zooms or pans
    ImVec2 fitted_size_{};
    dag_draw_list list_;
    // Toggles.
    bool show_stage_ = true, show_cross_ = true, show_throttle_ = true, show_retire_ = false;
    bool show_critical_ = true, by_worker_ = false;
    replay_control replay_;            // play / pause / step / speed / scrubber (views/replay.hpp)
    double run_t0_ = 0, run_t1_ = 0;   // the run's extent on the display axis (set by draw)
    // Input.
    bool dragging_ = false, drag_moved_ = false;
    ImVec2 drag_origin_{};
    selection last_sel_;

    bool choose_run(view_context& ctx);
    void toolbar(view_context& ctx, const run_ref& rr, double off);
    replay_steps steps(double off) const;
    void legend(view_context& ctx, std::uint64_t t);
    void canvas(view_context& ctx, const run_ref& rr, double off);
    // The canvas's phases (canvas() says in which order).
    void place_camera(const canvas_frame& fr);
    std::uint32_t follow_selection(const view_state& st, const run_ref& rr);
    void build_list(const tm::pipeline_dag& dag, std::uint64_t t);
    void draw_row_labels(view_context& ctx, ImDrawList* dl, const canvas_frame& fr) const;
    void draw_iteration_axis(ImDrawList* dl, const canvas_frame& fr) const;
    void draw_cells(ImDrawList* dl, const canvas_frame& fr) const;
    void draw_critical_ticks(ImDrawList* dl, const canvas_frame& fr) const;
    void draw_edges(ImDrawList* dl, const canvas_frame& fr) const;
    void draw_boxes(ImDrawList* dl, const canvas_frame& fr, const tm::pipeline_dag& dag) const;
    ImU32 draw_folded_box(ImDrawList* dl, const canvas_frame& fr, const dag_box& b, const tm::dag_node& nd, ImU32 c) const;
    void draw_box_label(ImDrawList* dl, const canvas_frame& fr, const dag_box& b, const tm::dag_node& nd, ImU32 c,
                        bool big) const;
    void draw_null_marks(ImDrawList* dl, const canvas_frame& fr) const;
    void draw_selected_node(ImDrawList* dl, const canvas_frame& fr, std::uint32_t v) const;
    void mouse(view_context& ctx, const run_ref& rr, const canvas_frame& fr, double off, std::uint64_t t);
    void node_tooltip(const tm::pipeline_dag& dag, std::uint32_t v, double ly, double off, std::uint64_t t) const;
    void folded_node_lines(const tm::pipeline_dag& dag, std::uint32_t v, std::uint32_t hrow, double off,
                           std::uint64_t t) const;
    void null_node_tooltip(double lx, double ly) const;
    void keys(view_context& ctx, double off, std::uint32_t sel_node);
    ImU32 fill(node_state s, int worker) const {
        if (by_worker_ && (s == node_state::done || s == node_state::running) && worker >= 0) return worker_colour(worker);
        return state_colour(s);
    }
    const tm::run& run(const view_context&) const { return file_->model.runs[model_run_]; }
};

namespace {
// A run the DAG view can show: a pipeline with nodes. A stage graph's instances also carry
// (instance, stage) annotations, but they are not iterations: the stage graph view shows those runs.
bool shows_dag(const tm::run& r) { return !r.dag.nodes.empty() && r.program_kind != vocab::graph_program; }
}   // namespace

bool dag_view::choose_run(view_context& ctx) {
    const document& doc = ctx.doc;
    auto has_dag = [&](std::uint32_t ri) {
        if (ri >= doc.runs.size()) return false;
        const run_ref& rr = doc.runs[ri];
        return rr.run != tm::no_index && shows_dag(doc.files[rr.file]->model.runs[rr.run]);
    };
    std::uint32_t want = doc_run_;
    // The selection moved to a node of another run: follow it.
    if (ctx.state.sel.valid() && !(ctx.state.sel == last_sel_)) {
        const std::uint32_t r = run_of(doc, ctx.state.sel.file, ctx.state.sel.ev.track);
        if (has_dag(r)) want = r;
    }
    if (!has_dag(want) || doc.files[doc.runs[want].file].get() != file_ || doc.runs[want].run != model_run_) {
        if (!has_dag(want)) {
            want = tm::no_index;
            for (std::uint32_t r = 0; r < doc.runs.size() && want == tm::no_index; ++r)
                if (has_dag(r)) want = r;
        }
        if (want == tm::no_index) {
            file_ = nullptr;
            doc_run_ = tm::no_index;
            return false;
        }
        const run_ref& rr = doc.runs[want];
        if (doc.files[rr.file].get() != file_ || rr.run != model_run_) {
            file_ = doc.files[rr.file].get();
            model_run_ = rr.run;
            const tm::run& r = file_->model.runs[rr.run];
            idx_ = build_dag_index(r.dag, find_suspends(file_->model, r));
            row_labels_ = dag_row_labels(r.stages, idx_.row_stage);
            const analysis::span_result path = analysis::longest_path(r.dag, true);
            cp_ = critical_path_of(r.dag, idx_, path);
            cp_nodes_ = analysis::path_nodes(path);
            fit_pending_ = true;
        }
        doc_run_ = want;
    }
    doc_run_ = want;
    return true;
}

// A step: the nearest node start or end before / after the cursor.
replay_steps dag_view::steps(double off) const {
    replay_steps s;
    auto at = [off](double cur) { return static_cast<std::uint64_t>(std::max(0.0, std::round(cur + off))); };
    s.prev = [this, off, at](double cur) -> std::optional<double> {
        if (auto e = idx_.prev_event(at(cur))) return static_cast<double>(*e) - off;
        return std::nullopt;
    };
    s.next = [this, off, at](double cur) -> std::optional<double> {
        if (auto e = idx_.next_event(at(cur))) return static_cast<double>(*e) - off;
        return std::nullopt;
    };
    s.prev_tip =
        "Previous event: the last node start or end before the cursor (Left); in a folded run, node by node by their shares";
    s.next_tip =
        "Next event: the next node start or end after the cursor (Right); in a folded run, node by node by their shares";
    return s;
}

void dag_view::toolbar(view_context& ctx, const run_ref& rr, double off) {
    view_state& st = ctx.state;
    const document& doc = ctx.doc;
    // Run selector when the document has several runs with a DAG.
    int n_dag = 0;
    for (const auto& r : doc.runs) n_dag += r.run != tm::no_index && shows_dag(doc.files[r.file]->model.runs[r.run]);
    // The toolbar wraps (toolbar_flow) rather than cut its last checkboxes off in a narrow window; a
    // word that names a group ("colour", "edges") stays on the line of the group's first control.
    toolbar_flow flow(st.layout, "dag toolbar");
    using tf = toolbar_flow;
    if (n_dag > 1) {
        // As wide as the title needs, up to a line; a longer title is elided in the preview (the
        // combo's list and its tooltip have it whole).
        const float chrome = ImGui::GetFrameHeight() + 2 * ImGui::GetStyle().FramePadding.x;
        const float combo_w =
            std::min(tf::text_width(rr.title) + chrome, std::max(ImGui::GetContentRegionAvail().x, chrome * 2));
        flow.next(combo_w, "run selector");
        const std::string preview = elide_to_width(rr.title, combo_w - chrome, imgui_text_width);
        st.layout.check("dag run selector", preview, tf::text_width(preview), combo_w - chrome);
        ImGui::SetNextItemWidth(combo_w);
        const bool open = ImGui::BeginCombo("##run", preview.c_str());
        if (preview != rr.title && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", rr.title.c_str());
        if (open) {
            for (std::uint32_t r = 0; r < doc.runs.size(); ++r) {
                const run_ref& x = doc.runs[r];
                if (x.run == tm::no_index || !shows_dag(doc.files[x.file]->model.runs[x.run])) continue;
                ImGui::PushID(static_cast<int>(r));
                if (ImGui::Selectable(x.title.c_str(), r == doc_run_)) {
                    doc_run_ = r;
                    file_ = nullptr;   // rebuilt next frame
                    model_run_ = tm::no_index;
                }
                ImGui::PopID();
            }
            ImGui::EndCombo();
        }
    }
    const double t0 = run_t0_, t1 = run_t1_;
    auto tip = [](const char* s) {
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", s);
    };
    replay_.buttons(st, t0, t1, steps(off), flow);
    flow.next(tf::text_width("|"), "|");
    ImGui::TextDisabled("|");
    constexpr float tight = 4;
    auto titled = [&](const char* title, const char* first) {
        flow.next(tf::text_width(title) + tight + tf::checkbox_width(first), std::string(title) + " " + first);
        ImGui::AlignTextToFramePadding();   // on the controls' baseline, also at the start of a wrapped line
        ImGui::TextUnformatted(title);
        ImGui::SameLine(0, tight);
    };
    titled("colour", "state");
    if (ImGui::RadioButton("state", !by_worker_)) by_worker_ = false;
    flow.next(tf::checkbox_width("worker"), "worker", tight);
    if (ImGui::RadioButton("worker", by_worker_)) by_worker_ = true;
    tip("Done and running nodes in the colour of the worker that ran them");
    flow.next(tf::text_width("|"), "|");
    ImGui::TextDisabled("|");
    titled("edges", "stage");
    ImGui::Checkbox("stage", &show_stage_);
    tip("(i, j) -> (i, j'): the nodes of an iteration in order");
    flow.next(tf::checkbox_width("cross"), "cross", tight);
    ImGui::Checkbox("cross", &show_cross_);
    tip("(i-1, j') -> (i, j): pipe_stage_wait(j) waits for iteration i-1 (from its last node with stage <= j)");
    flow.next(tf::checkbox_width("throttle"), "throttle", tight);
    ImGui::Checkbox("throttle", &show_throttle_);
    tip("(i-K, last) -> (i, 0): iteration i starts after iteration i-K has finished (dashed)");
    flow.next(tf::checkbox_width("retire"), "retire", tight);
    ImGui::Checkbox("retire", &show_retire_);
    tip("(i-1, last) -> (i, last): iterations retire in order (dotted)");
    flow.next(tf::text_width("|"), "|");
    ImGui::TextDisabled("|");
    flow.next(tf::checkbox_width("critical path"), "critical path");
    ImGui::Checkbox("critical path", &show_critical_);
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip(
            "The longest path through the DAG weighted by node durations: %llu nodes, %s\n(%.0f%% of the run)%s",
            static_cast<unsigned long long>(cp_nodes_), format_duration(static_cast<double>(cp_.length), 3).c_str(),
            rr.end > rr.start ? 100.0 * static_cast<double>(cp_.length) / static_cast<double>(rr.end - rr.start) : 0.0,
            idx_.folded_blocks
                ? "\nFolded trace: the path runs over folded blocks, so its length is an upper bound of the span"
                : "");
    flow.next(tf::button_width("Fit"), "Fit");
    if (ImGui::Button("Fit")) fit_pending_ = true;
    tip("Show the whole DAG (Home / 0)");
}

// The legend wraps onto as many lines as the width needs (toolbar_flow), a mark and its words
// together.
void dag_view::legend(view_context& ctx, std::uint64_t t) {
    const state_counts c = counts_at(idx_, t);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    toolbar_flow flow(ctx.state.layout, "dag legend");
    const float h = ImGui::GetTextLineHeight(), mark_w = h + 4, mark_gap = 5, item_gap = h;
    // Places a mark `w` px wide followed by `text`; returns where the mark goes.
    auto item = [&](float w, const std::string& text) {
        flow.next(w + mark_gap + toolbar_flow::text_width(text), text, item_gap);
        const ImVec2 p = ImGui::GetCursorScreenPos();
        ImGui::Dummy(ImVec2(w, h));
        ImGui::SameLine(0, mark_gap);
        return p;
    };
    auto swatch = [&](ImU32 col, const char* label, const std::string& count, const char* tip) {
        const std::string text = count.empty() ? std::string(label) : std::string(label) + " " + count;
        const ImVec2 p = item(mark_w, text);
        dl->AddRectFilled(ImVec2(p.x, p.y + 2), ImVec2(p.x + mark_w, p.y + h), col, 3.0f);
        ImGui::TextUnformatted(text.c_str());
        if (tip && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
    };
    const bool w = by_worker_;
    swatch(state_colour(node_state::not_ready), "not ready", "",
           "some predecessor (stage, cross or throttle edge) has not finished");
    swatch(state_colour(node_state::ready), "ready", "", "every predecessor has finished; the node has not started");
    if (w) {
        for (int k = 0; k < std::min(idx_.workers, 10); ++k)
            swatch(worker_colour(k), fmt::format("w{}", k).c_str(), "", "ran on this worker");
    } else {
        swatch(state_colour(node_state::running), "running", "", "started, not finished (label: the worker)");
    }
    swatch(state_colour(node_state::suspended), "suspended", "",
           "the iteration suspended before this node (a cross edge not yet satisfied) and has not started it");
    if (!w) swatch(state_colour(node_state::done), "done", "", "finished");
    if (idx_.folded_blocks) {   // a folded trace: the block swatch, hatched and framed as in the grid
        const std::string text = "folded run (" + std::to_string(idx_.folded_nodes) + " nodes)";
        const ImVec2 p = item(mark_w, text);
        const ImVec2 a(p.x, p.y + 1), b(p.x + mark_w, p.y + h + 1);
        dl->AddRectFilled(a, b, state_colour(node_state::done));
        hatch_rect(dl, a, b, col_folded_hatch, 4.f);
        dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(b.x + 1, b.y + 1), col_folded_frame);
        ImGui::TextUnformatted(text.c_str());
        if (ImGui::IsItemHovered())
            ImGui::SetTooltip(
                "%llu folded runs hold %llu of the %llu nodes: each is a run of consecutive nodes of one iteration\n"
                "that one worker ran, recorded as one slice (trace detail folded or auto), drawn as one block\n"
                "over its stages. Its nodes take equal shares of its time: at the cursor the nodes whose share\n"
                "has passed are done, the next one runs, the rest are not ready. Edges join blocks: the span\n"
                "over them is an upper bound.",
                static_cast<unsigned long long>(idx_.folded_blocks), static_cast<unsigned long long>(idx_.folded_nodes),
                static_cast<unsigned long long>(idx_.node_total));
    }
    // Marks and edges.
    {
        const float null_w = h * 0.8f;
        const ImVec2 p = item(null_w, "null node");
        dl->AddCircle(ImVec2(p.x + null_w * 0.5f, p.y + h * 0.5f + 1), h * 0.23f, col_null, 12, 1.5f);
        ImGui::TextUnformatted("null node");
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("a stage the iteration skipped (no work)");
    }
    if (show_critical_ && !cp_.empty()) {
        const std::string text = std::string("critical path ") + (idx_.folded_blocks ? "<= " : "") +
                                 format_duration(static_cast<double>(cp_.length), 3) + " (" + std::to_string(cp_nodes_) +
                                 " nodes)";
        const ImVec2 p = item(mark_w, text);
        dl->AddRect(ImVec2(p.x, p.y + 2), ImVec2(p.x + mark_w, p.y + h), col_critical, 3.0f, 0, 2.0f);
        ImGui::TextUnformatted(text.c_str());
    }
    // The counts at the cursor and the DAG's shape: phrases that wrap between them, a space apart on a line.
    const float space = toolbar_flow::text_width(" ");
    auto phrases = [&](std::initializer_list<std::string> words, bool disabled) {
        float gap = item_gap;
        for (const std::string& w : words) {
            flow.next(toolbar_flow::text_width(w), w, gap);
            if (disabled) ImGui::TextDisabled("%s", w.c_str());
            else ImGui::TextUnformatted(w.c_str());
            gap = space;
        }
    };
    phrases({"at t: " + std::to_string(c.done) + " done,", std::to_string(c.running) + " running,",
             std::to_string(c.suspended) + " suspended,", std::to_string(c.ready) + " ready,",
             std::to_string(c.not_ready) + " not ready"},
            false);
    const tm::pipeline_dag& dag = file_->model.runs[model_run_].dag;
    phrases({std::to_string(idx_.columns()) + " iterations x " + std::to_string(idx_.rows()) + " stages,",
             std::to_string(idx_.node_total) + " nodes" +
                 (idx_.folded_blocks ? " in " + std::to_string(dag.nodes.size()) + " blocks" : "") +
                 (dag.K ? ", K = " + std::to_string(dag.K) : "")},
            true);
}

// The canvas is drawn in phases, back to front, then reads the mouse and keys: the camera, the
// selection it follows, the draw list, the row names and iteration axis, the nodes (level-of-detail
// cells, or edges under boxes under null marks), the selected node, then hover, drag and keys.
void dag_view::canvas(view_context& ctx, const run_ref& rr, double off) {
    view_state& st = ctx.state;
    const std::uint64_t t = static_cast<std::uint64_t>(std::max(0.0, std::round(*st.cursor + off)));

    ImGui::PushStyleColor(ImGuiCol_ChildBg, col_background);
    ImGui::BeginChild("##dagcanvas", ImVec2(0, 0), false,
                      ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_NoMove);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 wp = ImGui::GetWindowPos(), ws = ImGui::GetWindowSize();
    const canvas_frame fr{wp, wp.x + label_w(), wp.y + header_h(), wp.x + ws.x, wp.y + ws.y};
    place_camera(fr);
    const std::uint32_t sel_node = follow_selection(st, rr);
    build_list(run(ctx).dag, t);

    draw_row_labels(ctx, dl, fr);
    draw_iteration_axis(dl, fr);
    dl->PushClipRect(ImVec2(fr.cx0, fr.cy0), ImVec2(fr.cx1, fr.cy1), true);
    if (list_.lod) {
        draw_cells(dl, fr);
        if (show_critical_ && !cp_.empty()) draw_critical_ticks(dl, fr);
    } else {
        draw_edges(dl, fr);
        draw_boxes(dl, fr, run(ctx).dag);
        draw_null_marks(dl, fr);
    }
    if (sel_node != tm::no_index) draw_selected_node(dl, fr, sel_node);
    if (idx_.columns() == 0)
        dl->AddText(ImVec2(fr.cx0 + 10, fr.cy0 + 10), IM_COL32(200, 200, 200, 255), "this run has no pipeline DAG");
    dl->PopClipRect();
    ImGui::SetCursorScreenPos(ImVec2(fr.cx0, fr.cy0));
    ImGui::Dummy(ImVec2(cam_.width, cam_.height));

    mouse(ctx, rr, fr, off, t);
    keys(ctx, off, sel_node);
    ImGui::EndChild();
    ImGui::PopStyleColor();
}

// The camera takes the canvas's size; it fits the whole DAG when asked to, and again after a resize
// until the user has zoomed or panned.
void dag_view::place_camera(const canvas_frame& fr) {
    cam_.width = std::max(10.f, fr.cx1 - fr.cx0);
    cam_.height = std::max(10.f, fr.cy1 - fr.cy0);
    const double cols = static_cast<double>(idx_.columns()), rows = static_cast<double>(idx_.rows());
    if (auto_fit_ && (fitted_size_.x != static_cast<float>(cam_.width) || fitted_size_.y != static_cast<float>(cam_.height)))
        fit_pending_ = true;
    if (fit_pending_) {
        cam_.fit(cols, rows);
        fit_pending_ = false;
        auto_fit_ = true;
        fitted_size_ = ImVec2(static_cast<float>(cam_.width), static_cast<float>(cam_.height));
    }
    cam_.clamp(cols, rows);
}

// The node of this run that the selection (made in any view) is, or no_index; a selection new since
// the last frame is brought into view when it is outside it.
std::uint32_t dag_view::follow_selection(const view_state& st, const run_ref& rr) {
    std::uint32_t sel_node = tm::no_index;
    if (st.sel.valid() && st.sel.file == rr.file) sel_node = idx_.node_of_slice(st.sel.ev);
    if (!(st.sel == last_sel_)) {
        if (sel_node != tm::no_index) {
            const double c = idx_.node_col[sel_node] + 0.5, rw = idx_.node_row[sel_node] + 0.5;
            const double px = cam_.px_x(c), py = cam_.px_y(rw);
            if (px < 0 || px > cam_.width || py < 0 || py > cam_.height) {
                cam_.centre_on(c, rw);
                auto_fit_ = false;
            }
        }
        last_sel_ = st.sel;
    }
    return sel_node;
}

void dag_view::build_list(const tm::pipeline_dag& dag, std::uint64_t t) {
    dag_draw_params p;
    p.t = t;
    p.edges_shown = (show_stage_ ? edge_bit(tm::dag_edge_kind::stage) : 0) |
                    (show_cross_ ? edge_bit(tm::dag_edge_kind::cross) : 0) |
                    (show_throttle_ ? edge_bit(tm::dag_edge_kind::throttle) : 0) |
                    (show_retire_ ? edge_bit(tm::dag_edge_kind::retire) : 0);
    p.critical = show_critical_ ? &cp_ : nullptr;
    build_dag_draw_list(dag, idx_, cam_, p, list_);
}

// Row stripes and the stage labels (every row_step-th row when rows are thinner than the text), with
// the metadata's stage name under the label when rows are tall enough for two lines.
void dag_view::draw_row_labels(view_context& ctx, ImDrawList* dl, const canvas_frame& fr) const {
    const float fs = ImGui::GetFontSize();
    const ImVec2 wp = fr.wp;
    dl->PushClipRect(ImVec2(wp.x, fr.cy0), ImVec2(fr.cx1, fr.cy1), true);
    const double row_step = nice_count_step(cam_.sy, fs + 4);
    for (std::uint32_t rw = list_.row0; rw < list_.row1; ++rw) {
        const float y0 = fr.Y(static_cast<float>(cam_.px_y(rw))), y1 = fr.Y(static_cast<float>(cam_.px_y(rw + 1)));
        if (cam_.sy >= 4 && (rw & 1)) dl->AddRectFilled(ImVec2(fr.cx0, y0), ImVec2(fr.cx1, y1), IM_COL32(255, 255, 255, 7));
        if (std::fmod(static_cast<double>(rw), row_step) != 0) continue;
        const std::string& lab = row_labels_[rw].stage;
        const std::string& nm = row_labels_[rw].name;
        const float ly = cam_.sy >= fs ? (y0 + y1 - fs) * 0.5f : y0;
        const ImVec4 clip(wp.x, std::max(fr.cy0, y0 - fs), fr.cx0 - 6, fr.cy1);
        // Names longer than the column end in "…" (a node's tooltip has the name whole).
        const float room = fr.cx0 - 6 - (wp.x + 8);
        const std::string shown = elide_to_width(lab, room, imgui_text_width);
        ctx.state.layout.check("dag row label", shown, imgui_text_width(shown), room);
        dl->AddText(ImGui::GetFont(), fs, ImVec2(wp.x + 8, ly), IM_COL32(215, 215, 222, 255), shown.c_str(), nullptr, 0,
                    &clip);
        if (!nm.empty() && nm != lab && cam_.sy >= 2 * fs + 2) {
            auto small_width = [&](std::string_view t) {
                return static_cast<double>(
                    ImGui::GetFont()->CalcTextSizeA(fs * 0.85f, FLT_MAX, 0, t.data(), t.data() + t.size()).x);
            };
            const std::string name = elide_to_width(nm, room, small_width);
            ctx.state.layout.check("dag row label", name, small_width(name), room);
            dl->AddText(ImGui::GetFont(), fs * 0.85f, ImVec2(wp.x + 8, ly + fs), IM_COL32(140, 140, 152, 255), name.c_str(),
                        nullptr, 0, &clip);
        }
    }
    dl->PopClipRect();
}

// Iteration numbers along the top (as many as fit, at round steps), and the lines that frame the
// row-name column and the axis.
void dag_view::draw_iteration_axis(ImDrawList* dl, const canvas_frame& fr) const {
    const float fs = ImGui::GetFontSize();
    const ImVec2 wp = fr.wp;
    dl->AddRectFilled(ImVec2(wp.x, wp.y), ImVec2(fr.cx1, fr.cy0), IM_COL32(36, 38, 45, 255));
    dl->AddText(ImVec2(wp.x + 8, wp.y + (header_h() - fs) * 0.5f), IM_COL32(150, 150, 160, 255), "iteration");
    dl->PushClipRect(ImVec2(fr.cx0, wp.y), ImVec2(fr.cx1, fr.cy0), true);
    const double col_step = nice_count_step(cam_.sx, 56);
    const std::uint32_t first = static_cast<std::uint32_t>(std::ceil(list_.col0 / col_step) * col_step);
    for (double c = first; c < list_.col1; c += col_step) {
        const std::uint32_t ci = static_cast<std::uint32_t>(c);
        const std::string s = std::to_string(idx_.col_iteration[ci]);
        const float x = fr.X(static_cast<float>(cam_.px_x(c + 0.5)));
        dl->AddText(ImVec2(x - ImGui::CalcTextSize(s.c_str()).x * 0.5f, wp.y + (header_h() - fs) * 0.5f),
                    IM_COL32(200, 200, 210, 255), s.c_str());
        dl->AddLine(ImVec2(x, fr.cy0 - 3), ImVec2(x, fr.cy0), IM_COL32(120, 120, 130, 255));
    }
    dl->PopClipRect();
    dl->AddLine(ImVec2(fr.cx0 - 0.5f, wp.y), ImVec2(fr.cx0 - 0.5f, fr.cy1), IM_COL32(80, 80, 90, 255));
    dl->AddLine(ImVec2(wp.x, fr.cy0 - 0.5f), ImVec2(fr.cx1, fr.cy0 - 0.5f), IM_COL32(80, 80, 90, 255));
}

// Zoomed out (level of detail): one cell per group of nodes, hatched when most of them are folded.
void dag_view::draw_cells(ImDrawList* dl, const canvas_frame& fr) const {
    for (const dag_lod_cell& c : list_.cells) {
        dl->AddRectFilled(ImVec2(fr.X(c.x0), fr.Y(c.y0)), ImVec2(fr.X(c.x1), fr.Y(c.y1)), fill(c.state, c.worker));
        if (2 * c.folded_nodes > c.nodes)
            hatch_rect(dl, ImVec2(fr.X(c.x0), fr.Y(c.y0)), ImVec2(fr.X(c.x1), fr.Y(c.y1)), col_folded_hatch);
    }
}

// Zoomed out, the critical path: a red tick on each cell that holds one of its nodes (the path is in
// column order: binary search to the view, one tick per cell).
void dag_view::draw_critical_ticks(ImDrawList* dl, const canvas_frame& fr) const {
    const std::uint32_t gx = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::ceil(3 / cam_.sx)));
    const std::uint32_t gy = std::max<std::uint32_t>(1, static_cast<std::uint32_t>(std::ceil(3 / cam_.sy)));
    auto it = std::lower_bound(cp_.nodes.begin(), cp_.nodes.end(), list_.col0 / gx * gx,
                               [&](std::uint32_t v, std::uint32_t c) { return idx_.node_col[v] < c; });
    std::uint32_t last_g = tm::no_index, last_r = tm::no_index;
    for (; it != cp_.nodes.end() && idx_.node_col[*it] < list_.col1; ++it) {
        const std::uint32_t g = idx_.node_col[*it] / gx, rg = idx_.node_row[*it] / gy;
        if (g == last_g && rg == last_r) continue;
        last_g = g;
        last_r = rg;
        const float x0 = fr.X(static_cast<float>(cam_.px_x(g * gx))),
                    x1 = std::max(x0 + 1, fr.X(static_cast<float>(cam_.px_x((g + 1) * gx))));
        const float y = fr.Y(static_cast<float>(cam_.px_y(rg * gy + gy * 0.5)));
        dl->AddRectFilled(ImVec2(x0, y - 0.5f), ImVec2(x1, y + 0.5f), (col_critical & 0x00FFFFFF) | 0xC0000000);
    }
}

// Edges under the boxes; the critical ones on top of the others. Throttle edges are dashed, retire
// edges dotted (off the critical path), so that the four kinds read apart where they cross.
void dag_view::draw_edges(ImDrawList* dl, const canvas_frame& fr) const {
    const float bsz =
        list_.boxes.empty() ? 10.f : std::min(list_.boxes[0].x1 - list_.boxes[0].x0, list_.boxes[0].y1 - list_.boxes[0].y0);
    const float head = std::clamp(bsz * 0.22f, 3.f, 7.f);
    for (int pass = 0; pass < 2; ++pass)
        for (const dag_edge_seg& e : list_.edges) {
            if (e.critical != (pass == 1)) continue;
            const ImVec2 a(fr.X(e.ax), fr.Y(e.ay)), b(fr.X(e.bx), fr.Y(e.by));
            ImU32 c = col_stage_edge;
            float th = 1.2f;
            switch (e.kind) {
                case tm::dag_edge_kind::stage: c = col_stage_edge; break;
                case tm::dag_edge_kind::cross: c = col_cross_edge; break;
                case tm::dag_edge_kind::throttle: c = col_throttle_edge; break;
                case tm::dag_edge_kind::retire: c = col_retire_edge; break;
            }
            if (e.critical) c = col_critical, th = 2.5f;
            if (e.kind == tm::dag_edge_kind::throttle && !e.critical) dashed_line(dl, a, b, c, th, 5, 4);
            else if (e.kind == tm::dag_edge_kind::retire && !e.critical) dashed_line(dl, a, b, c, th, 2, 3);
            else dl->AddLine(a, b, c, th);
            arrow_head(dl, a, b, c, head, head * 2);   // no head on an edge shorter than two
        }
}

// The node boxes: critical ones framed just outside, folded blocks split by their nodes' shares,
// running ones outlined when coloured by worker; labels when the boxes are big enough for text.
void dag_view::draw_boxes(ImDrawList* dl, const canvas_frame& fr, const tm::pipeline_dag& dag) const {
    for (const dag_box& b : list_.boxes)
        if (b.critical)
            dl->AddRect(ImVec2(fr.X(b.x0) - 2, fr.Y(b.y0) - 2), ImVec2(fr.X(b.x1) + 2, fr.Y(b.y1) + 2), col_critical, 0, 0,
                        1.5f);
    const float fs = ImGui::GetFontSize();
    const bool labels =
        !list_.boxes.empty() && list_.boxes[0].x1 - list_.boxes[0].x0 >= 22 && list_.boxes[0].y1 - list_.boxes[0].y0 >= fs;
    const bool big =
        labels && list_.boxes[0].x1 - list_.boxes[0].x0 >= 64 && list_.boxes[0].y1 - list_.boxes[0].y0 >= 2 * fs + 2;
    for (const dag_box& b : list_.boxes) {
        const tm::dag_node& nd = dag.nodes[b.node];
        ImU32 c = fill(b.state, nd.worker);
        if (b.folded) c = draw_folded_box(dl, fr, b, nd, c);
        else dl->AddRectFilled(ImVec2(fr.X(b.x0), fr.Y(b.y0)), ImVec2(fr.X(b.x1), fr.Y(b.y1)), c);
        if (by_worker_ && b.state == node_state::running)
            dl->AddRect(ImVec2(fr.X(b.x0) - 1, fr.Y(b.y0) - 1), ImVec2(fr.X(b.x1) + 1, fr.Y(b.y1) + 1),
                        IM_COL32(255, 255, 255, 255), 0, 0, 1.5f);
        if (labels) draw_box_label(dl, fr, b, nd, c, big);
    }
}

// A folded block: its nodes by their shares — done ones, the next (running, or the block's state
// before it starts, in `c`), the rest not ready — hatched and framed as one block. Returns the colour
// under its label (which sits on the top part).
ImU32 dag_view::draw_folded_box(ImDrawList* dl, const canvas_frame& fr, const dag_box& b, const tm::dag_node& nd,
                                ImU32 c) const {
    const ImVec2 a(fr.X(b.x0), fr.Y(b.y0)), e(fr.X(b.x1), fr.Y(b.y1));
    const ImU32 done = fill(node_state::done, nd.worker);
    if (b.split0 > b.y0) dl->AddRectFilled(a, ImVec2(e.x, fr.Y(b.split0)), done);
    if (b.split1 > b.split0) dl->AddRectFilled(ImVec2(a.x, fr.Y(b.split0)), ImVec2(e.x, fr.Y(b.split1)), c);
    if (b.y1 > b.split1) dl->AddRectFilled(ImVec2(a.x, fr.Y(b.split1)), e, state_colour(node_state::not_ready));
    hatch_rect(dl, a, e, col_folded_hatch, std::clamp(std::round((b.x1 - b.x0) / 3.f), 4.f, 8.f));
    dl->AddRect(ImVec2(a.x - 1, a.y - 1), ImVec2(e.x + 1, e.y + 1), col_folded_frame);
    return b.split0 > b.y0 ? done : c;
}

// A box's text on its colour `c`: big boxes say which node (or block) and its worker on two lines,
// smaller ones only a running node's worker, centred.
void dag_view::draw_box_label(ImDrawList* dl, const canvas_frame& fr, const dag_box& b, const tm::dag_node& nd, ImU32 c,
                              bool big) const {
    const float fs = ImGui::GetFontSize();
    char buf[64];
    char buf2[64];
    const ImVec4 clip(fr.X(b.x0) + 1, fr.Y(b.y0), fr.X(b.x1) - 1, fr.Y(b.y1));
    auto two_lines = [&] {   // buf over buf2, in the small font
        dl->AddText(ImGui::GetFont(), fs * 0.85f, ImVec2(fr.X(b.x0) + 4, fr.Y(b.y0) + 2), text_colour_on(c), buf, nullptr, 0,
                    &clip);
        dl->AddText(ImGui::GetFont(), fs * 0.85f, ImVec2(fr.X(b.x0) + 4, fr.Y(b.y0) + 2 + fs), text_colour_on(c), buf2,
                    nullptr, 0, &clip);
    };
    if (big && nd.folded()) {
        *fmt::format_to_n(buf, sizeof buf - 1, "({}, {}\xE2\x80\x93{})", static_cast<unsigned long long>(nd.iteration),
                          static_cast<unsigned long long>(nd.stage), static_cast<unsigned long long>(nd.last_stage))
             .out = '\0';
        *(nd.worker >= 0 ? fmt::format_to_n(buf2, sizeof buf2 - 1, "w{}, {} nodes", nd.worker, nd.nodes)
                         : fmt::format_to_n(buf2, sizeof buf2 - 1, "{} nodes", nd.nodes))
             .out = '\0';
        two_lines();
    } else if (big) {
        *fmt::format_to_n(buf, sizeof buf - 1, "({}, {})", static_cast<unsigned long long>(nd.iteration),
                          static_cast<unsigned long long>(nd.stage))
             .out = '\0';
        const char* running = b.state == node_state::running ? " running" : "";
        *(nd.worker >= 0 ? fmt::format_to_n(buf2, sizeof buf2 - 1, "w{}{}", nd.worker, running)
                         : fmt::format_to_n(buf2, sizeof buf2 - 1, "{}", running))
             .out = '\0';
        two_lines();
    } else if (b.state == node_state::running && nd.worker >= 0) {
        *fmt::format_to_n(buf, sizeof buf - 1, "w{}", nd.worker).out = '\0';
        const ImVec2 ts = ImGui::CalcTextSize(buf);
        dl->AddText(ImGui::GetFont(), fs,
                    ImVec2((fr.X(b.x0) + fr.X(b.x1) - ts.x) * 0.5f, (fr.Y(b.y0) + fr.Y(b.y1) - fs) * 0.5f),
                    text_colour_on(c), buf, nullptr, 0, &clip);
    }
}

void dag_view::draw_null_marks(ImDrawList* dl, const canvas_frame& fr) const {
    const float nr = std::clamp(std::min<float>(static_cast<float>(cam_.sx), static_cast<float>(cam_.sy)) * 0.1f, 1.5f, 4.f);
    for (const dag_null_mark& m : list_.nulls) dl->AddCircle(ImVec2(fr.X(m.x), fr.Y(m.y)), nr, col_null, 10, 1.2f);
}

// The selected node's outline, at least 3 px across however far out the view is zoomed.
void dag_view::draw_selected_node(ImDrawList* dl, const canvas_frame& fr, std::uint32_t v) const {
    const float x0 = fr.X(static_cast<float>(cam_.px_x(idx_.node_col[v]))),
                y0 = fr.Y(static_cast<float>(cam_.px_y(idx_.node_row[v])));
    const float x1 = std::max(x0 + 3, fr.X(static_cast<float>(cam_.px_x(idx_.node_col[v] + 1)))),
                y1 = std::max(y0 + 3, fr.Y(static_cast<float>(cam_.px_y(idx_.node_last_row[v] + 1))));
    dl->AddRect(ImVec2(x0 - 1, y0 - 1), ImVec2(x1 + 1, y1 + 1), col_select, 0, 0, 2.0f);
}

// The mouse over the canvas: the wheel zooms (Ctrl: rows only, Shift: columns only), hovering a node
// or a null node explains it, a drag pans and a click (no drag) selects the node under it.
void dag_view::mouse(view_context& ctx, const run_ref& rr, const canvas_frame& fr, double off, std::uint64_t t) {
    view_state& st = ctx.state;
    ImGuiIO& io = ImGui::GetIO();
    const tm::pipeline_dag& dag = run(ctx).dag;
    const ImVec2 mp = io.MousePos;
    const bool in_canvas = ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem) && mp.x >= fr.cx0 &&
                           mp.x < fr.cx1 && mp.y >= fr.cy0 && mp.y < fr.cy1;
    const double lx = mp.x - fr.cx0, ly = mp.y - fr.cy0;
    if (in_canvas && io.MouseWheel != 0) {
        const double f = std::pow(1.25, io.MouseWheel);
        cam_.zoom_at(lx, ly, io.KeyCtrl ? 1.0 : f, io.KeyShift ? 1.0 : f);
        auto_fit_ = false;
    }
    if (in_canvas && !dragging_) {
        const std::uint32_t v = node_at_px(idx_, cam_, lx, ly);
        if (v != tm::no_index) {
            st.hover = {rr.file, dag.nodes[v].slice};
            node_tooltip(dag, v, ly, off, t);
        } else if (cam_.sx >= 3 && cam_.sy >= 3) {
            null_node_tooltip(lx, ly);
        }
    }
    if (in_canvas && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
        dragging_ = true;
        drag_moved_ = false;
        drag_origin_ = mp;
    }
    if (!dragging_) return;
    if (ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
        if (std::fabs(mp.x - drag_origin_.x) + std::fabs(mp.y - drag_origin_.y) > 3) drag_moved_ = true;
        if (drag_moved_) {
            cam_.pan_px(io.MouseDelta.x, io.MouseDelta.y);
            auto_fit_ = false;
        }
    } else {
        dragging_ = false;
        if (!drag_moved_) {
            const std::uint32_t v = node_at_px(idx_, cam_, mp.x - fr.cx0, mp.y - fr.cy0);
            selection s;
            if (v != tm::no_index && dag.nodes[v].slice.valid()) s = {rr.file, dag.nodes[v].slice};
            st.select(ctx.doc, s);
            last_sel_ = st.sel;   // already in view
        }
    }
}

// Node v under the mouse (ly: px below the canvas's top): what it is, its state at the cursor, its
// worker and times, the edges into it, whether the critical path runs through it.
void dag_view::node_tooltip(const tm::pipeline_dag& dag, std::uint32_t v, double ly, double off, std::uint64_t t) const {
    const tm::dag_node& nd = dag.nodes[v];
    const node_state s = state_at(dag, idx_, v, t);
    ImGui::BeginTooltip();
    // The row under the mouse: inside a folded block, one of its nodes.
    const std::uint32_t hrow = std::clamp(static_cast<std::uint32_t>(std::max(0.0, std::floor(cam_.row_at(ly)))),
                                          idx_.node_row[v], idx_.node_last_row[v]);
    if (nd.folded()) folded_node_lines(dag, v, hrow, off, t);
    else
        ImGui::Text("node (%llu, %llu)", static_cast<unsigned long long>(nd.iteration),
                    static_cast<unsigned long long>(nd.stage));
    const std::string& nm = row_labels_[hrow].name;
    if (!nm.empty()) ImGui::TextDisabled("%s", nm.c_str());
    ImGui::TextColored(ImColor(state_colour(s)), "%s%s at the cursor", nd.folded() ? "the run: " : "", to_string(s));
    if (nd.worker >= 0) ImGui::TextColored(ImColor(worker_colour(nd.worker)), "worker %d", nd.worker);
    ImGui::Text("start %s   duration %s", format_duration(static_cast<double>(nd.start) - off, 3).c_str(),
                format_duration(static_cast<double>(nd.end - nd.start), 3).c_str());
    if (nd.waited) ImGui::TextDisabled("entered through pipe_stage_wait (cross edge)");
    if (idx_.suspend_at[v] != no_time)
        ImGui::Text("suspended at %s, waited %s", format_duration(static_cast<double>(idx_.suspend_at[v]) - off, 3).c_str(),
                    format_duration(static_cast<double>(nd.start - idx_.suspend_at[v]), 3).c_str());
    for (std::uint32_t k = idx_.in_first[v]; k < idx_.in_first[v + 1]; ++k) {
        const tm::dag_edge& e = dag.edges[idx_.in_edges[k]];
        const tm::dag_node& u = dag.nodes[e.from];
        if (u.folded())
            ImGui::TextDisabled("%s edge from (%llu, %llu\xE2\x80\x93%llu), ended %s", tm::to_string(e.kind),
                                static_cast<unsigned long long>(u.iteration), static_cast<unsigned long long>(u.stage),
                                static_cast<unsigned long long>(u.last_stage),
                                format_duration(static_cast<double>(u.end) - off, 3).c_str());
        else
            ImGui::TextDisabled("%s edge from (%llu, %llu), ended %s", tm::to_string(e.kind),
                                static_cast<unsigned long long>(u.iteration), static_cast<unsigned long long>(u.stage),
                                format_duration(static_cast<double>(u.end) - off, 3).c_str());
    }
    if (!cp_.empty() && cp_.on_node[v]) ImGui::TextColored(ImColor(col_critical), "on the critical path");
    ImGui::EndTooltip();
}

// A folded block's first tooltip lines: the block, and the node of it in row hrow by its share.
void dag_view::folded_node_lines(const tm::pipeline_dag& dag, std::uint32_t v, std::uint32_t hrow, double off,
                                 std::uint64_t t) const {
    const tm::dag_node& nd = dag.nodes[v];
    const std::uint32_t k = hrow - idx_.node_row[v];
    const node_state sk = state_in_block(dag, idx_, v, k, t);
    const auto [ks, ke] = node_share_times(nd, k);
    ImGui::Text("folded run (%llu, %llu\xE2\x80\x93%llu): %u nodes", static_cast<unsigned long long>(nd.iteration),
                static_cast<unsigned long long>(nd.stage), static_cast<unsigned long long>(nd.last_stage), nd.nodes);
    ImGui::TextDisabled("one slice for stages %llu to %llu of iteration %llu; %u of its nodes done at the cursor",
                        static_cast<unsigned long long>(nd.stage), static_cast<unsigned long long>(nd.last_stage),
                        static_cast<unsigned long long>(nd.iteration), nodes_done_at(nd, t));
    ImGui::TextColored(ImColor(state_colour(sk)), "node (%llu, %llu): %s at the cursor",
                       static_cast<unsigned long long>(nd.iteration), static_cast<unsigned long long>(idx_.row_stage[hrow]),
                       to_string(sk));
    ImGui::TextDisabled("its share of the run: %s to %s (%s, the run's duration / %u)",
                        format_duration(static_cast<double>(ks) - off, 3).c_str(),
                        format_duration(static_cast<double>(ke) - off, 3).c_str(),
                        format_duration(static_cast<double>(ke - ks), 3).c_str(), nd.nodes);
}

// Between an iteration's first and last node, a cell without a node is a stage it skipped.
void dag_view::null_node_tooltip(double lx, double ly) const {
    const double cols = static_cast<double>(idx_.columns()), rows = static_cast<double>(idx_.rows());
    const double c = std::floor(cam_.col_at(lx)), rw = std::floor(cam_.row_at(ly));
    if (c < 0 || rw < 0 || c >= cols || rw >= rows) return;
    const std::uint32_t ci = static_cast<std::uint32_t>(c), ri = static_cast<std::uint32_t>(rw);
    const std::uint32_t b = idx_.col_first[ci], e = idx_.col_first[ci + 1];
    if (idx_.node_row[b] < ri && idx_.node_row[e - 1] > ri)
        ImGui::SetTooltip("null node (%llu, %llu): iteration %llu skipped stage %llu",
                          static_cast<unsigned long long>(idx_.col_iteration[ci]),
                          static_cast<unsigned long long>(idx_.row_stage[ri]),
                          static_cast<unsigned long long>(idx_.col_iteration[ci]),
                          static_cast<unsigned long long>(idx_.row_stage[ri]));
}

// The replay's keys, Home / 0 (fit) and F (frame the selected node), while the canvas has the mouse
// or the focus and no text field the keyboard.
void dag_view::keys(view_context& ctx, double off, std::uint32_t sel_node) {
    if (ImGui::GetIO().WantTextInput || !(ImGui::IsWindowHovered() || ImGui::IsWindowFocused())) return;
    replay_.keys(ctx.state, run_t0_, run_t1_, steps(off));
    if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Home), false) || ImGui::IsKeyPressed('0', false))
        fit_pending_ = true;
    if (ImGui::IsKeyPressed('F', false) && sel_node != tm::no_index) {
        cam_.sx = std::max(cam_.sx, 40.0);
        cam_.sy = std::max(cam_.sy, 30.0);
        cam_.centre_on(idx_.node_col[sel_node] + 0.5, idx_.node_row[sel_node] + 0.5);
        auto_fit_ = false;
    }
}

void dag_view::draw(view_context& ctx) {
    view_state& st = ctx.state;
    if (!choose_run(ctx)) {
        bool graphs = false;
        for (const auto& r : ctx.doc.runs)
            graphs |= r.run != tm::no_index && ctx.doc.files[r.file]->model.runs[r.run].program_kind == vocab::graph_program;
        ImGui::TextDisabled(
            graphs ? "No pipeline DAG: the runs here are stage graphs (stages joined by queues, not iterations). "
                     "The stage graph view (key 3) shows them."
                   : "No pipeline DAG in this document: open a trace recorded by `pipescope run` of a pipeline workload.");
        st.playing = false;
        return;
    }
    const run_ref& rr = ctx.doc.runs[doc_run_];
    const double off = display_offset(ctx.doc, rr, st.align_runs);
    // The run's one extent (its scope, the run instant to the run summary), as every other view
    // shows it; the DAG's first start and last end lie inside it.
    const double t0 = static_cast<double>(rr.start) - off, t1 = static_cast<double>(rr.end) - off;
    run_t0_ = t0;
    run_t1_ = t1;
    replay_.advance(st, t0, t1);   // an unset cursor starts halfway through the run
    toolbar(ctx, rr, off);
    replay_.scrubber(st, t0, t1, scrub_h());
    const std::uint64_t t = static_cast<std::uint64_t>(std::max(0.0, std::round(*st.cursor + off)));
    const state_counts c = counts_at(idx_, t);
    st.dag_shown = dag_readout{doc_run_, t0, t1, c.done, c.running, c.suspended, c.ready, c.not_ready, idx_.node_total};
    legend(ctx, t);
    canvas(ctx, rr, off);
}

}   // namespace

std::unique_ptr<view> make_dag_view() { return std::make_unique<dag_view>(); }

}   // namespace pipescope::viewer
