// The timeline: per run a header, a track per worker (node slices by stage, scheduler states,
// instants), the run's line tracks (collapsible) and counters, flows as arrows, a time ruler.
// Everything drawn per frame is bounded by the visible pixels (see model/lod.hpp).
#include "legend.hpp"
#include "palette.hpp"
#include "view.hpp"

#include "../model/lod.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

namespace pipescope::viewer {
namespace {

constexpr float label_w = 168, row_h = 18, instant_h = 10, line_h = 14, counter_h = 40, header_h = 24,
                ruler_h = 36, group_h = 18, gap = 6;

struct hit_region {
    float y0, y1;
    std::uint32_t file, track;
    int depth;        // slice row, or -1: the instant lane
    double offset;    // display offset of the run
};

std::string short_num(double v) {
    char b[32];
    if (v == std::floor(v) && std::fabs(v) < 1e15) std::snprintf(b, sizeof b, "%.0f", v);
    else std::snprintf(b, sizeof b, "%.3g", v);
    return b;
}

class timeline_view final : public view {
public:
    void draw(view_context& ctx) override;

private:
    std::vector<lod_block> blocks_;
    std::vector<counter_column> ccols_;
    std::vector<hit_region> hits_;
    std::vector<std::vector<float>> track_y_;   // per file, per track: y of the track's first row (screen), or NaN
    std::vector<std::vector<float>> lane_y_;    // per file, per track: y of the instant lane
    bool dragging_ = false, drag_moved_ = false;
    ImVec2 drag_origin_{};
    const document* laid_out_for_ = nullptr;

    void toolbar(view_context& ctx);
    void ruler(view_context& ctx, ImVec2 origin, float width);
    void draw_slices(view_context& ctx, ImDrawList* dl, const loaded_file& f, std::uint32_t ti, float y, float rh,
                     int rows, double offset, float x0, float width, bool labels);
    void draw_instants(ImDrawList* dl, const loaded_file& f, std::uint32_t ti, float y, double offset, float x0,
                       float width, const viewport& vp);
    void draw_counter(ImDrawList* dl, const loaded_file& f, std::uint32_t ti, float y, double offset, float x0,
                      float width, const viewport& vp);
    void draw_flows(view_context& ctx, ImDrawList* dl, float x0, float width, float clip_y0, float clip_y1);
    void tooltip(view_context& ctx, const selection& s);
    ImVec2 event_pos(const view_context& ctx, std::uint32_t file, const tm::event_ref& e, float x0, bool& ok) const;
};

void timeline_view::toolbar(view_context& ctx) {
    view_state& st = ctx.state;
    if (ImGui::Checkbox("Align runs", &st.align_runs)) st.request_frame_all(ctx.doc);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Each run starts at 0 (off: absolute time, one axis for all runs)");
    ImGui::SameLine();
    ImGui::Checkbox("All flows", &st.all_flows);
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Draw every flow arrow in view (off: only the selection's)");
    ImGui::SameLine();
    if (ImGui::Button("Fit")) st.request_frame_all(ctx.doc);
    ImGui::SameLine();
    ImGui::TextDisabled("|");
    // Legend: the stage indices that occur in the document (names from the run metadata), then
    // the states.
    stage_legend(ctx.doc, false);
    legend_swatch(key_colour(key_idle), "idle", "worker looking for work (failed steals in the details)");
    legend_swatch(key_colour(key_parked), "parked", "worker asleep until woken");
    legend_swatch(key_colour(key_waiting), "waiting", "line: iteration waiting at a stage / to retire");
    legend_swatch(key_colour(key_throttled), "throttled", "control: the loop waits for the oldest iteration (K)");
    legend_swatch(col_events_lost, "lost", "events lost: the recorder's buffer ran dry here");
}

void timeline_view::ruler(view_context& ctx, ImVec2 o, float width) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const viewport& vp = ctx.state.vp;
    dl->AddRectFilled(o, ImVec2(o.x + label_w + width, o.y + ruler_h), IM_COL32(24, 25, 29, 255));
    const double step = nice_step(vp.npp, 110);
    const double minor = step / 5;
    const float x0 = o.x + label_w;
    char buf[64];
    for (double t = std::ceil(vp.t0 / minor) * minor; t <= vp.t1(); t += minor) {
        const float x = x0 + static_cast<float>(vp.to_px(t));
        const bool major = std::fabs(std::remainder(t, step)) < minor * 0.5;
        dl->AddLine(ImVec2(x, o.y + ruler_h - (major ? 12 : 5)), ImVec2(x, o.y + ruler_h), IM_COL32(170, 170, 180, 255));
        if (major) {
            const std::string s = format_tick(t, step);
            dl->AddText(ImVec2(x + 3, o.y + 3), IM_COL32(220, 220, 225, 255), s.c_str());
        }
    }
    std::snprintf(buf, sizeof buf, "%s / div", format_duration(step).c_str());
    dl->AddText(ImVec2(o.x + 6, o.y + 3), IM_COL32(150, 150, 160, 255), buf);
    std::snprintf(buf, sizeof buf, "view %s", format_duration(vp.width * vp.npp).c_str());
    dl->AddText(ImVec2(o.x + 6, o.y + 18), IM_COL32(120, 120, 130, 255), buf);
    dl->AddLine(ImVec2(o.x, o.y + ruler_h - 0.5f), ImVec2(o.x + label_w + width, o.y + ruler_h - 0.5f), IM_COL32(80, 80, 90, 255));
    // The shared time cursor (the DAG's replay time): a marker on the ruler, as in Perfetto.
    if (ctx.state.cursor) {
        const double px = vp.to_px(*ctx.state.cursor);
        if (px >= 0 && px <= width) {
            const float x = x0 + static_cast<float>(px);
            dl->AddTriangleFilled(ImVec2(x - 6, o.y + ruler_h - 12), ImVec2(x + 6, o.y + ruler_h - 12), ImVec2(x, o.y + ruler_h),
                                  col_time_cursor);
        }
    }
}

void timeline_view::draw_slices(view_context& ctx, ImDrawList* dl, const loaded_file& f, std::uint32_t ti, float y,
                                float rh, int rows, double offset, float x0, float width, bool labels) {
    const viewport& vp = ctx.state.vp;
    lod_params p;
    p.t_left = vp.t0 + offset;
    p.npp = vp.npp;
    p.width = width;
    ImFont* font = ImGui::GetFont();
    const float fs = ImGui::GetFontSize() * (rh < row_h ? 0.85f : 1.0f);
    for (int d = 0; d < rows; ++d) {
        const row_view row = f.row(ti, static_cast<std::uint16_t>(d));
        lod_merge(row, f.key_of_string.data(), p, blocks_);
        const float ry0 = y + d * rh + 1, ry1 = y + (d + 1) * rh - 1;
        for (const lod_block& b : blocks_) {
            const float bx0 = x0 + static_cast<float>(std::max(b.x0, -2.0));
            const float bx1 = x0 + static_cast<float>(std::min(std::max(b.x1, b.x0 + 1.0), width + 2.0));
            const ImU32 c = key_colour(b.key);
            dl->AddRectFilled(ImVec2(bx0, ry0), ImVec2(bx1, ry1), c);
            if (!b.merged() && bx1 - bx0 > 3)
                dl->AddLine(ImVec2(bx0, ry0), ImVec2(bx0, ry1), IM_COL32(0, 0, 0, 90));
            if (labels && !b.merged() && bx1 - bx0 > 28) {
                const tm::slice& s = row[b.first];
                std::string text = f.model.str(s.name);
                if (auto it = f.model.uint_arg(s, vocab::arg_key::iteration)) text += "  i" + std::to_string(*it);
                const float cx0 = std::max(bx0, x0) + 3, cx1 = std::min(bx1, x0 + width) - 2;
                if (cx1 - cx0 > 8) {
                    const ImVec4 clip(cx0, ry0, cx1, ry1);
                    dl->AddText(font, fs, ImVec2(cx0, ry0 + (ry1 - ry0 - fs) * 0.5f), text_colour_on(c), text.c_str(),
                                nullptr, 0, &clip);
                }
            }
        }
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

void timeline_view::draw_instants(ImDrawList* dl, const loaded_file& f, std::uint32_t ti, float y, double offset,
                                  float x0, float width, const viewport& vp) {
    const auto& v = f.model.tracks[ti].instants;
    if (v.empty()) return;
    const double tl = vp.t0 + offset, tr = tl + width * vp.npp;
    auto lt = [](const tm::instant& a, double t) { return static_cast<double>(a.ts) < t; };
    auto it = std::lower_bound(v.begin(), v.end(), tl - 3 * vp.npp, lt);
    while (it != v.end() && static_cast<double>(it->ts) < tr + 3 * vp.npp) {
        const float x = x0 + static_cast<float>((static_cast<double>(it->ts) - tl) / vp.npp);
        const instant_kind k = f.instant_of_string[it->name];
        const ImU32 c = instant_colour(k);
        if (k != instant_kind::other || f.model.str(it->name) != vocab::run) {
            dl->AddTriangleFilled(ImVec2(x, y + 1), ImVec2(x - 3.5f, y + instant_h - 2), ImVec2(x + 3.5f, y + instant_h - 2), c);
        }
        // Skip ahead to the next pixel pair: at most one marker per 2 px.
        const double next = static_cast<double>(it->ts) + 2 * vp.npp;
        it = std::lower_bound(it + 1, v.end(), next, lt);
    }
    for (auto k : f.lost_instants[ti]) {   // always drawn
        const double t = static_cast<double>(v[k].ts);
        if (t < tl - vp.npp || t > tr) continue;
        const float x = x0 + static_cast<float>((t - tl) / vp.npp);
        dl->AddRectFilled(ImVec2(x - 1.5f, y - 60 < 0 ? y : y - (row_h)), ImVec2(x + 1.5f, y + instant_h), col_events_lost);
    }
}

void timeline_view::draw_counter(ImDrawList* dl, const loaded_file& f, std::uint32_t ti, float y, double offset,
                                 float x0, float width, const viewport& vp) {
    const auto& v = f.model.tracks[ti].counters;
    const double hi = std::max(1.0, f.counter_max[ti]);
    const float top = y + 12, bot = y + counter_h - 3;
    auto vy = [&](double val) { return bot - static_cast<float>(val / hi) * (bot - top); };
    lod_params p;
    p.t_left = vp.t0 + offset;
    p.npp = vp.npp;
    p.width = width;
    double before = 0;
    counter_lod(v, p, ccols_, &before);
    const ImU32 line = rgb(0x9FD0FF), fill = rgb(0x4E79A7, 110);
    const bool has_before = !v.empty() && static_cast<double>(v.front().ts) < p.t_left;
    double prev_x = 0, prev_v = has_before ? before : 0;
    bool have = has_before;
    for (const counter_column& c : ccols_) {
        const double cx = std::max(c.x, 0.0);
        if (have) {
            dl->AddRectFilled(ImVec2(x0 + static_cast<float>(prev_x), vy(prev_v)), ImVec2(x0 + static_cast<float>(cx) + 1, bot), fill);
            dl->AddLine(ImVec2(x0 + static_cast<float>(prev_x), vy(prev_v)), ImVec2(x0 + static_cast<float>(cx) + 1, vy(prev_v)), line);
        }
        dl->AddRectFilled(ImVec2(x0 + static_cast<float>(cx), vy(c.hi)), ImVec2(x0 + static_cast<float>(cx) + 1, bot), fill);
        dl->AddLine(ImVec2(x0 + static_cast<float>(cx) + 0.5f, vy(c.hi)), ImVec2(x0 + static_cast<float>(cx) + 0.5f, vy(c.lo) + 1), line);
        prev_x = cx + 1;
        prev_v = c.last;
        have = true;
    }
    if (have && !v.empty()) {
        const double end_px = std::min<double>(width, (static_cast<double>(v.back().ts) - p.t_left) / vp.npp);
        if (end_px > prev_x) {
            dl->AddRectFilled(ImVec2(x0 + static_cast<float>(prev_x), vy(prev_v)), ImVec2(x0 + static_cast<float>(end_px), bot), fill);
            dl->AddLine(ImVec2(x0 + static_cast<float>(prev_x), vy(prev_v)), ImVec2(x0 + static_cast<float>(end_px), vy(prev_v)), line);
        }
    }
    char b[48];
    std::snprintf(b, sizeof b, "max %s", short_num(f.counter_max[ti]).c_str());
    dl->AddText(ImVec2(x0 + 4, y), IM_COL32(150, 150, 160, 255), b);
}

ImVec2 timeline_view::event_pos(const view_context& ctx, std::uint32_t file, const tm::event_ref& e, float x0,
                                bool& ok) const {
    ok = false;
    if (!e.valid() || file >= track_y_.size() || e.track >= track_y_[file].size()) return {};
    const float ty = e.is_instant ? lane_y_[file][e.track] : track_y_[file][e.track];
    if (std::isnan(ty)) return {};
    const loaded_file& f = *ctx.doc.files[file];
    const std::uint32_t r = run_of(ctx.doc, file, e.track);
    const double off = r == tm::no_index ? static_cast<double>(ctx.doc.start) : display_offset(ctx.doc, ctx.doc.runs[r], ctx.state.align_runs);
    const double t = static_cast<double>(f.event_ts(e)) - off;
    float y = ty;
    if (e.is_instant) y += instant_h * 0.5f;
    else y += (f.model.tracks[e.track].slices[e.index].depth + 0.5f) * row_h;
    ok = true;
    return ImVec2(x0 + static_cast<float>(ctx.state.vp.to_px(t)), y);
}

void arrow(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 c, float thick) {
    const float dx = b.x - a.x, dy = b.y - a.y;
    const float len = std::sqrt(dx * dx + dy * dy);
    if (len < 1) return;
    const ImVec2 cp1(a.x + std::max(12.f, std::fabs(dx) * 0.3f), a.y), cp2(b.x - std::max(12.f, std::fabs(dx) * 0.3f), b.y);
    dl->AddBezierCubic(a, cp1, cp2, b, c, thick, 16);
    const float ux = b.x - cp2.x, uy = b.y - cp2.y, ul = std::max(1e-3f, std::sqrt(ux * ux + uy * uy));
    const float nx = ux / ul, ny = uy / ul;
    dl->AddTriangleFilled(b, ImVec2(b.x - nx * 8 - ny * 4, b.y - ny * 8 + nx * 4), ImVec2(b.x - nx * 8 + ny * 4, b.y - ny * 8 - nx * 4), c);
    dl->AddCircleFilled(a, 2.5f, c);
}

void timeline_view::draw_flows(view_context& ctx, ImDrawList* dl, float x0, float width, float cy0, float cy1) {
    dl->PushClipRect(ImVec2(x0, cy0), ImVec2(x0 + width, cy1), true);
    const view_state& st = ctx.state;
    auto one = [&](std::uint32_t file, const tm::flow& fl, float thick, unsigned alpha) {
        bool ok1 = false, ok2 = false;
        const ImVec2 a = event_pos(ctx, file, fl.from, x0, ok1), b = event_pos(ctx, file, fl.to, x0, ok2);
        if (!ok1 || !ok2) return;
        const loaded_file& f = *ctx.doc.files[file];
        instant_kind k = instant_kind::other;
        if (fl.from.is_instant) k = f.instant_of_string[f.model.tracks[fl.from.track].instants[fl.from.index].name];
        arrow(dl, a, b, (flow_colour(k) & 0x00FFFFFF) | (alpha << 24), thick);
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
            std::size_t i = static_cast<std::size_t>(std::lower_bound(ft.begin(), ft.end(), lo - vp.width * vp.npp * 0.25) - ft.begin());
            int drawn = 0;
            while (i < ft.size() && static_cast<double>(ft[i]) < hi && drawn < 4000) {
                one(fi, f.model.flows[f.flows_by_time[i]], 1.2f, 150);
                ++drawn;
                // At most a few arrows per pixel column: skip the rest of this column.
                const double next = static_cast<double>(ft[i]) + vp.npp;
                std::size_t j = i + 1;
                if (j < ft.size() && static_cast<double>(ft[j]) < next && j + 4 < ft.size())
                    j = static_cast<std::size_t>(std::lower_bound(ft.begin() + static_cast<std::ptrdiff_t>(j), ft.end(), next) - ft.begin());
                i = j;
            }
        }
    }
    if (st.sel.valid())
        for (const flow_link& l : st.sel_flows) one(st.sel.file, ctx.doc.files[st.sel.file]->model.flows[l.flow], 2.2f, 255);
    dl->PopClipRect();
}

void timeline_view::tooltip(view_context& ctx, const selection& s) {
    const loaded_file& f = *ctx.doc.files[s.file];
    const tm::trace_model& m = f.model;
    const tm::track& t = m.tracks[s.ev.track];
    const std::uint32_t r = run_of(ctx.doc, s.file, s.ev.track);
    const double off = r == tm::no_index ? static_cast<double>(ctx.doc.start) : display_offset(ctx.doc, ctx.doc.runs[r], ctx.state.align_runs);
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
        if (is_stage(k)) ImGui::TextColored(ImColor(key_colour(k)), "stage %u  %s", unsigned(k), legend_stage_name(ctx.doc, k).c_str());
        ImGui::TextDisabled("%s%s", t.name.c_str(), sl.unterminated ? "  (unterminated)" : "");
        ImGui::Text("start %s   duration %s", format_duration(static_cast<double>(sl.begin) - off, 3).c_str(),
                    format_duration(static_cast<double>(sl.duration()), 3).c_str());
        if (static_cast<double>(sl.duration()) < ctx.state.vp.npp)
            ImGui::TextDisabled("narrower than a pixel here: zoom in to see its neighbours");
        a0 = m.args_begin(sl);
        a1 = m.args_end(sl);
    }
    for (auto* a = a0; a != a1; ++a) {
        const std::string v = m.arg_text(*a);
        if (v.size() > 80) ImGui::Text("%s: %.80s…", m.str(a->name).c_str(), v.c_str());
        else ImGui::Text("%s: %s", m.str(a->name).c_str(), v.c_str());
    }
    ImGui::EndTooltip();
}

void timeline_view::draw(view_context& ctx) {
    view_state& st = ctx.state;
    const document& doc = ctx.doc;
    ImGuiIO& io = ImGui::GetIO();
    toolbar(ctx);

    const ImVec2 avail = ImGui::GetContentRegionAvail();
    const float width = std::max(50.f, avail.x - label_w);
    st.vp.width = width;
    if (st.frame_request) {
        st.vp.frame(st.frame_request->first, st.frame_request->second, 0.02);
        st.frame_request.reset();
    }
    const double doc_span = st.align_runs ? [&] {
        double h = 1;
        for (const auto& r : doc.runs) h = std::max(h, static_cast<double>(r.end - r.start));
        return h;
    }() : std::max(1.0, static_cast<double>(doc.end - doc.start));
    st.vp.clamp(0, doc_span);

    const ImVec2 ruler_origin = ImGui::GetCursorScreenPos();
    ruler(ctx, ruler_origin, width);
    // A click on the ruler puts the shared time cursor there (the DAG view replays to it).
    ImGui::InvisibleButton("##ruler", ImVec2(label_w + width, ruler_h));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("Click to put the time cursor here (the DAG view replays to it)");
    if (ImGui::IsItemClicked() && io.MousePos.x >= ruler_origin.x + label_w) {
        st.cursor = st.vp.to_ns(io.MousePos.x - ruler_origin.x - label_w);
        st.playing = false;
    }

    ImGui::PushStyleColor(ImGuiCol_ChildBg, col_background);
    ImGui::BeginChild("##tracks", ImVec2(0, 0), false, ImGuiWindowFlags_NoScrollWithMouse | ImGuiWindowFlags_NoMove);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const ImVec2 wpos = ImGui::GetWindowPos();
    const float clip_y0 = wpos.y, clip_y1 = wpos.y + ImGui::GetWindowHeight();
    const float x_labels = wpos.x, x0 = wpos.x + label_w;
    float y = ImGui::GetCursorScreenPos().y;
    const float y_start = y;

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
    if (st.lines_open.size() != doc.runs.size()) st.lines_open.resize(doc.runs.size(), 1);

    // Grid lines behind the tracks.
    {
        const double step = nice_step(st.vp.npp, 110);
        for (double t = std::ceil(st.vp.t0 / step) * step; t <= st.vp.t1(); t += step) {
            const float x = x0 + static_cast<float>(st.vp.to_px(t));
            dl->AddLine(ImVec2(x, clip_y0), ImVec2(x, clip_y1), IM_COL32(255, 255, 255, 14));
        }
    }
    auto visible = [&](float a, float b) { return b >= clip_y0 && a <= clip_y1; };
    auto label = [&](float ly, float h, const char* text, ImU32 c = IM_COL32(205, 205, 212, 255)) {
        if (!visible(ly, ly + h)) return;
        const ImVec4 clip(x_labels, ly, x0 - 4, ly + h);
        dl->AddText(ImGui::GetFont(), ImGui::GetFontSize(), ImVec2(x_labels + 14, ly + (h - ImGui::GetFontSize()) * 0.5f), c, text, nullptr, 0, &clip);
    };

    for (std::uint32_t ri = 0; ri < doc.runs.size(); ++ri) {
        const run_ref& rr = doc.runs[ri];
        const loaded_file& f = *doc.files[rr.file];
        const tm::trace_model& m = f.model;
        const double off = display_offset(doc, rr, st.align_runs);
        // Header.
        if (visible(y, y + header_h)) {
            dl->AddRectFilled(ImVec2(x_labels, y), ImVec2(x0 + width, y + header_h), IM_COL32(52, 56, 70, 255));
            std::string h = rr.title + "   " + format_duration(static_cast<double>(rr.end - rr.start)) + ", " +
                            std::to_string(rr.workers.size()) + " workers";
            if (rr.run != tm::no_index && m.runs[rr.run].dag.K) h += ", K = " + std::to_string(m.runs[rr.run].dag.K);
            if (rr.run != tm::no_index && m.runs[rr.run].dag.iterations)
                h += ", " + std::to_string(m.runs[rr.run].dag.iterations) + " iterations";
            dl->AddText(ImVec2(x_labels + 6, y + (header_h - ImGui::GetFontSize()) * 0.5f), IM_COL32(240, 240, 245, 255), h.c_str());
            // Where the run lies on the axis.
            const float rx0 = x0 + static_cast<float>(st.vp.to_px(static_cast<double>(rr.start) - off));
            const float rx1 = x0 + static_cast<float>(st.vp.to_px(static_cast<double>(rr.end) - off));
            dl->AddRectFilled(ImVec2(std::max(rx0, x0), y + header_h - 3), ImVec2(std::min(rx1, x0 + width), y + header_h), IM_COL32(120, 150, 220, 255));
        }
        y += header_h + 2;
        int stripe = 0;
        auto track_rows = [&](std::uint32_t ti, float rh, bool with_lane, const char* name, bool labels) {
            const tm::track& t = m.tracks[ti];
            const int rows = std::max<int>(1, t.slices.empty() ? 0 : t.max_depth + 1);
            const float h = (t.slices.empty() ? 0 : rows * rh) + (with_lane && !t.instants.empty() ? instant_h : 0) + 4;
            const float th = std::max(h, rh + 4);
            track_y_[rr.file][ti] = y + 2;
            lane_y_[rr.file][ti] = y + 2 + (t.slices.empty() ? 0 : rows * rh);
            if (visible(y, y + th)) {
                dl->AddRectFilled(ImVec2(x_labels, y), ImVec2(x0 + width, y + th), (stripe++ & 1) ? col_track_bg_a : col_track_bg_b);
                label(y, std::min(th, rh + 4), name);
                dl->PushClipRect(ImVec2(x0, y), ImVec2(x0 + width, y + th), true);
                if (!t.slices.empty()) draw_slices(ctx, dl, f, ti, y + 2, rh, rows, off, x0, width, labels);
                if (with_lane) draw_instants(dl, f, ti, lane_y_[rr.file][ti], off, x0, width, st.vp);
                dl->PopClipRect();
            }
            for (int d = 0; d < (t.slices.empty() ? 0 : rows); ++d)
                hits_.push_back({y + 2 + d * rh, y + 2 + (d + 1) * rh, rr.file, ti, d, off});
            if (with_lane && !t.instants.empty())
                hits_.push_back({lane_y_[rr.file][ti], lane_y_[rr.file][ti] + instant_h, rr.file, ti, -1, off});
            y += th;
        };
        for (auto ti : rr.workers) track_rows(ti, row_h, true, m.tracks[ti].name.c_str(), true);
        if (!rr.lines.empty()) {
            // Collapsible group.
            char gl[64];
            std::snprintf(gl, sizeof gl, "%s lines (%zu)", st.lines_open[ri] ? "v" : ">", rr.lines.size());
            ImGui::SetCursorScreenPos(ImVec2(x_labels, y));
            ImGui::PushID(static_cast<int>(ri));
            if (ImGui::InvisibleButton("##lines", ImVec2(label_w, group_h))) st.lines_open[ri] = !st.lines_open[ri];
            ImGui::PopID();
            if (visible(y, y + group_h)) {
                dl->AddRectFilled(ImVec2(x_labels, y), ImVec2(x0 + width, y + group_h), IM_COL32(44, 46, 54, 255));
                const float cy = y + group_h * 0.5f, cx = x_labels + 6;
                if (st.lines_open[ri]) dl->AddTriangleFilled(ImVec2(cx - 4, cy - 2), ImVec2(cx + 4, cy - 2), ImVec2(cx, cy + 3), IM_COL32(200, 200, 210, 255));
                else dl->AddTriangleFilled(ImVec2(cx - 2, cy - 4), ImVec2(cx - 2, cy + 4), ImVec2(cx + 3, cy), IM_COL32(200, 200, 210, 255));
                std::snprintf(gl, sizeof gl, "lines (%zu)", rr.lines.size());
                label(y, group_h, gl, IM_COL32(180, 180, 190, 255));
            }
            for (auto ti : rr.lines) { track_y_[rr.file][ti] = y; lane_y_[rr.file][ti] = y; }
            y += group_h;
            if (st.lines_open[ri])
                for (auto ti : rr.lines) track_rows(ti, line_h, true, m.tracks[ti].name.c_str(), true);
        }
        for (auto ti : rr.counters) {
            track_y_[rr.file][ti] = y;
            if (visible(y, y + counter_h)) {
                dl->AddRectFilled(ImVec2(x_labels, y), ImVec2(x0 + width, y + counter_h), IM_COL32(33, 35, 42, 255));
                label(y, counter_h, m.tracks[ti].name.c_str());
                dl->PushClipRect(ImVec2(x0, y), ImVec2(x0 + width, y + counter_h), true);
                draw_counter(dl, f, ti, y, off, x0, width, st.vp);
                dl->PopClipRect();
            }
            y += counter_h;
        }
        for (auto ti : rr.others) track_rows(ti, line_h, true, m.tracks[ti].name.c_str(), true);
        y += gap * 2;
    }
    if (doc.runs.empty()) dl->AddText(ImVec2(x0 + 10, y + 10), IM_COL32(200, 200, 200, 255), "no events in this trace");
    // Label column separator.
    dl->AddLine(ImVec2(x0 - 0.5f, clip_y0), ImVec2(x0 - 0.5f, clip_y1), IM_COL32(90, 90, 100, 255));

    draw_flows(ctx, dl, x0, width, clip_y0, clip_y1);
    if (st.cursor) {
        const double px = st.vp.to_px(*st.cursor);
        if (px >= 0 && px <= width)
            dl->AddLine(ImVec2(x0 + static_cast<float>(px), clip_y0), ImVec2(x0 + static_cast<float>(px), clip_y1), col_time_cursor, 1.5f);
    }

    // Content size for scrolling.
    ImGui::SetCursorScreenPos(ImVec2(x_labels, y_start));
    ImGui::Dummy(ImVec2(label_w + width - 4, std::max(1.f, y - y_start)));

    // --- interaction -------------------------------------------------------------------------
    const ImVec2 mp = io.MousePos;
    const bool in_time = ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem) && mp.x >= x0 && mp.x < x0 + width &&
                         mp.y >= clip_y0 && mp.y < clip_y1;
    st.hover = {};
    if (in_time && !dragging_) {
        const double t_disp = st.vp.to_ns(mp.x - x0);
        for (const hit_region& h : hits_) {
            if (mp.y < h.y0 || mp.y >= h.y1) continue;
            const loaded_file& f = *doc.files[h.file];
            const double t = t_disp + h.offset, tol = 3 * st.vp.npp;
            if (h.depth < 0) {
                const std::size_t k = hit_instant(f.model.tracks[h.track].instants, t, tol);
                if (k != npos) st.hover = {h.file, {h.track, static_cast<std::uint32_t>(k), true}};
            } else {
                const row_view row = f.row(h.track, static_cast<std::uint16_t>(h.depth));
                const std::size_t k = hit_row(row, t, tol);
                if (k != npos) st.hover = {h.file, {h.track, row.slice_index(k), false}};
            }
            break;
        }
        if (st.hover.valid()) tooltip(ctx, st.hover);
        // Cursor line and time.
        ImDrawList* fg = ImGui::GetForegroundDrawList();
        fg->AddLine(ImVec2(mp.x, ruler_origin.y), ImVec2(mp.x, clip_y1), IM_COL32(255, 255, 255, 60));
        const std::string ts = format_duration(t_disp, 3);
        fg->AddRectFilled(ImVec2(mp.x + 2, ruler_origin.y + ruler_h - 14), ImVec2(mp.x + 8 + ImGui::CalcTextSize(ts.c_str()).x, ruler_origin.y + ruler_h), IM_COL32(60, 60, 70, 255));
        fg->AddText(ImVec2(mp.x + 5, ruler_origin.y + ruler_h - 14), IM_COL32(255, 255, 255, 255), ts.c_str());
    }
    if (in_time && io.MouseWheel != 0) {
        if (io.KeyShift) ImGui::SetScrollY(ImGui::GetScrollY() - io.MouseWheel * 60);
        else st.vp.zoom_at(mp.x - x0, std::pow(0.8, io.MouseWheel));
    }
    if (in_time && ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
        dragging_ = true;
        drag_moved_ = false;
        drag_origin_ = mp;
    }
    if (dragging_) {
        if (ImGui::IsMouseDown(ImGuiMouseButton_Left)) {
            const ImVec2 d = io.MouseDelta;
            if (std::fabs(mp.x - drag_origin_.x) + std::fabs(mp.y - drag_origin_.y) > 3) drag_moved_ = true;
            if (drag_moved_) {
                st.vp.pan_px(d.x);
                ImGui::SetScrollY(ImGui::GetScrollY() - d.y);
            }
        } else {
            dragging_ = false;
            if (!drag_moved_) {
                const double t_disp = st.vp.to_ns(mp.x - x0);
                selection hit;
                for (const hit_region& h : hits_) {
                    if (mp.y < h.y0 || mp.y >= h.y1) continue;
                    const loaded_file& f = *doc.files[h.file];
                    const double t = t_disp + h.offset, tol = 3 * st.vp.npp;
                    if (h.depth < 0) {
                        const std::size_t k = hit_instant(f.model.tracks[h.track].instants, t, tol);
                        if (k != npos) hit = {h.file, {h.track, static_cast<std::uint32_t>(k), true}};
                    } else {
                        const row_view row = f.row(h.track, static_cast<std::uint16_t>(h.depth));
                        const std::size_t k = hit_row(row, t, tol);
                        if (k != npos) hit = {h.file, {h.track, row.slice_index(k), false}};
                    }
                    break;
                }
                st.select(doc, hit);
            }
        }
    }
    // Keyboard: WASD as in Perfetto, F frames the selection, Home/0 shows everything.
    if (!io.WantTextInput && (ImGui::IsWindowHovered() || ImGui::IsWindowFocused(ImGuiFocusedFlags_RootAndChildWindows) ||
                              !ImGui::IsAnyItemActive())) {
        const double dt = std::min(0.1, static_cast<double>(io.DeltaTime));
        const double zx = in_time ? mp.x - x0 : width * 0.5;
        if (ImGui::IsKeyDown('W')) st.vp.zoom_at(zx, std::pow(0.02, dt));
        if (ImGui::IsKeyDown('S')) st.vp.zoom_at(zx, std::pow(50.0, dt));
        if (ImGui::IsKeyDown('A')) st.vp.pan_px(width * 1.2 * dt);
        if (ImGui::IsKeyDown('D')) st.vp.pan_px(-width * 1.2 * dt);
        if (ImGui::IsKeyPressed('F', false)) {
            if (auto r = selection_range(doc, st.sel, st.align_runs)) st.frame_request = r;
        }
        if (ImGui::IsKeyPressed('0', false) || ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Home), false)) st.request_frame_all(doc);
    }
    if (st.scroll_to_selection && st.sel.valid()) {
        bool ok = false;
        const ImVec2 p = event_pos(ctx, st.sel.file, st.sel.ev, x0, ok);
        if (ok && (p.y < clip_y0 + 20 || p.y > clip_y1 - 20)) ImGui::SetScrollY(ImGui::GetScrollY() + (p.y - (clip_y0 + clip_y1) * 0.5f));
        st.scroll_to_selection = false;
    }
    ImGui::EndChild();
    ImGui::PopStyleColor();
}

}  // namespace

std::unique_ptr<view> make_timeline_view() { return std::make_unique<timeline_view>(); }

}  // namespace pipescope::viewer
