// The timeline: per run a header (sticky while its tracks scroll), a track per worker (node slices
// by stage, scheduler states, instants), the run's line tracks (collapsible) and counters, flows as
// arrows, a time ruler; search, area selection (Shift+drag, M) and the keys of docs/viewer.md.
// Everything drawn per frame is bounded by the visible pixels (see model/lod.hpp).
#include "bookmarks_view.hpp"
#include "legend.hpp"
#include "palette.hpp"
#include "search_box.hpp"
#include "search_mark_painter.hpp"
#include "time_ruler.hpp"
#include "toolbar_flow.hpp"
#include "timeline_overlays.hpp"
#include "track_controls.hpp"
#include "track_painters.hpp"
#include "view.hpp"

#include "../model/ruler.hpp"

#include "../model/lod.hpp"
#include "../model/text_fit.hpp"
#include "../model/timeline_metrics.hpp"

#include <pipescope/analysis/numbers.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace pipescope::viewer {
namespace {

struct hit_region {
    float y0, y1;
    std::uint32_t file, track;
    int depth;       // slice row, or -1: the instant lane
    double offset;   // display offset of the run
};

// A run being laid out: its display offset, the next track's top, and how many tracks it has on
// the striped background so far (they alternate).
struct run_layout {
    const run_ref& rr;
    const loaded_file& f;
    double off;
    float y;
    int stripe = 0;
};

// A run's header and how far down its tracks go, for the sticky header.
struct run_span {
    std::uint32_t run;
    float header_y, end_y;
};

// W/S: a tap zooms by this much at once (Perfetto's step), a held key keeps zooming smoothly.
constexpr double zoom_tap = 0.78, zoom_held_per_s = 0.05;
constexpr float zoom_hold_after_s = 0.25f;

class timeline_view final : public view {
public:
    void draw(view_context& ctx) override;

private:
    track_painter painter_;
    search_mark_painter marks_;   // the search's matches over the tracks
    std::vector<hit_region> hits_;
    std::vector<track_region> track_regions_;
    std::vector<run_span> run_spans_;
    std::vector<instant_bucket> buckets_;
    search_box search_;
    bool focus_search_ = false;
    selection last_seen_sel_;      // the selection this view last showed
    bool area_dragging_ = false;   // Shift+drag: an area selection being drawn
    double area_from_t_ = 0;
    float area_from_y_ = 0;
    std::vector<std::vector<float>> track_y_;   // per file, per track: y of the track's first row (screen), or NaN
    std::vector<std::vector<float>> lane_y_;    // per file, per track: y of the instant lane
    bool dragging_ = false, drag_moved_ = false;
    ImVec2 drag_origin_{};
    const document* laid_out_for_ = nullptr;
    timeline_metrics sz_ = timeline_metrics_for(15);   // this frame's sizes, from the font (the UI scale)
    track_arrangement arrangement_;                    // which tracks are drawn this frame, in which order
    track_controls track_controls_;                    // filter, hidden tracks, the tracks' right-click menus
    std::vector<header_row> header_rows_;              // run headers drawn this frame
    int note_wait_ = 0;                                // frames a new bookmark's note has waited for the keyboard

    void toolbar(view_context& ctx);
    // The phases of a frame (draw() says in which order).
    void update_viewport(view_context& ctx, float width);
    void time_ruler(view_context& ctx, const ruler_area& ruler, const ruler_layout& ticks);
    void reset_layout(view_context& ctx);
    float layout_run(view_context& ctx, const track_area& fr, std::uint32_t ri, float y);
    float layout_pinned(view_context& ctx, const track_area& fr);
    void slice_track(view_context& ctx, const track_area& fr, run_layout& rl, std::uint32_t ti, float rh);
    void lines_group(view_context& ctx, const track_area& fr, std::uint32_t ri, float& y);
    void counter_track(view_context& ctx, const track_area& fr, run_layout& rl, std::uint32_t ti);
    void track_label(view_context& ctx, const track_area& fr, float ly, float h, const char* text,
                     ImU32 c = IM_COL32(205, 205, 212, 255));
    void draw_overlays(view_context& ctx, const track_area& fr, float sticky_top);
    void mouse(view_context& ctx, const track_area& fr, const ruler_area& ruler, double base);
    void area_drag(view_context& ctx, const track_area& fr, const ruler_area& ruler);
    void pan_drag(view_context& ctx, const track_area& fr);
    void scroll_to_selection(view_context& ctx, const track_area& fr);
    void run_header(view_context& ctx, const track_area& a, std::uint32_t ri, float y);
    void draw_slices(view_context& ctx, ImDrawList* dl, const loaded_file& f, std::uint32_t ti, float y, float rh, int rows,
                     double offset, float x0, float width);
    void draw_instants(view_context& ctx, ImDrawList* dl, const loaded_file& f, std::uint32_t ti, float y, double offset,
                       float x0, float width);
    void draw_counter(ImDrawList* dl, const loaded_file& f, std::uint32_t ti, float y, double offset, float x0, float width,
                      const viewport& vp);
    void draw_flows(view_context& ctx, ImDrawList* dl, float x0, float width, float clip_y0, float clip_y1);
    void tooltip(view_context& ctx, const selection& s);
    selection hit_at(const view_context& ctx, ImVec2 mp, float x0) const;
    void keys(view_context& ctx, bool in_time, float mouse_px, float width);
    void reveal_selection(view_context& ctx);
    ImVec2 event_pos(const view_context& ctx, std::uint32_t file, const tm::event_ref& e, float x0, bool& ok) const;
};

// The toolbar wraps (toolbar_flow): at 1000 px the legend goes on a second line instead of off the edge.
void timeline_view::toolbar(view_context& ctx) {
    view_state& st = ctx.state;
    toolbar_flow flow(st.layout, "timeline toolbar");
    search_.draw(ctx, focus_search_, flow);
    focus_search_ = false;
    flow.next(toolbar_flow::checkbox_width("Align runs"), "Align runs");
    if (ImGui::Checkbox("Align runs", &st.align_runs)) st.request_frame_all(ctx.doc);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Each run starts at 0 (off: absolute time, one axis for all runs)");
    flow.next(toolbar_flow::checkbox_width("All flows"), "All flows");
    ImGui::Checkbox("All flows", &st.all_flows);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Draw every flow arrow in view (off: only the selection's)");
    flow.next(toolbar_flow::button_width("Fit"), "Fit");
    if (ImGui::Button("Fit")) st.request_frame_all(ctx.doc);
    track_controls_.toolbar(ctx, flow, arrangement_);
    flow.next(toolbar_flow::text_width("|"), "|");
    ImGui::TextDisabled("|");
    // Legend: the stage indices that occur in the document (names from the run metadata), then
    // the states. When narrow stage swatches without their numbers (hover names them) take fewer
    // lines than labelled ones, the legend uses them: one line at 1600 px, two at 1000 px.
    const std::vector<legend_entry> states = {
        {key_colour(key_idle), "idle", "worker looking for work (failed steals in the details)"},
        {key_colour(key_parked), "parked", "worker asleep until woken"},
        {key_colour(key_waiting), "waiting", "line: iteration waiting at a stage / to retire"},
        {key_colour(key_throttled), "throttled", "control: the loop waits for the oldest iteration (K)"},
        {col_events_lost, "lost", "events lost: the recorder's buffer ran dry here"}};
    auto legend_lines = [&](bool compact) {
        std::vector<toolbar_flow::sized> items = stage_legend_sizes(ctx.doc, compact);
        for (const legend_entry& e : states) items.push_back(legend_entry_size(e));
        return flow.lines_after(items);
    };
    stage_legend(flow, ctx.doc, legend_lines(true) < legend_lines(false));
    draw_legend(flow, states);
}

void timeline_view::draw_slices(view_context& ctx, ImDrawList* dl, const loaded_file& f, std::uint32_t ti, float y, float rh,
                                int rows, double offset, float x0, float width) {
    const viewport& vp = ctx.state.vp;
    lod_params p;
    p.t_left = vp.t0 + offset;
    p.npp = vp.npp;
    p.width = width;
    ImFont* font = ImGui::GetFont();
    const float fs = ImGui::GetFontSize() * (rh < sz_.row_h ? 0.85f : 1.0f);
    const std::uint32_t fi = search_mark_painter::active(ctx.state) ? file_index(ctx.doc, f) : 0;
    for (int d = 0; d < rows; ++d) {
        const row_view row = f.row(ti, static_cast<std::uint16_t>(d));
        const float ry0 = y + d * rh + 1, ry1 = y + (d + 1) * rh - 1;
        // A slice's name when it is wide enough.
        auto label = [&](const tm::slice& s, float bx0, float bx1, ImU32 c) {
            if (bx1 - bx0 <= 28) return;
            std::string text = f.model.str(s.name);
            if (auto it = f.model.uint_arg(s, vocab::arg_key::iteration)) text += "  i" + std::to_string(*it);
            const float cx0 = std::max(bx0, x0) + 3, cx1 = std::min(bx1, x0 + width) - 2;
            if (cx1 - cx0 > 8) slice_label(dl, font, fs, text, cx0, cx1, ry0, ry1, text_colour_on(c));
        };
        // A slice drawn as itself gets a dark left edge, and its name.
        painter_.slice_row(dl, f, row, p, x0, ry0, ry1, [&](const lod_block& b, float bx0, float bx1, ImU32 c) {
            if (!b.merged() && bx1 - bx0 > 3) dl->AddLine(ImVec2(bx0, ry0), ImVec2(bx0, ry1), IM_COL32(0, 0, 0, 90));
            if (!b.merged()) label(row[b.first], bx0, bx1, c);
        });
        marks_.row(dl, ctx.state, fi, f, ti, static_cast<std::uint16_t>(d), p, x0, ry0, ry1, label);
    }
    // Selection outline.
    const selection& sel = ctx.state.sel;
    if (sel.valid() && !sel.ev.is_instant && sel.ev.track == ti && &f == ctx.doc.files[sel.file].get()) {
        const tm::slice& s = f.model.tracks[ti].slices[sel.ev.index];
        const float sx0 = x0 + static_cast<float>(vp.to_px(static_cast<double>(s.begin) - offset));
        const float sx1 = std::max(sx0 + 2, x0 + static_cast<float>(vp.to_px(static_cast<double>(s.end) - offset)));
        if (sx1 >= x0 - 4 && sx0 <= x0 + width + 4) {
            const float sy = y + s.depth * rh;
            dl->AddRect(ImVec2(std::max(sx0, x0 - 3) - 1, sy - 1), ImVec2(std::min(sx1, x0 + width + 3) + 1, sy + rh + 1),
                        IM_COL32(255, 255, 255, 255), 0, 0, 2.0f);
        }
    }
}

void timeline_view::draw_instants(view_context& ctx, ImDrawList* dl, const loaded_file& f, std::uint32_t ti, float y,
                                  double offset, float x0, float width) {
    const viewport& vp = ctx.state.vp;
    const auto& v = f.model.tracks[ti].instants;
    if (v.empty()) return;
    lod_params p;
    p.t_left = vp.t0 + offset;
    p.npp = vp.npp;
    p.width = width;
    // A lone instant is a triangle; a bucket of several is a bar whose height grows with the count
    // (log scale), so that a busy lane zoomed out reads as a density, not a solid band.
    instant_buckets(v, f.instant_of_string.data(), p, 3, buckets_);
    const float bottom = y + sz_.instant_h - 1;
    for (const instant_bucket& b : buckets_) {
        const ImU32 c = instant_colour(b.kind);
        if (b.count == 1) {
            const tm::instant& in = v[b.first];
            if (b.kind == instant_kind::other && f.model.str(in.name) == vocab::run) continue;
            const float x = x0 + static_cast<float>((static_cast<double>(in.ts) - p.t_left) / vp.npp);
            dl->AddTriangleFilled(ImVec2(x, y + 1), ImVec2(x - 3.5f, bottom - 1), ImVec2(x + 3.5f, bottom - 1), c);
        } else {
            const float h = (sz_.instant_h - 2) * std::min(1.0f, 0.3f + 0.7f * std::log2(static_cast<float>(b.count)) / 8);
            dl->AddRectFilled(ImVec2(x0 + static_cast<float>(b.x0), bottom - h),
                              ImVec2(x0 + static_cast<float>(b.x1) - 0.5f, bottom), c);
        }
    }
    if (search_mark_painter::active(ctx.state)) marks_.lane(dl, ctx.state, file_index(ctx.doc, f), f, ti, p, x0, y, bottom);
    const double tl = p.t_left, tr = tl + width * vp.npp;
    for (auto k : f.lost_instants[ti]) {   // always drawn
        const double t = static_cast<double>(v[k].ts);
        if (t < tl - vp.npp || t > tr) continue;
        const float x = x0 + static_cast<float>((t - tl) / vp.npp);
        dl->AddRectFilled(ImVec2(x - 1.5f, y - 60 < 0 ? y : y - (sz_.row_h)), ImVec2(x + 1.5f, y + sz_.instant_h),
                          col_events_lost);
    }
    // The selected instant: a larger outlined marker and a line across the track.
    const selection& sel = ctx.state.sel;
    if (sel.valid() && sel.ev.is_instant && sel.ev.track == ti && &f == ctx.doc.files[sel.file].get()) {
        const float x = x0 + static_cast<float>((static_cast<double>(v[sel.ev.index].ts) - tl) / vp.npp);
        const float top = track_y_[sel.file][ti];
        dl->AddLine(ImVec2(x, top), ImVec2(x, bottom), IM_COL32(255, 255, 255, 150), 1.0f);
        dl->AddTriangleFilled(ImVec2(x, y - 2), ImVec2(x - 6, bottom + 1), ImVec2(x + 6, bottom + 1),
                              instant_colour(f.instant_of_string[v[sel.ev.index].name]));
        dl->AddTriangle(ImVec2(x, y - 2), ImVec2(x - 6, bottom + 1), ImVec2(x + 6, bottom + 1), IM_COL32(255, 255, 255, 255),
                        2.0f);
    }
}

void timeline_view::draw_counter(ImDrawList* dl, const loaded_file& f, std::uint32_t ti, float y, double offset, float x0,
                                 float width, const viewport& vp) {
    lod_params p;
    p.t_left = vp.t0 + offset;
    p.npp = vp.npp;
    p.width = width;
    // The graph under the "max" label.
    painter_.counter(dl, f, ti, p, x0, y + ImGui::GetFontSize() * 0.8f, y + sz_.counter_h - 3,
                     {rgb(0x4E79A7, 110), rgb(0x9FD0FF), true});
    const std::string max = "max " + analysis::numbers::value(f.counter_max[ti]);
    dl->AddText(ImVec2(x0 + 4, y), IM_COL32(150, 150, 160, 255), max.c_str());
}

ImVec2 timeline_view::event_pos(const view_context& ctx, std::uint32_t file, const tm::event_ref& e, float x0,
                                bool& ok) const {
    ok = false;
    if (!e.valid() || file >= track_y_.size() || e.track >= track_y_[file].size()) return {};
    const float ty = e.is_instant ? lane_y_[file][e.track] : track_y_[file][e.track];
    if (std::isnan(ty)) return {};
    const loaded_file& f = *ctx.doc.files[file];
    const double off = display_offset_of(ctx.doc, file, e.track, ctx.state.align_runs);
    const double t = static_cast<double>(f.event_ts(e)) - off;
    float y = ty;
    if (e.is_instant) y += sz_.instant_h * 0.5f;
    else y += (f.model.tracks[e.track].slices[e.index].depth + 0.5f) * sz_.row_h;
    ok = true;
    return ImVec2(x0 + static_cast<float>(ctx.state.vp.to_px(t)), y);
}

void timeline_view::draw_flows(view_context& ctx, ImDrawList* dl, float x0, float width, float cy0, float cy1) {
    dl->PushClipRect(ImVec2(x0, cy0), ImVec2(x0 + width, cy1), true);
    const view_state& st = ctx.state;
    auto one = [&](std::uint32_t file, const tm::flow& fl, float thick, unsigned alpha, bool highlighted) {
        bool ok1 = false, ok2 = false;
        const ImVec2 a = event_pos(ctx, file, fl.from, x0, ok1), b = event_pos(ctx, file, fl.to, x0, ok2);
        if (!ok1 || !ok2) return;
        const loaded_file& f = *ctx.doc.files[file];
        instant_kind k = instant_kind::other;
        if (fl.from.is_instant) k = f.instant_of_string[f.model.tracks[fl.from.track].instants[fl.from.index].name];
        const ImU32 c = (flow_colour(k) & 0x00FFFFFF) | (alpha << 24);
        flow_arrow(dl, a, b, c, thick, highlighted);
    };
    if (st.all_flows) {
        const viewport& vp = st.vp;
        for (std::uint32_t fi = 0; fi < ctx.doc.files.size(); ++fi) {
            const loaded_file& f = *ctx.doc.files[fi];
            // Every run of the file on its own offset: use the widest window (aligned runs differ).
            double lo = 1e300, hi = -1e300;
            for (const auto& rr : ctx.doc.runs) {
                if (rr.file != fi) continue;
                const double off = display_offset(ctx.doc, rr, st.align_runs);
                lo = std::min(lo, vp.t0 + off);
                hi = std::max(hi, vp.t1() + off);
            }
            if (lo > hi) continue;
            const auto& ft = f.flow_time;
            std::size_t i =
                static_cast<std::size_t>(std::lower_bound(ft.begin(), ft.end(), lo - vp.width * vp.npp * 0.25) - ft.begin());
            int drawn = 0;
            while (i < ft.size() && static_cast<double>(ft[i]) < hi && drawn < 4000) {
                one(fi, f.model.flows[f.flows_by_time[i]], 1.6f, 170, false);
                ++drawn;
                // At most a few arrows per pixel column: skip the rest of this column.
                const double next = static_cast<double>(ft[i]) + vp.npp;
                std::size_t j = i + 1;
                if (j < ft.size() && static_cast<double>(ft[j]) < next && j + 4 < ft.size())
                    j = static_cast<std::size_t>(
                        std::lower_bound(ft.begin() + static_cast<std::ptrdiff_t>(j), ft.end(), next) - ft.begin());
                i = j;
            }
        }
    }
    // The selection's flows on top, highlighted: thicker, opaque, over a dark edge.
    if (st.sel.valid())
        for (const flow_link& l : st.sel_flows)
            one(st.sel.file, ctx.doc.files[st.sel.file]->model.flows[l.flow], 3.0f, 255, true);
    dl->PopClipRect();
}

void timeline_view::tooltip(view_context& ctx, const selection& s) {
    const loaded_file& f = *ctx.doc.files[s.file];
    const tm::trace_model& m = f.model;
    const tm::track& t = m.tracks[s.ev.track];
    const double off = display_offset_of(ctx.doc, s.file, s.ev.track, ctx.state.align_runs);
    ImGui::BeginTooltip();
    const tm::model_arg *a0, *a1;
    if (s.ev.is_instant) {
        const tm::instant& in = t.instants[s.ev.index];
        ImGui::Text("%s", m.str(in.name).c_str());
        ImGui::TextDisabled("instant on %s", t.name.c_str());
        ImGui::Text("at %s", format_duration(static_cast<double>(in.ts) - off, 3).c_str());
        a0 = m.args_begin(in);
        a1 = m.args_end(in);
    } else {
        const tm::slice& sl = t.slices[s.ev.index];
        ImGui::Text("%s", m.str(sl.name).c_str());
        const colour_key k = f.key(sl);
        if (is_stage(k))
            ImGui::TextColored(ImColor(key_colour(k)), "stage %u  %s", unsigned(k), legend_stage_name(ctx.doc, k).c_str());
        ImGui::TextDisabled("%s%s", t.name.c_str(), sl.unterminated ? "  (unterminated)" : "");
        ImGui::Text("start %s   duration %s", format_duration(static_cast<double>(sl.begin) - off, 3).c_str(),
                    format_duration(static_cast<double>(sl.duration()), 3).c_str());
        if (static_cast<double>(sl.duration()) < ctx.state.vp.npp)
            ImGui::TextDisabled("narrower than a pixel here: zoom in to see its neighbours");
        a0 = m.args_begin(sl);
        a1 = m.args_end(sl);
    }
    // A folded run's user annotations can be thousands of values (docs/tracing.md, "User
    // annotations"): the tooltip shows the first ones, the details panel all.
    constexpr std::ptrdiff_t tooltip_args = 16;
    const std::ptrdiff_t more = a1 - a0 > tooltip_args ? a1 - a0 - (tooltip_args - 1) : 0;
    for (auto* a = a0; a != a1 - more; ++a) {
        const std::string v = m.arg_text(*a);
        if (v.size() > 80) ImGui::Text("%s: %.80s…", m.str(a->name).c_str(), v.c_str());
        else ImGui::Text("%s: %s", m.str(a->name).c_str(), v.c_str());
    }
    if (more) ImGui::TextDisabled("%td more annotations in the details panel", more);
    ImGui::EndTooltip();
}

// The header elides its text with "…" to the width it has (Perfetto's track titles do the same)
// and shows all of it in a tooltip.
void timeline_view::run_header(view_context& ctx, const track_area& a, std::uint32_t ri, float y) {
    const document& doc = ctx.doc;
    const float x_labels = a.x_labels, x0 = a.x0, width = a.width;
    const run_ref& rr = doc.runs[ri];
    const tm::trace_model& m = doc.files[rr.file]->model;
    const double off = display_offset(doc, rr, ctx.state.align_runs);
    // A run on virtual workers: its times are not this machine's; the header says so in colour too.
    const ImU32 header_bg = rr.virtual_badge.empty() ? IM_COL32(52, 56, 70, 255) : IM_COL32(88, 56, 120, 255);
    a.dl->AddRectFilled(ImVec2(x_labels, y), ImVec2(x0 + width, y + sz_.header_h), header_bg);
    std::string h = rr.title + "   " + format_duration(static_cast<double>(rr.end - rr.start)) + ", " +
                    std::to_string(rr.workers.size()) + " workers";
    if (rr.run != tm::no_index && m.runs[rr.run].dag.K) h += ", K = " + std::to_string(m.runs[rr.run].dag.K);
    if (rr.run != tm::no_index && m.runs[rr.run].dag.iterations)
        h += ", " + std::to_string(m.runs[rr.run].dag.iterations) + " iterations";
    if (arrangement_.runs[ri].collapsed) h += "   (collapsed: click to expand)";
    // A disclosure triangle: a click on the name column collapses or expands the run (track_controls).
    const float u = sz_.pad / 4;
    disclosure_triangle(a.dl, x_labels + 6 * u, y + sz_.header_h * 0.5f, u, !arrangement_.runs[ri].collapsed);
    header_rows_.push_back({y, y + sz_.header_h, ri});
    const float tx = x_labels + 12 * u, room = x0 + width - sz_.pad - tx;
    run_header_title(a, ctx.state.layout, "timeline run header", h, tx, room, y, sz_.header_h);
    // Where the run lies on the axis.
    const float rx0 = x0 + static_cast<float>(ctx.state.vp.to_px(static_cast<double>(rr.start) - off));
    const float rx1 = x0 + static_cast<float>(ctx.state.vp.to_px(static_cast<double>(rr.end) - off));
    run_extent_bar(a, y, sz_.header_h, rx0, rx1);
}

selection timeline_view::hit_at(const view_context& ctx, ImVec2 mp, float x0) const {
    const double t_disp = ctx.state.vp.to_ns(mp.x - x0), tol = 3 * ctx.state.vp.npp;
    for (const hit_region& h : hits_) {
        if (mp.y < h.y0 || mp.y >= h.y1) continue;
        const loaded_file& f = *ctx.doc.files[h.file];
        const double t = t_disp + h.offset;
        if (h.depth < 0) {
            const std::size_t k = hit_instant(f.model.tracks[h.track].instants, t, tol);
            if (k != npos) return {h.file, {h.track, static_cast<std::uint32_t>(k), true}};
        } else {
            const row_view row = f.row(h.track, static_cast<std::uint16_t>(h.depth));
            const std::size_t k = hit_row(row, t, tol);
            if (k != npos) return {h.file, {h.track, row.slice_index(k), false}};
        }
        break;
    }
    return {};
}

// The keys of the timeline (docs/viewer.md): W/S zoom at the mouse, A/D pan, F frames the
// selection, 0/Home shows everything, / or Ctrl+F searches, M marks the selection's range.
void timeline_view::keys(view_context& ctx, bool in_time, float mouse_px, float width) {
    view_state& st = ctx.state;
    const ImGuiIO& io = ImGui::GetIO();
    if (io.WantTextInput) return;
    // A new bookmark's note is about to take the keyboard (ImGui gives it a frame later): what is
    // typed meanwhile is its text, not keys (a few frames at most: the details panel may be hidden).
    if (st.bookmark_edit && ++note_wait_ <= 8) return take_note_text(ctx);
    st.bookmark_edit.reset();
    note_wait_ = 0;
    const double dt = std::min(0.1, static_cast<double>(io.DeltaTime));
    const double zx = in_time ? mouse_px : width * 0.5;
    // A tap zooms one step; held past zoom_hold_after_s, the zoom goes on smoothly.
    auto zoom_key = [&](int key, double tap) {
        if (ImGui::IsKeyPressed(key, false)) st.vp.zoom_at(zx, tap);
        else if (ImGui::IsKeyDown(key) && io.KeysDownDuration[key] > zoom_hold_after_s)
            st.vp.zoom_at(zx, std::pow(tap < 1 ? zoom_held_per_s : 1 / zoom_held_per_s, dt));
    };
    if (!io.KeyCtrl) {
        zoom_key('W', zoom_tap);
        zoom_key('S', 1 / zoom_tap);
        if (ImGui::IsKeyDown('A')) st.vp.pan_px(width * 1.2 * dt);
        if (ImGui::IsKeyDown('D')) st.vp.pan_px(-width * 1.2 * dt);
        if (ImGui::IsKeyPressed('F', false))
            if (auto r = selection_range(ctx.doc, st.sel, st.align_runs)) st.frame_request = r;
        if (ImGui::IsKeyPressed('M', false)) {
            // Mark the selection's range on its track, as Perfetto's M; again on the same range: unmark.
            if (auto r = selection_range(ctx.doc, st.sel, st.align_runs)) {
                const area_selection a{r->first, r->second, {{st.sel.file, st.sel.ev.track}}};
                if (st.area && *st.area == a) st.area.reset();
                else st.area = a;
            }
        }
        bookmark_keys(ctx);   // B, [ and ]
    }
    if (ImGui::IsKeyPressed('0', false) || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Home), false))
        st.request_frame_all(ctx.doc);
    // '/' by the character it types (Shift+/ types '?', the help), so that it works on any layout.
    const bool slash = std::find(io.InputQueueCharacters.begin(), io.InputQueueCharacters.end(), ImWchar('/')) !=
                       io.InputQueueCharacters.end();
    if (slash || (io.KeyCtrl && ImGui::IsKeyPressed('F', false))) focus_search_ = true;
}

// A selection made elsewhere (the DAG, the stage graph, the details panel, a search, a lesson step)
// is brought into view when the timeline shows it (view_state::bring_into_view).
void timeline_view::reveal_selection(view_context& ctx) {
    view_state& st = ctx.state;
    if (st.sel == last_seen_sel_) return;
    last_seen_sel_ = st.sel;
    const auto r = selection_range(ctx.doc, st.sel, st.align_runs);
    if (!r) return;
    if (st.frame_request)
        st.scroll_to_selection = true;   // whoever selected it also said what to show (a lesson step, --select)
    else st.bring_into_view(*r);
}

// A frame of the timeline, in phases: the toolbar, the axis (viewport, ruler), the tracks laid out
// run by run (which also records where everything is, for hits, areas and flows), the overlays
// drawn over all tracks, then the mouse and the keys.
void timeline_view::draw(view_context& ctx) {
    sz_ = timeline_metrics_for(ImGui::GetFontSize());
    arrangement_ = arrange_tracks(ctx.doc, ctx.state.arranged, ctx.state.track_filter);
    toolbar(ctx);
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float width = std::max(50.f, avail.x - sz_.label_w);
    update_viewport(ctx, width);
    const double base = ctx.state.ruler_base();
    const ruler_area ruler{ImGui::GetCursorScreenPos(), sz_.label_w, width, sz_.ruler_h};
    const ruler_layout ticks = ruler_ticks(ctx.state.vp.t0, ctx.state.vp.t1(), width, base, imgui_text_width);
    time_ruler(ctx, ruler, ticks);

    ImGui::PushStyleColor(ImGuiCol_ChildBg, col_background);
    ImGui::BeginChild("##tracks", ImVec2(0, 0), false, ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_NoMove);
    const track_area fr = track_area::of_window(sz_.label_w, width);
    const float y_start = ImGui::GetCursorScreenPos().y;
    reset_layout(ctx);
    // Grid lines behind the tracks, at the ruler's major ticks.
    for (const ruler_tick& t : ticks.ticks)
        if (t.major)
            fr.dl->AddLine(ImVec2(fr.x0 + static_cast<float>(t.x), fr.clip_y0),
                           ImVec2(fr.x0 + static_cast<float>(t.x), fr.clip_y1), IM_COL32(255, 255, 255, 14));
    // The pinned band at the top, the runs scrolling under it (their regions cut to below it).
    track_area scrolled = fr;
    scrolled.clip_y0 += layout_pinned(ctx, fr);
    const std::size_t first_hit = hits_.size(), first_region = track_regions_.size();
    fr.dl->PushClipRect(ImVec2(fr.x_labels, scrolled.clip_y0), ImVec2(fr.x0 + fr.width, fr.clip_y1), true);
    float y = y_start + (scrolled.clip_y0 - fr.clip_y0);
    for (std::uint32_t ri = 0; ri < ctx.doc.runs.size(); ++ri) y = layout_run(ctx, scrolled, ri, y);
    fr.dl->PopClipRect();
    clip_regions(hits_, first_hit, scrolled.clip_y0, fr.clip_y1);
    clip_regions(track_regions_, first_region, scrolled.clip_y0, fr.clip_y1);
    if (ctx.doc.runs.empty())
        fr.dl->AddText(ImVec2(fr.x0 + 10, y + 10), IM_COL32(200, 200, 200, 255), "no events in this trace");
    draw_overlays(ctx, fr, scrolled.clip_y0);
    track_controls_.mouse(ctx, fr, scrolled.clip_y0, track_regions_, header_rows_);
    // Content size for scrolling.
    ImGui::SetCursorScreenPos(ImVec2(fr.x_labels, y_start));
    ImGui::Dummy(ImVec2(sz_.label_w + width - 4, std::max(1.f, y - y_start)));

    mouse(ctx, fr, ruler, base);
    if (ImGui::IsWindowHovered() || ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) ||
        !ImGui::IsAnyItemActive())
        keys(ctx, fr.hovered(), ImGui::GetIO().MousePos.x - fr.x0, width);
    scroll_to_selection(ctx, scrolled);
    ImGui::EndChild();
    ImGui::PopStyleColor();
}

// The viewport takes the time area's width (a resized window shows the same time range over it),
// then what was asked of it since the last frame: a selection to reveal, a range to frame; it stays
// within the document's time.
void timeline_view::update_viewport(view_context& ctx, float width) {
    view_state& st = ctx.state;
    const document& doc = ctx.doc;
    st.vp.resize(width);
    // An area over tracks of files that were closed since: gone with them.
    if (st.area && std::any_of(st.area->tracks.begin(), st.area->tracks.end(), [&](const track_ref& t) {
            return t.file >= doc.files.size() || t.track >= doc.files[t.file]->model.tracks.size();
        }))
        st.area.reset();
    reveal_selection(ctx);
    if (st.frame_request) {
        st.vp.frame(st.frame_request->first, st.frame_request->second, timeline_frame_margin);
        st.frame_request.reset();
    }
    const double doc_span = st.align_runs ? [&] {
        double h = 1;
        for (const auto& r : doc.runs) h = std::max(h, static_cast<double>(r.end - r.start));
        return h;
    }() : std::max(1.0, static_cast<double>(doc.end - doc.start));
    st.vp.clamp(0, doc_span);
}

// The ruler counts from the marked area's start, else from the start of the axis (each run's start
// with aligned runs). A click on it puts the shared time cursor there (the DAG view replays to it).
void timeline_view::time_ruler(view_context& ctx, const ruler_area& ruler, const ruler_layout& ticks) {
    view_state& st = ctx.state;
    const ImGuiIO& io = ImGui::GetIO();
    const char* base_name = st.area                                    ? "from the mark"
                            : st.align_runs || ctx.doc.runs.size() < 2 ? "from the run start"
                                                                       : "from the first run";
    draw_time_ruler(ImGui::GetWindowDrawList(), ruler, ticks, base_name, st.vp, st.cursor);
    ImGui::InvisibleButton("##ruler", ImVec2(sz_.label_w + ruler.width, sz_.ruler_h));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Click to put the time cursor here (the DAG view replays to it)");
    draw_bookmark_flags(ctx, ImGui::GetWindowDrawList(), ruler);   // after: a flag's tooltip wins
    if (ImGui::IsItemClicked() && io.MousePos.x >= ruler.origin.x + sz_.label_w) {
        st.cursor = st.vp.to_ns(io.MousePos.x - ruler.origin.x - sz_.label_w);
        st.playing = false;
    }
}

// Forgets the last frame's layout: every track's y is unknown (NaN) until laid out again.
void timeline_view::reset_layout(view_context& ctx) {
    const document& doc = ctx.doc;
    if (laid_out_for_ != &doc || track_y_.size() != doc.files.size()) {
        track_y_.assign(doc.files.size(), {});
        lane_y_.assign(doc.files.size(), {});
        laid_out_for_ = &doc;
    }
    for (std::size_t fi = 0; fi < doc.files.size(); ++fi) {
        track_y_[fi].assign(doc.files[fi]->model.tracks.size(), NAN);
        lane_y_[fi].assign(doc.files[fi]->model.tracks.size(), NAN);
    }
    hits_.clear();
    track_regions_.clear();
    run_spans_.clear();
    header_rows_.clear();
    if (ctx.state.lines_open.size() != doc.runs.size()) ctx.state.lines_open.resize(doc.runs.size(), 1);
}

// A line or counter track with nothing to draw (a stage-graph run's unused control line and live
// iterations counter: an empty row, a flat "max 0") is left out (issue 37); workers always show.
bool drawn(const loaded_file& f, const run_track& t) {
    return (t.group != track_group::line && t.group != track_group::counter) || track_has_content(f.model.tracks[t.track]);
}

// Run ri from y down: its header, its workers, its line tracks (a collapsible group), its counters
// and its other tracks. Draws what is visible, records where everything is; returns the y after it.
float timeline_view::layout_run(view_context& ctx, const track_area& fr, std::uint32_t ri, float y) {
    const document& doc = ctx.doc;
    const run_ref& rr = doc.runs[ri];
    run_spans_.push_back({ri, y, 0});
    if (fr.visible(y, y + sz_.header_h)) run_header(ctx, fr, ri, y);
    run_layout rl{rr, *doc.files[rr.file], display_offset(doc, rr, ctx.state.align_runs), y + (sz_.header_h + 2)};
    bool lines_shown = false;   // the group's header goes before its first line track shown
    for (const run_track& t : arrangement_.runs[ri].shown) {
        if (!drawn(rl.f, t)) continue;
        if (t.group == track_group::line) {
            if (!lines_shown) lines_group(ctx, fr, ri, rl.y);
            lines_shown = true;
            if (!ctx.state.lines_open[ri]) continue;
        }
        if (t.group == track_group::counter) counter_track(ctx, fr, rl, t.track);
        else slice_track(ctx, fr, rl, t.track, t.group == track_group::worker ? sz_.row_h : sz_.line_h);
    }
    run_spans_.back().end_y = rl.y;
    return rl.y + sz_.gap * 2;
}

// The pinned tracks (model/track_arrangement.hpp) in a band at the top of the track area, which the
// other tracks scroll under, as Perfetto's pinned tracks; at most half the area high (the rest is
// cut). Returns the band's height.
float timeline_view::layout_pinned(view_context& ctx, const track_area& fr) {
    if (arrangement_.pinned.empty()) return 0;
    track_area band = fr;
    band.clip_y1 = fr.clip_y0 + (fr.clip_y1 - fr.clip_y0) * 0.5f;
    const std::size_t first_hit = hits_.size(), first_region = track_regions_.size();
    fr.dl->PushClipRect(ImVec2(fr.x_labels, band.clip_y0), ImVec2(fr.x0 + fr.width, band.clip_y1), true);
    float y = fr.clip_y0;
    for (const pinned_track& p : arrangement_.pinned) {
        const run_ref& rr = ctx.doc.runs[p.run];
        run_layout rl{rr, *ctx.doc.files[p.file], display_offset(ctx.doc, rr, ctx.state.align_runs), y};
        if (p.track.group == track_group::counter) counter_track(ctx, band, rl, p.track.track);
        else slice_track(ctx, band, rl, p.track.track, p.track.group == track_group::worker ? sz_.row_h : sz_.line_h);
        pinned_run_badge(ctx, band, p.run, y, rl.y);
        y = rl.y;
    }
    const float bottom = std::min(y, band.clip_y1) + 2;
    fr.dl->PopClipRect();
    fr.dl->AddLine(ImVec2(fr.x_labels, bottom - 1), ImVec2(fr.x0 + fr.width, bottom - 1), IM_COL32(120, 150, 220, 255), 2);
    clip_regions(hits_, first_hit, fr.clip_y0, bottom);
    clip_regions(track_regions_, first_region, fr.clip_y0, bottom);
    return bottom - fr.clip_y0;
}

// A track of slices (rows rh px high) and its instant lane, on the striped background, with its
// name in the label column; its rows and lane become hit regions.
void timeline_view::slice_track(view_context& ctx, const track_area& fr, run_layout& rl, std::uint32_t ti, float rh) {
    const float y = rl.y;
    const tm::track& t = rl.f.model.tracks[ti];
    const std::uint32_t file = rl.rr.file;
    const int rows = std::max<int>(1, t.slices.empty() ? 0 : t.max_depth + 1);
    const float h = (t.slices.empty() ? 0 : rows * rh) + (!t.instants.empty() ? sz_.instant_h : 0) + 4;
    const float th = std::max(h, rh + 4);
    track_y_[file][ti] = y + 2;
    lane_y_[file][ti] = y + 2 + (t.slices.empty() ? 0 : rows * rh);
    if (fr.visible(y, y + th)) {
        fr.dl->AddRectFilled(ImVec2(fr.x_labels, y), ImVec2(fr.x0 + fr.width, y + th),
                             (rl.stripe++ & 1) ? col_track_bg_a : col_track_bg_b);
        track_label(ctx, fr, y, std::min(th, rh + 4), t.name.c_str());
        fr.dl->PushClipRect(ImVec2(fr.x0, y), ImVec2(fr.x0 + fr.width, y + th), true);
        if (!t.slices.empty()) draw_slices(ctx, fr.dl, rl.f, ti, y + 2, rh, rows, rl.off, fr.x0, fr.width);
        draw_instants(ctx, fr.dl, rl.f, ti, lane_y_[file][ti], rl.off, fr.x0, fr.width);
        fr.dl->PopClipRect();
    }
    for (int d = 0; d < (t.slices.empty() ? 0 : rows); ++d)
        hits_.push_back({y + 2 + d * rh, y + 2 + (d + 1) * rh, file, ti, d, rl.off});
    if (!t.instants.empty()) hits_.push_back({lane_y_[file][ti], lane_y_[file][ti] + sz_.instant_h, file, ti, -1, rl.off});
    track_regions_.push_back({y, y + th, {file, ti}});
    rl.y += th;
}

// The header row of run ri's line tracks: a click opens or closes the group. Collapsed, the lines'
// events (flows, a search hit) sit on the header row. Moves y under it.
void timeline_view::lines_group(view_context& ctx, const track_area& fr, std::uint32_t ri, float& y) {
    view_state& st = ctx.state;
    const run_ref& rr = ctx.doc.runs[ri];
    const auto& shown = arrangement_.runs[ri].shown;   // the lines the filter and hiding leave
    const loaded_file& f = *ctx.doc.files[rr.file];
    const auto lines = std::count_if(shown.begin(), shown.end(),
                                     [&](const run_track& t) { return t.group == track_group::line && drawn(f, t); });
    char gl[64];
    *fmt::format_to_n(gl, sizeof gl - 1, "{} lines ({})", st.lines_open[ri] ? "v" : ">", lines).out = '\0';
    ImGui::SetCursorScreenPos(ImVec2(fr.x_labels, y));
    ImGui::PushID(static_cast<int>(ri));
    if (y >= fr.clip_y0 &&   // not under the pinned band
        ImGui::InvisibleButton("##lines", ImVec2(sz_.label_w, sz_.group_h)))
        st.lines_open[ri] = !st.lines_open[ri];
    ImGui::PopID();
    if (fr.visible(y, y + sz_.group_h)) {
        ImDrawList* dl = fr.dl;
        dl->AddRectFilled(ImVec2(fr.x_labels, y), ImVec2(fr.x0 + fr.width, y + sz_.group_h), IM_COL32(44, 46, 54, 255));
        const float u = sz_.pad / 4;   // a pixel at scale 1
        disclosure_triangle(dl, fr.x_labels + 6 * u, y + sz_.group_h * 0.5f, u, st.lines_open[ri]);
        *fmt::format_to_n(gl, sizeof gl - 1, "lines ({})", lines).out = '\0';
        track_label(ctx, fr, y, sz_.group_h, gl, IM_COL32(180, 180, 190, 255));
    }
    for (auto ti : rr.lines)
        if (std::isnan(track_y_[rr.file][ti])) {   // (a pinned line keeps its place in the band)
            track_y_[rr.file][ti] = y;
            lane_y_[rr.file][ti] = y;
        }
    y += sz_.group_h;
}

void timeline_view::counter_track(view_context& ctx, const track_area& fr, run_layout& rl, std::uint32_t ti) {
    const float y = rl.y;
    track_y_[rl.rr.file][ti] = y;
    if (fr.visible(y, y + sz_.counter_h)) {
        fr.dl->AddRectFilled(ImVec2(fr.x_labels, y), ImVec2(fr.x0 + fr.width, y + sz_.counter_h), IM_COL32(33, 35, 42, 255));
        track_label(ctx, fr, y, sz_.counter_h, rl.f.model.tracks[ti].name.c_str());
        fr.dl->PushClipRect(ImVec2(fr.x0, y), ImVec2(fr.x0 + fr.width, y + sz_.counter_h), true);
        draw_counter(fr.dl, rl.f, ti, y, rl.off, fr.x0, fr.width, ctx.state.vp);
        fr.dl->PopClipRect();
    }
    track_regions_.push_back({y, y + sz_.counter_h, {rl.rr.file, ti}});
    rl.y += sz_.counter_h;
}

// A track's name in the label column, elided to it; hover for the whole name.
void timeline_view::track_label(view_context& ctx, const track_area& fr, float ly, float h, const char* text, ImU32 c) {
    if (!fr.visible(ly, ly + h)) return;
    const float tx = fr.x_labels + sz_.pad * 3.5f, room = fr.x0 - sz_.pad - tx;
    const std::string shown = elide_to_width(text, room, imgui_text_width);
    ctx.state.layout.check("timeline track label", shown, imgui_text_width(shown), room);
    fr.dl->AddText(ImVec2(tx, ly + (h - ImGui::GetFontSize()) * 0.5f), c, shown.c_str());
    const ImVec2 mp = ImGui::GetIO().MousePos;
    if (shown != text && ImGui::IsWindowHovered() && mp.x >= fr.x_labels && mp.x < fr.x0 && mp.y >= ly && mp.y < ly + h)
        ImGui::SetTooltip("%s", text);
}

// Over all tracks: the label column's separator, the flows, the time cursor and the sticky header.
void timeline_view::draw_overlays(view_context& ctx, const track_area& fr, float sticky_top) {
    ImDrawList* dl = fr.dl;
    const float x0 = fr.x0, clip_y0 = fr.clip_y0, clip_y1 = fr.clip_y1;
    // Label column separator, not across the run headers: their text runs on past the column.
    float sep_y = clip_y0;
    for (const run_span& r : run_spans_) {
        if (r.header_y > sep_y)
            dl->AddLine(ImVec2(x0 - 0.5f, sep_y), ImVec2(x0 - 0.5f, r.header_y), IM_COL32(90, 90, 100, 255));
        sep_y = std::max(sep_y, r.header_y + sz_.header_h);
    }
    if (sep_y < clip_y1) dl->AddLine(ImVec2(x0 - 0.5f, sep_y), ImVec2(x0 - 0.5f, clip_y1), IM_COL32(90, 90, 100, 255));

    draw_flows(ctx, dl, x0, fr.width, clip_y0, clip_y1);
    if (ctx.state.cursor) {
        const double px = ctx.state.vp.to_px(*ctx.state.cursor);
        if (px >= 0 && px <= fr.width)
            dl->AddLine(ImVec2(x0 + static_cast<float>(px), clip_y0), ImVec2(x0 + static_cast<float>(px), clip_y1),
                        col_time_cursor, 1.5f);
    }
    draw_bookmark_lines(ctx, fr);
    // Sticky run header: the run whose tracks are under the top edge keeps its header there, pushed
    // up by the next run's header, so that every visible track's run is named.
    for (const run_span& r : run_spans_)
        if (r.header_y < sticky_top && r.end_y > sticky_top) {
            const float hy = std::min(sticky_top, r.end_y - sz_.header_h);
            run_header(ctx, fr, r.run, hy);
            dl->AddLine(ImVec2(fr.x_labels, hy + sz_.header_h), ImVec2(x0 + fr.width, hy + sz_.header_h),
                        IM_COL32(0, 0, 0, 160), 2);
        }
}

// The mouse over the time area: hover (tooltip, the time readout on the ruler), the wheel (zoom;
// Shift: scroll), a press that starts a pan or (Shift) an area selection, and those drags.
void timeline_view::mouse(view_context& ctx, const track_area& fr, const ruler_area& ruler, double base) {
    view_state& st = ctx.state;
    const ImGuiIO& io = ImGui::GetIO();
    const ImVec2 mp = io.MousePos;
    const bool over = fr.hovered();
    st.hover = {};
    if (over && !dragging_ && !area_dragging_) {
        st.hover = hit_at(ctx, mp, fr.x0);
        if (!lost_events_tooltip(ctx, track_regions_, mp, fr.x0) && st.hover.valid()) tooltip(ctx, st.hover);
    }
    if (over || area_dragging_) draw_time_readout(ImGui::GetForegroundDrawList(), ruler, mp.x, fr.clip_y1, st.vp, base);
    if (over && io.MouseWheel != 0) {
        if (io.KeyShift) ImGui::SetScrollY(ImGui::GetScrollY() - io.MouseWheel * 60);
        else st.vp.zoom_at(mp.x - fr.x0, std::pow(0.8, io.MouseWheel));
    }
    if (over && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
        if (io.KeyShift) {   // an area selection: the time and tracks between here and where the mouse is let go
            area_dragging_ = true;
            area_from_t_ = st.vp.to_ns(mp.x - fr.x0);
            area_from_y_ = mp.y;
        } else {
            dragging_ = true;
            drag_moved_ = false;
            drag_origin_ = mp;
        }
    }
    area_drag(ctx, fr, ruler);
    if (dragging_) pan_drag(ctx, fr);
}

// An area selection being drawn follows the mouse and is kept when the button is let go (a
// Shift+click without a drag clears it); the area is drawn over its tracks.
void timeline_view::area_drag(view_context& ctx, const track_area& fr, const ruler_area& ruler) {
    view_state& st = ctx.state;
    const ImVec2 mp = ImGui::GetIO().MousePos;
    if (area_dragging_) {
        const double t_now = st.vp.to_ns(std::clamp(mp.x, fr.x0, fr.x0 + fr.width) - fr.x0);
        const auto a =
            area_between(track_regions_, area_from_t_, t_now, area_from_y_, std::clamp(mp.y, fr.clip_y0, fr.clip_y1 - 1));
        if (!ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
            area_dragging_ = false;
            st.area = a && std::fabs(st.vp.to_px(a->t1) - st.vp.to_px(a->t0)) >= 2 ? a : std::nullopt;
        } else if (a) {
            draw_area(st.vp, fr.dl, track_regions_, *a, fr.x0, fr.width, fr.clip_y0, fr.clip_y1, ruler);
        }
    }
    if (st.area && !area_dragging_)
        draw_area(st.vp, fr.dl, track_regions_, *st.area, fr.x0, fr.width, fr.clip_y0, fr.clip_y1, ruler);
}

// A drag pans time and scrolls the tracks once it has moved 3 px; let go before that, it was a
// click: it selects what is under it.
void timeline_view::pan_drag(view_context& ctx, const track_area& fr) {
    view_state& st = ctx.state;
    const ImGuiIO& io = ImGui::GetIO();
    const ImVec2 mp = io.MousePos;
    if (ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
        const ImVec2 d = io.MouseDelta;
        if (std::fabs(mp.x - drag_origin_.x) + std::fabs(mp.y - drag_origin_.y) > 3) drag_moved_ = true;
        if (drag_moved_) {
            st.vp.pan_px(d.x);
            ImGui::SetScrollY(ImGui::GetScrollY() - d.y);
        }
    } else {
        dragging_ = false;
        if (!drag_moved_) {   // a click: select what is under it (it is in view: no need to bring it there)
            st.select(ctx.doc, hit_at(ctx, mp, fr.x0));
            last_seen_sel_ = st.sel;
        }
    }
}

// A selection that asked to be scrolled to (view_state::scroll_to_selection) is centred vertically
// when it is not already well inside the visible tracks.
void timeline_view::scroll_to_selection(view_context& ctx, const track_area& fr) {
    view_state& st = ctx.state;
    if (!st.scroll_to_selection || !st.sel.valid()) return;
    bool ok = false;
    const ImVec2 p = event_pos(ctx, st.sel.file, st.sel.ev, fr.x0, ok);
    const bool pinned = std::any_of(arrangement_.pinned.begin(), arrangement_.pinned.end(), [&](const pinned_track& t) {
        return t.file == st.sel.file && t.track.track == st.sel.ev.track;
    });   // in the band: always in view
    if (ok && !pinned && (p.y < fr.clip_y0 + 20 || p.y > fr.clip_y1 - 20))
        ImGui::SetScrollY(ImGui::GetScrollY() + (p.y - (fr.clip_y0 + fr.clip_y1) * 0.5f));
    st.scroll_to_selection = false;
}

}   // namespace

std::unique_ptr<view> make_timeline_view() { return std::make_unique<timeline_view>(); }

}   // namespace pipescope::viewer
