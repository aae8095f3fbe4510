// Compare: every run of the document (one or several files) on one time axis — from each run's
// start, normalised to each run's length, or on the absolute clock — each run's workers drawn
// compactly (one row per worker, node slices by stage, idle/parked in grey, with the timeline's
// level of detail) and its live-iterations counter; below, a table per run (model/compare.hpp):
// makespan, speedup, steals, suspensions, peak live iterations, nodes, work share.
#include "clipboard.hpp"
#include "legend.hpp"
#include "palette.hpp"
#include "time_ruler.hpp"   // imgui_text_width
#include "track_painters.hpp"
#include "view.hpp"

#include "../model/compare.hpp"
#include "../model/lod.hpp"

#include <pipescope/analysis/numbers.hpp>
#include "../model/text_fit.hpp"

#include <algorithm>
#include <cmath>
#include <string>

namespace pipescope::viewer {
namespace {

namespace numbers = analysis::numbers;

// The view's sizes, from the font size (the UI scale): at the 15 px font of scale 1 a 150 px
// name column, a 30 px ruler, 22 px run headers, 13 px worker bands, 24 px counters, 10 px between runs.
struct compare_sizes {
    float label_w, ruler_h, header_h, worker_h, counter_h, run_gap;
    static compare_sizes for_font(float font_px) {
        const float s = font_px / 15;
        auto px = [s](float at_scale_1) { return std::round(at_scale_1 * s); };
        return {px(150), px(30), px(22), px(13), px(24), px(10)};
    }
};
constexpr double norm_units = 1e6;   // the normalised axis: 0 .. 1e6 = 0 .. 100 % of a run

enum class axis_mode : int { from_start, normalised, absolute };

// Table header colour: distinct, so that the screenshot test can find the table.
constexpr ImU32 col_table_header = IM_COL32(0x33, 0x4A, 0x6E, 255);

std::string stage_name(const document& d, const run_ref& rr, colour_key k) {
    if (rr.run == tm::no_index) return {};
    return stage_name_of_number(d.files[rr.file]->model.runs[rr.run].stages, k);
}

// The slice under the mouse (found while laying out, used after) and its run's axis offset.
struct band_hover {
    selection sel;
    double offset = 0;
};

class compare_view final : public view {
public:
    void draw(view_context& ctx) override;

private:
    compare_sizes sz_ = compare_sizes::for_font(15);   // this frame's, from the font
    viewport vp_;
    axis_mode mode_ = axis_mode::from_start;
    bool framed_ = false;
    document_key key_;
    std::vector<compare_row> rows_;
    table_copy copy_;   // the table as drawn, for "Copy as TSV"
    track_painter painter_;
    bool dragging_ = false;
    float drag_x_ = 0;

    double domain(const document& d) const;
    // Absolute ns of axis unit 0 for a run, and ns per axis unit.
    void run_axis(const document& d, const run_ref& rr, double& offset, double& scale) const;
    void toolbar(view_context& ctx);
    void ruler(ImDrawList* dl, ImVec2 o, float width) const;
    // The phases of a frame (draw() says in which order).
    void update_viewport(view_context& ctx, float width);
    float bands_height(const document& doc, float avail_h, float table_h) const;
    void draw_grid(const track_area& fr) const;
    float run_bands(view_context& ctx, const track_area& fr, std::uint32_t ri, float y, band_hover& hover);
    void run_header(view_context& ctx, const track_area& fr, std::uint32_t ri, float y, const lod_params& p);
    void worker_band(const track_area& fr, const loaded_file& f, const run_ref& rr, std::size_t wi, float y,
                     const lod_params& p, double offset, band_hover& hover);
    void mouse(view_context& ctx, const track_area& fr, ImVec2 ro, const band_hover& hover);
    void slice_tooltip(const document& doc, const band_hover& hover) const;
    void note(view_context& ctx) const;
    void table(view_context& ctx, float height);
    // Under the table: what the work column counts for a run with more threads than cores.
    float work_notes_height(float width) const;
    void work_notes() const;
};

double compare_view::domain(const document& d) const {
    if (mode_ == axis_mode::normalised) return norm_units;
    if (mode_ == axis_mode::absolute) return std::max(1.0, static_cast<double>(d.end - d.start));
    double h = 1;
    for (const auto& r : d.runs) h = std::max(h, static_cast<double>(r.end - r.start));
    return h;
}

void compare_view::run_axis(const document& d, const run_ref& rr, double& offset, double& scale) const {
    switch (mode_) {
        case axis_mode::from_start:
            offset = static_cast<double>(rr.start);
            scale = 1;
            break;
        case axis_mode::absolute:
            offset = static_cast<double>(d.start);
            scale = 1;
            break;
        case axis_mode::normalised:
            offset = static_cast<double>(rr.start);
            scale = std::max(1.0, static_cast<double>(rr.end - rr.start)) / norm_units;
            break;
    }
}

void compare_view::toolbar(view_context& ctx) {
    static const char* modes[] = {"from each run's start", "normalised to each run's length", "absolute clock"};
    toolbar_flow flow(ctx.state.layout, "compare toolbar");
    flow.next(toolbar_flow::text_width("Time axis"), "Time axis");
    ImGui::TextUnformatted("Time axis");
    const float combo_w = ImGui::GetFontSize() * 16.5f;   // the longest mode's text
    flow.next(combo_w, modes[static_cast<int>(mode_)]);
    ImGui::SetNextItemWidth(combo_w);
    int m = static_cast<int>(mode_);
    if (ImGui::Combo("##axis", &m, modes, 3)) {
        mode_ = static_cast<axis_mode>(m);
        framed_ = false;
    }
    if (ImGui::IsItemHovered())
        ImGui::SetTooltip("From each run's start: one ns scale, runs aligned at 0 (lengths compare).\n"
                          "Normalised: every run spans the width (0-100 %% of its makespan; shapes compare).\n"
                          "Absolute clock: runs where they were recorded (files recorded one after the other).");
    flow.next(toolbar_flow::button_width("Fit"), "Fit");
    if (ImGui::Button("Fit")) framed_ = false;
    flow.next(toolbar_flow::text_width("|"), "|");
    ImGui::TextDisabled("|");
    // Stage legend (the first palette entries that occur) and the states.
    stage_legend(flow, ctx.doc, true);
    draw_legend(flow, {{key_colour(key_idle), "idle", ""},
                       {key_colour(key_parked), "parked", ""},
                       {key_colour(key_task), "task", ""}});
    const char* hint = "wheel: zoom, drag: pan, click: select";
    flow.next(toolbar_flow::text_width(hint), hint, ImGui::GetFontSize());
    ImGui::TextDisabled("%s", hint);
}

void compare_view::ruler(ImDrawList* dl, ImVec2 o, float width) const {
    dl->AddRectFilled(o, ImVec2(o.x + sz_.label_w + width, o.y + sz_.ruler_h), IM_COL32(24, 25, 29, 255));
    const double step = nice_step(vp_.npp, 100);
    const double minor = step / 5;
    const float x0 = o.x + sz_.label_w;
    for (double t = std::ceil(vp_.t0 / minor) * minor; t <= vp_.t1(); t += minor) {
        const float x = x0 + static_cast<float>(vp_.to_px(t));
        const bool major = std::fabs(std::remainder(t, step)) < minor * 0.5;
        dl->AddLine(ImVec2(x, o.y + sz_.ruler_h - (major ? 10 : 4)), ImVec2(x, o.y + sz_.ruler_h),
                    IM_COL32(170, 170, 180, 255));
        if (!major) continue;
        std::string s;
        if (mode_ == axis_mode::normalised) {
            s = numbers::short_percent(t / norm_units, 4);
        } else {
            s = format_tick(t, step);
        }
        if (x + 3 + ImGui::CalcTextSize(s.c_str()).x <= x0 + width + 2)
            dl->AddText(ImVec2(x + 3, o.y + 3), IM_COL32(220, 220, 225, 255), s.c_str());
    }
    const char* what = mode_ == axis_mode::normalised ? "% of each run"
                       : mode_ == axis_mode::absolute ? "absolute"
                                                      : "since run start";
    dl->AddText(ImVec2(o.x + 6, o.y + 3), IM_COL32(150, 150, 160, 255), what);
    if (mode_ != axis_mode::normalised) {
        const std::string d = format_duration(step) + " / div";
        const float fs = ImGui::GetFontSize();   // a smaller second line, under the first one
        dl->AddText(ImGui::GetFont(), fs * 0.8f, ImVec2(o.x + 6, o.y + 2 + fs), IM_COL32(120, 120, 130, 255), d.c_str());
    }
    dl->AddLine(ImVec2(o.x, o.y + sz_.ruler_h - 0.5f), ImVec2(o.x + sz_.label_w + width, o.y + sz_.ruler_h - 0.5f),
                IM_COL32(80, 80, 90, 255));
}

void compare_view::table(view_context& ctx, float height) {
    const ImGuiTableFlags flags =
        ImGuiTableFlags_RowBg | ImGuiTableFlags_BordersInnerV | ImGuiTableFlags_BordersOuter | ImGuiTableFlags_ScrollY |
        ImGuiTableFlags_ScrollX | ImGuiTableFlags_SizingFixedFit |
        ImGuiTableFlags_Resizable;   // every column as wide as its contents, scrolling sideways when narrower
    ImGui::PushStyleColor(ImGuiCol_TableHeaderBg, col_table_header);
    copy_.begin();   // a right-click copies the table as TSV (clipboard.hpp)
    if (!ImGui::BeginTable("##compare", 12, flags, ImVec2(0, height))) {
        ImGui::PopStyleColor();
        return;
    }
    ImGui::TableSetupScrollFreeze(1, 1);   // the run's name stays in view when the numbers scroll
    ImGui::TableSetupColumn("run");
    for (const char* c :
         {"P", "K", "makespan", "vs first", "speedup", "steals", "suspensions", "peak live", "nodes", "iterations", "work"})
        ImGui::TableSetupColumn(c);
    static const char* tips[] = {
        "the run (and its file when several are open)",
        "workers",
        "throttle K (run metadata)",
        "first to last event of the run",
        "the first run's makespan / this run's makespan",
        "the serial reference's time (reference_seconds in the run metadata) / makespan; — if not recorded",
        "successful steals (steal instants)",
        "iterations suspended at a stage (suspend instants)",
        "max of the live iterations counter",
        "nodes of the pipeline DAG",
        "iterations with nodes",
        "work / (threads x makespan): the share of the workers' time in node and task slices (the breakdown\n"
        "view's total); * more threads than cores (bind-to-stage): the note under the table says what that means",
    };
    ImGui::TableNextRow(ImGuiTableRowFlags_Headers);
    for (int c = 0; c < 12; ++c) {
        ImGui::TableSetColumnIndex(c);
        ImGui::TableHeader(ImGui::TableGetColumnName(c));
        copy_.cell(ImGui::TableGetColumnName(c));
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tips[c]);
    }
    if (ctx.mono) ImGui::PushFont(ctx.mono);
    auto cell = [&](const char* s, bool right = true) {
        ImGui::TableNextColumn();
        if (right) {
            const float w = ImGui::CalcTextSize(s).x, avail = ImGui::GetContentRegionAvail().x;
            if (avail > w) ImGui::SetCursorPosX(ImGui::GetCursorPosX() + avail - w);
        }
        ImGui::TextUnformatted(s);
        copy_.cell(s);
    };
    auto num = [&](std::uint64_t v) { cell(numbers::count(v).c_str()); };
    for (const compare_row& r : rows_) {
        ImGui::TableNextRow();
        copy_.row();
        cell(r.name.c_str(), false);
        num(r.workers);
        if (r.K) num(r.K);
        else cell("—");
        cell(format_duration(static_cast<double>(r.makespan), 2).c_str());
        cell(numbers::ratio(r.vs_first, 2).c_str());
        if (r.speedup) {
            cell(numbers::ratio(*r.speedup, 2).c_str());
        } else {
            cell("—");
        }
        num(r.steals);
        num(r.suspensions);
        if (r.peak_live) {
            cell(numbers::value(*r.peak_live).c_str());
        } else {
            cell("—");
        }
        num(r.nodes);
        num(r.iterations);
        const std::string work = numbers::percent(r.work_fraction, 1);
        cell(r.oversubscribed() ? (work + " *").c_str() : work.c_str());
        if (r.oversubscribed() && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", work_note(r).c_str());
    }
    if (ctx.mono) ImGui::PopFont();
    ImGui::EndTable();
    ImGui::PopStyleColor();
    copy_.context_menu(ctx.state, "##compare copy");
}

float compare_view::work_notes_height(float width) const {
    float h = 0;
    for (const compare_row& r : rows_)
        if (r.oversubscribed())
            h += ImGui::CalcTextSize(("* " + r.name + ": " + work_note(r)).c_str(), nullptr, false, width).y +
                 ImGui::GetStyle().ItemSpacing.y;
    return h;
}

void compare_view::work_notes() const {
    for (const compare_row& r : rows_)
        if (r.oversubscribed()) ImGui::TextWrapped("* %s: %s", r.name.c_str(), work_note(r).c_str());
}

// A frame of the compare view, in phases: the toolbar, the axis, the heights (the bands take what
// the table and the note leave), the ruler, the run bands (laid out run by run, finding what the
// mouse is over on the way), the mouse, then the note and the table.
void compare_view::draw(view_context& ctx) {
    const document& doc = ctx.doc;
    sz_ = compare_sizes::for_font(ImGui::GetFontSize());
    if (!key_.matches(doc)) {
        key_ = document_key::of(doc);
        rows_ = compute_compare(doc);
        framed_ = false;
    }
    toolbar(ctx);
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float width = std::max(50.f, avail.x - sz_.label_w);
    update_viewport(ctx, width);
    const float row_text_h = ImGui::GetTextLineHeightWithSpacing() + 4;
    const float table_h = std::min(avail.y * 0.4f, row_text_h * (static_cast<float>(rows_.size()) + 1) + 8);
    const float notes_h = work_notes_height(avail.x);
    const float bands_h = bands_height(doc, avail.y, table_h + notes_h);
    const ImVec2 ro = ImGui::GetCursorScreenPos();
    ruler(ImGui::GetWindowDrawList(), ro, width);
    ImGui::Dummy(ImVec2(sz_.label_w + width, sz_.ruler_h));

    ImGui::PushStyleColor(ImGuiCol_ChildBg, col_background);
    ImGui::BeginChild("##runs", ImVec2(0, bands_h - sz_.ruler_h), false,
                      ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_NoMove);
    const track_area fr = track_area::of_window(sz_.label_w, width);
    const float y_start = ImGui::GetCursorScreenPos().y;
    draw_grid(fr);
    band_hover hover;
    float y = y_start;
    for (std::uint32_t ri = 0; ri < doc.runs.size(); ++ri) y = run_bands(ctx, fr, ri, y, hover);
    if (doc.runs.empty())
        fr.dl->AddText(ImVec2(fr.x0 + 10, y + 10), IM_COL32(200, 200, 200, 255), "no runs: open one or more traces");
    fr.dl->AddLine(ImVec2(fr.x0 - 0.5f, fr.clip_y0), ImVec2(fr.x0 - 0.5f, fr.clip_y1), IM_COL32(90, 90, 100, 255));
    ImGui::SetCursorScreenPos(ImVec2(fr.x_labels, y_start));
    ImGui::Dummy(ImVec2(sz_.label_w + width - 4, std::max(1.f, y - y_start)));
    mouse(ctx, fr, ro, hover);
    ImGui::EndChild();
    ImGui::PopStyleColor();

    note(ctx);
    table(ctx, table_h);
    work_notes();
}

// The viewport takes the time area's width (a resized window shows the same range over it), shows
// the whole axis until framed, and then what was asked of it; it stays within the axis.
void compare_view::update_viewport(view_context& ctx, float width) {
    view_state& st = ctx.state;
    vp_.resize(width);
    const double dom = domain(ctx.doc);
    if (!framed_) {
        vp_.frame(0, dom, 0.01);
        framed_ = true;
    }
    // A range asked for by a lesson step (or --select) is in the timeline's display units: ns from
    // each run's start when runs are aligned, else from the document's start. Those are this
    // view's units too, unless its axis is normalised or disagrees about alignment.
    if (st.frame_request && mode_ != axis_mode::normalised && (mode_ == axis_mode::from_start) == st.align_runs) {
        vp_.frame(st.frame_request->first, st.frame_request->second, 0.01);
        st.vp.frame(st.frame_request->first, st.frame_request->second, timeline_frame_margin);   // the timeline shows it too
        st.frame_request.reset();
    }
    vp_.clamp(0, dom);
}

// The height of the ruler and the bands: what every run needs, between 60 px and what the table,
// the note and the spacing leave of `avail_h`.
float compare_view::bands_height(const document& doc, float avail_h, float table_h) const {
    const float note_h = ImGui::GetTextLineHeightWithSpacing();
    float needed = sz_.ruler_h + 4;
    for (const auto& rr : doc.runs) {
        needed += sz_.header_h + 2 + sz_.run_gap + sz_.worker_h * static_cast<float>(rr.workers.size());
        for (auto ti : rr.counters)
            needed += doc.files[rr.file]->model.tracks[ti].name == vocab::live_iterations ? sz_.counter_h : 0;
    }
    return std::clamp(needed, 60.f, std::max(60.f, avail_h - table_h - note_h - ImGui::GetStyle().ItemSpacing.y * 3));
}

// Grid lines at the ruler's major ticks.
void compare_view::draw_grid(const track_area& fr) const {
    const double step = nice_step(vp_.npp, 100);
    for (double t = std::ceil(vp_.t0 / step) * step; t <= vp_.t1(); t += step) {
        const float x = fr.x0 + static_cast<float>(vp_.to_px(t));
        fr.dl->AddLine(ImVec2(x, fr.clip_y0), ImVec2(x, fr.clip_y1), IM_COL32(255, 255, 255, 14));
    }
}

// Run ri's bands from y down: its header, a row per worker, its live-iterations counter. Notes in
// `hover` the slice under the mouse; returns the y after the run.
float compare_view::run_bands(view_context& ctx, const track_area& fr, std::uint32_t ri, float y, band_hover& hover) {
    const run_ref& rr = ctx.doc.runs[ri];
    const loaded_file& f = *ctx.doc.files[rr.file];
    double offset = 0, scale = 1;
    run_axis(ctx.doc, rr, offset, scale);
    lod_params p;
    p.t_left = offset + vp_.t0 * scale;
    p.npp = vp_.npp * scale;
    p.width = fr.width;
    if (fr.visible(y, y + sz_.header_h)) run_header(ctx, fr, ri, y, p);
    y += sz_.header_h + 2;
    for (std::size_t wi = 0; wi < rr.workers.size(); ++wi) {
        if (fr.visible(y, y + sz_.worker_h)) worker_band(fr, f, rr, wi, y, p, offset, hover);
        y += sz_.worker_h;
    }
    for (auto ti : rr.counters) {
        if (f.model.tracks[ti].name != vocab::live_iterations) continue;
        if (fr.visible(y, y + sz_.counter_h)) {
            fr.dl->AddRectFilled(ImVec2(fr.x_labels, y), ImVec2(fr.x0 + fr.width, y + sz_.counter_h),
                                 IM_COL32(33, 35, 42, 255));
            const std::string label = "live (max " + numbers::value(f.counter_max[ti]) + ")";
            fr.dl->AddText(ImGui::GetFont(), ImGui::GetFontSize() * 0.8f, ImVec2(fr.x_labels + 14, y + 3),
                           IM_COL32(160, 160, 170, 255), label.c_str());
            fr.dl->PushClipRect(ImVec2(fr.x0, y), ImVec2(fr.x0 + fr.width, y + sz_.counter_h), true);
            painter_.counter(fr.dl, f, ti, p, fr.x0, y + 2, y + sz_.counter_h - 2,
                             {rgb(0x4E79A7, 170), rgb(0x9FD0FF), false});
            fr.dl->PopClipRect();
        }
        y += sz_.counter_h;
    }
    return y + sz_.run_gap;
}

// A run's header: title, makespan (P and K when the title lacks them, the ratio to the first run),
// elided to the width with the whole text in a tooltip (as the timeline's headers), and a bar where
// the run lies on the axis.
void compare_view::run_header(view_context& ctx, const track_area& fr, std::uint32_t ri, float y, const lod_params& p) {
    const run_ref& rr = ctx.doc.runs[ri];
    const float xl = fr.x_labels, x0 = fr.x0, width = fr.width;
    fr.dl->AddRectFilled(ImVec2(xl, y), ImVec2(x0 + width, y + sz_.header_h), IM_COL32(52, 56, 70, 255));
    std::string h = rr.title + "    " + format_duration(static_cast<double>(rr.end - rr.start), 2);
    if (ri < rows_.size()) {
        const compare_row& r = rows_[ri];
        if (rr.title.find("P=") == std::string::npos) h += "  ·  P = " + std::to_string(r.workers);
        if (r.K) h += "  ·  K = " + std::to_string(r.K);
        if (ri > 0) h += "  ·  " + numbers::ratio(r.vs_first, 2) + " vs first";
    }
    run_header_title(fr, ctx.state.layout, "compare run header", h, xl + 6, x0 + width - (xl + 6) - 6, y, sz_.header_h);
    const float rx0 = x0 + static_cast<float>((static_cast<double>(rr.start) - p.t_left) / p.npp);
    const float rx1 = x0 + static_cast<float>((static_cast<double>(rr.end) - p.t_left) / p.npp);
    run_extent_bar(fr, y, sz_.header_h, rx0, rx1);
}

// Worker wi of a run as one compact row: every depth into it, outermost first, so that the
// innermost slice shows (a `parked` inside an `idle` is drawn parked). The innermost slice under
// the mouse is the hover.
void compare_view::worker_band(const track_area& fr, const loaded_file& f, const run_ref& rr, std::size_t wi, float y,
                               const lod_params& p, double offset, band_hover& hover) {
    const std::uint32_t ti = rr.workers[wi];
    const tm::track& tr = f.model.tracks[ti];
    fr.dl->AddRectFilled(ImVec2(fr.x_labels, y), ImVec2(fr.x0 + fr.width, y + sz_.worker_h),
                         (wi & 1) ? col_track_bg_a : col_track_bg_b);
    fr.dl->AddText(ImGui::GetFont(), ImGui::GetFontSize() * 0.8f, ImVec2(fr.x_labels + 14, y), IM_COL32(190, 190, 198, 255),
                   tr.name.c_str());
    fr.dl->PushClipRect(ImVec2(fr.x0, y), ImVec2(fr.x0 + fr.width, y + sz_.worker_h), true);
    if (!tr.slices.empty())
        for (int d = 0; d <= tr.max_depth; ++d)
            painter_.slice_row(fr.dl, f, f.row(ti, static_cast<std::uint16_t>(d)), p, fr.x0, y, y + sz_.worker_h - 1);
    fr.dl->PopClipRect();
    const ImVec2 mp = ImGui::GetIO().MousePos;
    if (!fr.hovered() || mp.y < y || mp.y >= y + sz_.worker_h) return;
    const double t = p.t_left + (mp.x - fr.x0) * p.npp, tol = 2 * p.npp;
    for (int d = tr.slices.empty() ? -1 : tr.max_depth; d >= 0; --d) {
        const row_view row = f.row(ti, static_cast<std::uint16_t>(d));
        const std::size_t k = hit_row(row, t, tol);
        if (k != npos) {
            hover = {{rr.file, {ti, row.slice_index(k), false}}, offset};
            return;
        }
    }
}

// The mouse over the bands: a line down from the ruler with the time under it, the hovered slice's
// tooltip; the wheel zooms at it (Shift: scrolls), a drag pans, a click (no drag) selects.
void compare_view::mouse(view_context& ctx, const track_area& fr, ImVec2 ro, const band_hover& hover) {
    const ImGuiIO& io = ImGui::GetIO();
    const ImVec2 mp = io.MousePos;
    if (fr.hovered()) {
        ImDrawList* fg = ImGui::GetForegroundDrawList();
        fg->AddLine(ImVec2(mp.x, ro.y), ImVec2(mp.x, fr.clip_y1), IM_COL32(255, 255, 255, 60));
        const double u = vp_.to_ns(mp.x - fr.x0);
        const std::string at = mode_ == axis_mode::normalised ? numbers::percent(u / norm_units, 2) : format_duration(u, 3);
        fg->AddRectFilled(ImVec2(mp.x + 2, ro.y + sz_.ruler_h - ImGui::GetFontSize()),
                          ImVec2(mp.x + 8 + ImGui::CalcTextSize(at.c_str()).x, ro.y + sz_.ruler_h),
                          IM_COL32(60, 60, 70, 255));
        fg->AddText(ImVec2(mp.x + 5, ro.y + sz_.ruler_h - ImGui::GetFontSize()), IM_COL32(255, 255, 255, 255), at.c_str());
        if (hover.sel.valid() && !dragging_) slice_tooltip(ctx.doc, hover);
        if (io.MouseWheel != 0) {
            if (io.KeyShift) ImGui::SetScrollY(ImGui::GetScrollY() - io.MouseWheel * 60);
            else vp_.zoom_at(mp.x - fr.x0, std::pow(0.8, io.MouseWheel));
        }
        if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
            dragging_ = true;
            drag_x_ = mp.x;
        }
    }
    if (!dragging_) return;
    if (ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
        if (std::fabs(mp.x - drag_x_) > 3) vp_.pan_px(io.MouseDelta.x);
    } else {
        dragging_ = false;
        if (std::fabs(mp.x - drag_x_) <= 3 && fr.hovered()) ctx.state.select(ctx.doc, hover.sel);
    }
}

void compare_view::slice_tooltip(const document& doc, const band_hover& hover) const {
    const selection& h = hover.sel;
    const loaded_file& f = *doc.files[h.file];
    const tm::slice& s = f.model.tracks[h.ev.track].slices[h.ev.index];
    ImGui::BeginTooltip();
    ImGui::TextUnformatted(f.model.str(s.name).c_str());
    const colour_key k = f.key(s);
    const std::uint32_t run = run_of(doc, h.file, h.ev.track);
    if (is_stage(k) && run != tm::no_index) {
        const std::string sn = stage_name(doc, doc.runs[run], k);
        if (!sn.empty()) ImGui::TextColored(ImColor(key_colour(k)), "%s", sn.c_str());
    }
    if (auto it = f.model.uint_arg(s, vocab::arg_key::iteration))
        ImGui::Text("iteration %llu", static_cast<unsigned long long>(*it));
    ImGui::TextDisabled("%s", f.model.tracks[h.ev.track].name.c_str());
    ImGui::Text("start %s  duration %s", format_duration(static_cast<double>(s.begin) - hover.offset, 3).c_str(),
                format_duration(static_cast<double>(s.duration()), 3).c_str());
    ImGui::EndTooltip();
}

// One line under the bands, elided (its height is laid out in bands_height); the whole note in a
// tooltip.
void compare_view::note(view_context& ctx) const {
    const std::string note = "speedup: the serial reference's time (recorded by pipescope run) / makespan, — when the trace "
                             "has none; \"vs first\" compares each makespan with the first run's.";
    const float note_room = ImGui::GetContentRegionAvail().x;
    const std::string note_shown = elide_to_width(note, note_room, imgui_text_width);
    ctx.state.layout.check("compare note", note_shown, imgui_text_width(note_shown), note_room);
    ImGui::TextDisabled("%s", note_shown.c_str());
    if (note_shown != note && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", note.c_str());
}

}   // namespace

std::unique_ptr<view> make_compare_view() { return std::make_unique<compare_view>(); }

}   // namespace pipescope::viewer
