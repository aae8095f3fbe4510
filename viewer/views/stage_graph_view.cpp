// The stage graph: each run's program structure — one box per stage (name, kind, threads under
// bind-to-stage, nodes running at the cursor) in the timeline's stage colours, left to right, joined
// by arrows — with what its queues and buffers hold at the shared time cursor: bind-to-stage's
// bounded queue on every arrow into a stage (fill / capacity, the run's peak as a mark), a stage's
// reorder buffer (bind-to-stage) or input buffer (tbb) under its box, and live iterations vs K and
// tokens in flight vs N under the graph. Several runs stack, one graph each. The model (structure,
// counters at t, peaks, layout) is viewer/model/stage_graph.hpp; the replay control is shared with
// the DAG view (views/replay.hpp).
#include "arrow_head.hpp"
#include "palette.hpp"
#include "replay.hpp"
#include "view.hpp"

#include "../model/compare.hpp"
#include "../model/stage_graph.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>
#include <string>

namespace pipescope::viewer {
namespace {

constexpr float header_h = 24, bar_row_h = 22, bar_label_w = 130, bar_w = 280, buffer_band = 34;
constexpr ImU32 col_queue_fill = rgb(0x4FC3F7), col_queue_full = rgb(0xFF7043), col_peak = rgb(0xFFD54F),
                col_buffer_fill = rgb(0xC39BD3), col_live_fill = rgb(0x7FA7C9), col_tokens_fill = rgb(0xE8B96A),
                col_arrow = rgb(0x9AA0AE), col_bar_bg = rgb(0x17181C), col_bar_frame = rgb(0x8A8F9C),
                col_text = IM_COL32(230, 230, 236, 255), col_dim = IM_COL32(150, 150, 162, 255), col_select = rgb(0xFFFFFF);

std::string count_text(double v) {
    return v == std::floor(v) && std::fabs(v) < 1e15 ? fmt::format("{:.0f}", v) : fmt::format("{:.2f}", v);
}

// Text centred at x, clipped to [clip_x0, clip_x1].
void centred_text(ImDrawList* dl, ImFont* font, float size, float x, float y, ImU32 c, const std::string& s, float clip_x0,
                  float clip_x1) {
    const float w = font->CalcTextSizeA(size, FLT_MAX, 0, s.c_str()).x;
    const ImVec4 clip(clip_x0, y - 2, clip_x1, y + size + 4);
    dl->AddText(font, size, ImVec2(std::max(clip_x0, x - w * 0.5f), y), c, s.c_str(), nullptr, 0, &clip);
}

// s, or as much of it as fits in `width` followed by "…" (cut at a UTF-8 character boundary).
std::string ellipsize(ImFont* font, float size, const std::string& s, float width) {
    auto w = [&](const std::string& x) { return font->CalcTextSizeA(size, FLT_MAX, 0, x.c_str()).x; };
    if (w(s) <= width) return s;
    const std::string dots = "\xE2\x80\xA6";
    std::size_t n = s.size();
    while (n > 0) {
        do --n;
        while (n > 0 && (static_cast<unsigned char>(s[n]) & 0xC0) == 0x80);
        std::string t = s.substr(0, n);
        while (!t.empty() && t.back() == ' ') t.pop_back();
        if (w(t + dots) <= width) return t + dots;
    }
    return dots;
}

// A horizontal gauge: the frame, the fill (value / scale, from the left), the peak as a thin mark.
void gauge(ImDrawList* dl, ImVec2 a, ImVec2 b, double value, double scale, std::optional<double> peak, ImU32 fill) {
    dl->AddRectFilled(a, b, col_bar_bg, 2);
    const float w = b.x - a.x;
    if (scale > 0 && value > 0) {
        const float f = static_cast<float>(std::min(1.0, value / scale));
        dl->AddRectFilled(a, ImVec2(a.x + std::max(1.f, w * f), b.y), fill, 2);
    }
    dl->AddRect(ImVec2(a.x - 0.5f, a.y - 0.5f), ImVec2(b.x + 0.5f, b.y + 0.5f), col_bar_frame, 2);
    if (peak && scale > 0 && *peak > 0) {
        const float x = std::round(a.x + w * static_cast<float>(std::min(1.0, *peak / scale)));
        dl->AddRectFilled(ImVec2(x - 1, a.y - 3), ImVec2(x + 1, b.y + 3), col_peak);
    }
}

// What the phases of one run's section share: the run, its program, the draw list and fonts, and the
// cursor on the run's clock (t, in the trace's ns; off: the run's display offset).
struct section {
    const document& doc;
    const run_graph& g;
    const run_ref& rr;
    const loaded_file& f;
    const program_structure& prog;
    bool tokens;   // tbb: N tokens, serial-filter buffers
    ImDrawList* dl;
    ImFont* font;
    ImFont* mono;
    float fs, small;
    double off;
    std::uint64_t t;
    // Counter track ti at the cursor (0 before its first sample, or without the track).
    double value_at(std::uint32_t ti) const {
        const auto samples = ti == tm::no_index ? std::span<const tm::counter_sample>()
                                                : std::span<const tm::counter_sample>(f.model.tracks[ti].counters);
        return counter_value_at(samples, t).value_or(0.0);
    }
};

// Where the graph is drawn: its layout's origin on screen (o), whether the mouse is over the graph
// and where.
struct graph_area {
    ImVec2 o;
    bool hovered;
    ImVec2 mp;
    ImVec2 P(float x, float y) const { return ImVec2(o.x + x, o.y + y); }
    bool inside(float x0, float y0, float x1, float y1) const {
        return hovered && mp.x >= o.x + x0 && mp.x < o.x + x1 && mp.y >= o.y + y0 && mp.y < o.y + y1;
    }
};

class stage_graph_view final : public view {
public:
    void draw(view_context& ctx) override;

private:
    document_key key_;
    std::vector<run_graph> graphs_;   // per document run
    bool events_aligned_ = false;
    std::vector<double> events_;   // every run's events on the display axis, sorted
    replay_control replay_;
    std::string click_note_;                    // why the last click on a box selected nothing
    std::optional<double> click_note_cursor_;   // the cursor it was said for: moving it clears the note

    void rebuild(const document& doc, bool aligned);
    replay_steps steps() const;
    void legend(toolbar_flow& flow);
    // One run: header, graph, run-level gauges.
    void run_section(view_context& ctx, const run_graph& g, const layout_params& sizes, float avail);
    void stage_tooltip(view_context& ctx, const section& s, int hover);
    layout_params params_for(const run_graph& g, float avail) const;
};

void stage_graph_view::rebuild(const document& doc, bool aligned) {
    if (!key_.matches(doc)) {
        key_ = document_key::of(doc);
        graphs_.clear();
        for (std::uint32_t r = 0; r < doc.runs.size(); ++r) graphs_.push_back(build_run_graph(doc, r));
        events_.clear();
    }
    if (events_.empty() || events_aligned_ != aligned) {
        events_aligned_ = aligned;
        events_.clear();
        for (const auto& g : graphs_) {
            const double off = display_offset(doc, doc.runs[g.doc_run], aligned);
            for (auto e : g.events) events_.push_back(static_cast<double>(e) - off);
        }
        std::sort(events_.begin(), events_.end());
        events_.erase(std::unique(events_.begin(), events_.end()), events_.end());
    }
}

replay_steps stage_graph_view::steps() const {
    replay_steps s;
    s.prev = [this](double cur) -> std::optional<double> {
        auto it = std::lower_bound(events_.begin(), events_.end(), cur - 0.5);
        if (it == events_.begin()) return std::nullopt;
        return *std::prev(it);
    };
    s.next = [this](double cur) -> std::optional<double> {
        auto it = std::upper_bound(events_.begin(), events_.end(), cur + 0.5);
        if (it == events_.end()) return std::nullopt;
        return *it;
    };
    s.prev_tip =
        "Previous event: the last change of a queue, buffer or counter, or node start or end, before the cursor (Left)";
    s.next_tip = "Next event: the next change of a queue, buffer or counter, or node start or end, after the cursor (Right)";
    return s;
}

void stage_graph_view::legend(toolbar_flow& flow) {
    ImDrawList* dl = ImGui::GetWindowDrawList();
    const float h = ImGui::GetTextLineHeight(), mark_w = h + 4, mark_gap = 5;
    auto swatch = [&](ImU32 c, const char* label, const char* tip, bool mark = false) {
        flow.next(mark_w + mark_gap + toolbar_flow::text_width(label), label, h);
        const ImVec2 p = ImGui::GetCursorScreenPos();
        if (mark) dl->AddRectFilled(ImVec2(p.x + h * 0.5f - 1, p.y + 1), ImVec2(p.x + h * 0.5f + 1, p.y + h + 1), c);
        else dl->AddRectFilled(ImVec2(p.x, p.y + 3), ImVec2(p.x + mark_w, p.y + h - 1), c, 2);
        ImGui::Dummy(ImVec2(mark_w, h));
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
        ImGui::SameLine(0, mark_gap);
        ImGui::TextUnformatted(label);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
    };
    swatch(col_queue_fill, "queue fill",
           "items in a bounded queue at the cursor (bind-to-stage: the queue in front of stage j, counter `queue j fill`)");
    swatch(col_queue_full, "full", "the queue is at its capacity: the stage before it blocks");
    swatch(col_peak, "peak", "the largest value over the run", true);
    swatch(col_buffer_fill, "stage buffer", "a stage's reorder buffer (bind-to-stage) or input buffer (tbb) at the cursor");
    swatch(col_live_fill, vocab::live_iterations.data(), "iterations in flight at the cursor, against K");
    swatch(col_tokens_fill, "tokens", "tbb: tokens in flight at the cursor, against N (program.K)");
    const char* boxes = "boxes: the timeline's stage colours";
    flow.next(toolbar_flow::text_width(boxes), boxes, h);
    ImGui::TextDisabled("%s", boxes);
}

layout_params stage_graph_view::params_for(const run_graph& g, float avail) const {
    layout_params p;
    p.box_w = 150;
    p.box_h = std::round(ImGui::GetTextLineHeight() * 4 + 12);
    p.queue_h = 16;
    p.max_width = avail;
    bool buffers = false;
    for (auto ti : g.buffer_counter) buffers |= ti != tm::no_index;
    p.below = buffers ? buffer_band : 0;
    // Room above a queue for its name and under it for its fill.
    p.margin = 12;
    p.row_gap = 40;
    return p;
}

// What bounds the run, for its header: a stage graph's queues, bind-to-stage's bounded queues and
// threads, or the throttle K (tbb: the N tokens).
std::string bounds_note(const section& s) {
    const program_structure& prog = s.prog;
    std::string note;
    std::size_t queues = 0;
    for (const auto& e : prog.edges) queues += !e.queue_counter.empty();
    if (prog.graph) {
        std::size_t unbounded = 0;
        for (const auto& e : prog.edges) unbounded += e.unbounded;
        note = "stage graph · " + std::to_string(prog.stages.size()) + " stages, " + std::to_string(queues) +
               " queue arrows" + (unbounded ? ", " + std::to_string(unbounded) + " unbounded (no backpressure)" : "");
    } else if (queues) {
        note = std::to_string(queues) + " bounded queue" + (queues > 1 ? "s" : "");
        if (prog.queue) note += " of " + std::to_string(*prog.queue);
        if (prog.c) note += "  ·  c = " + std::to_string(*prog.c) + " threads per parallel stage";
    } else if (prog.K) {
        note = (s.tokens ? "N = " : "K = ") + std::to_string(*prog.K) +
               (s.tokens ? " tokens" : " iterations in flight at most");
    }
    if (!prog.valid && !prog.stages.empty())
        note += (note.empty() ? "" : "  ·  ") + std::string("stages from the DAG (no program.stages in the metadata)");
    return note;
}

// The run's title and, right-aligned in what it leaves, what bounds the run.
void section_header(const section& s, float avail) {
    const ImVec2 hp = ImGui::GetCursorScreenPos();
    s.dl->AddRectFilled(hp, ImVec2(hp.x + avail, hp.y + header_h), IM_COL32(52, 56, 70, 255));
    s.dl->AddText(ImVec2(hp.x + 6, hp.y + (header_h - s.fs) * 0.5f), IM_COL32(240, 240, 245, 255), s.rr.title.c_str());
    std::string note = bounds_note(s);
    // The note right-aligned in what the title leaves (shortened, or left out when there is no room).
    const float room = avail - ImGui::CalcTextSize(s.rr.title.c_str()).x - 6 - 24 - 8;
    if (!note.empty() && room > 60) {
        note = ellipsize(s.font, s.fs, note, room);
        const float nw = ImGui::CalcTextSize(note.c_str()).x;
        s.dl->AddText(ImVec2(hp.x + avail - nw - 8, hp.y + (header_h - s.fs) * 0.5f), IM_COL32(170, 170, 185, 255),
                      note.c_str());
    }
    ImGui::Dummy(ImVec2(avail, header_h + 4));
}

// The stage of the selected node, if the selection is a node slice of this run; else no_index.
std::uint32_t selected_stage(const view_state& st, const section& s) {
    const tm::trace_model& m = s.f.model;
    if (!st.sel.valid() || st.sel.ev.is_instant || st.sel.file != s.rr.file ||
        run_of(s.doc, st.sel.file, st.sel.ev.track) != s.g.doc_run)
        return tm::no_index;
    const tm::slice& sl = m.tracks[st.sel.ev.track].slices[st.sel.ev.index];
    if (const tm::node_extent x = m.node_of(sl); x.stage >= 0)
        return stage_of_number(s.prog, static_cast<std::uint64_t>(x.stage));
    if (is_stage(s.f.key(sl))) return stage_of_number(s.prog, s.f.key(sl));
    return tm::no_index;
}

// The arrows, under everything: each edge's polyline, stopped at its arrow head's base.
void draw_arrows(const section& s, const graph_layout& L, const graph_area& ga) {
    for (const layout_edge& e : L.edges) {
        if (e.points.size() < 2) continue;
        for (std::size_t i = 0; i + 1 < e.points.size(); ++i) {
            ImVec2 a = ga.P(e.points[i].x, e.points[i].y), b = ga.P(e.points[i + 1].x, e.points[i + 1].y);
            if (i + 2 == e.points.size()) {   // stop the line at the arrow head's base
                const float dx = b.x - a.x, dy = b.y - a.y, len = std::sqrt(dx * dx + dy * dy);
                if (len > 8) b = ImVec2(b.x - dx / len * 6, b.y - dy / len * 6);
            }
            s.dl->AddLine(a, b, col_arrow, 1.6f);
        }
        const auto& q = e.points[e.points.size() - 2];
        const auto& z = e.points.back();
        arrow_head(s.dl, ga.P(q.x, q.y), ga.P(z.x, z.y), col_arrow, 9, 1);
    }
}

// The queues on the arrows: a gauge of the fill at the cursor against the capacity (the peak
// marked), the queue's name above it and the count under it. Returns the edge under the mouse, or -1.
int draw_queues(const section& s, const graph_layout& L, const layout_params& lp, const graph_area& ga) {
    const program_structure& prog = s.prog;
    ImFont* font = s.font;
    ImFont* mono = s.mono;
    const float small = s.small;
    int hover_edge = -1;
    for (std::size_t k = 0; k < L.edges.size(); ++k) {
        const layout_edge& e = L.edges[k];
        if (!e.has_queue) continue;
        const graph_edge& ge = prog.edges[k];
        const std::uint32_t ti = s.g.edge_counter[k];
        const double v = s.value_at(ti);
        const counter_peak& pk = s.g.edge_peak[k];
        // An unbounded queue may grow past its capacity (its first block): scale it to its peak.
        const double cap =
            ge.capacity ? (ge.unbounded ? std::max(*ge.capacity, pk.value) : *ge.capacity) : std::max(1.0, pk.value);
        const bool full = ge.capacity && !ge.unbounded && v >= *ge.capacity;
        gauge(s.dl, ga.P(e.qx0, e.qy0), ga.P(e.qx1, e.qy1), v, cap, pk.any ? std::optional<double>(pk.value) : std::nullopt,
              full ? col_queue_full : col_queue_fill);
        const float cx = ga.o.x + (e.qx0 + e.qx1) * 0.5f;
        const float gx0 = ga.o.x + e.qx0 - lp.queue_pad + 2, gx1 = ga.o.x + e.qx1 + lp.queue_pad - 2;
        const std::string name =
            ge.queue_name.empty() ? "queue " + std::to_string(prog.stages[ge.to].number) : ge.queue_name;
        std::string fill = ti == tm::no_index ? std::string("not recorded") : count_text(v);
        if (ti != tm::no_index && ge.capacity && !ge.unbounded)
            fill += " / " + count_text(*ge.capacity);   // unbounded: the header says so
        const ImU32 fill_colour = ti == tm::no_index ? col_dim : col_text;
        if (!e.feedback) {
            centred_text(s.dl, font, small, cx, ga.o.y + e.qy0 - small - 4, col_dim, name, gx0, gx1);
            centred_text(s.dl, mono, mono->FontSize, cx, ga.o.y + e.qy1 + 4, fill_colour, fill, gx0, gx1);
        } else {
            // A feedback edge runs just under the boxes, where a forward queue above writes its count:
            // its name goes beside its own count, under the bar, not above it over theirs.
            const float nw = font->CalcTextSizeA(small, FLT_MAX, 0, name.c_str()).x, gap = small * 0.6f;
            const float fw = mono->CalcTextSizeA(mono->FontSize, FLT_MAX, 0, fill.c_str()).x;
            const float x0 = std::max(gx0, cx - (nw + gap + fw) * 0.5f), y = ga.o.y + e.qy1 + 4;
            s.dl->AddText(font, small, ImVec2(x0, y + (mono->FontSize - small) * 0.5f), col_dim, name.c_str());
            s.dl->AddText(mono, mono->FontSize, ImVec2(x0 + nw + gap, y), fill_colour, fill.c_str());
        }
        if (ga.inside(e.qx0 - 4, e.qy0 - small - 4, e.qx1 + 4, e.qy1 + mono->FontSize + 6)) hover_edge = static_cast<int>(k);
    }
    return hover_edge;
}

// Threads (bind-to-stage) and how many of them, or of the stage's nodes, run at the cursor; for a
// family of stages, how many it stands for: the longest form that fits `inner` px.
std::string stage_activity(const section& s, std::uint32_t k, float inner) {
    const graph_stage& gs = s.prog.stages[k];
    auto fits = [&](const std::string& x) { return s.font->CalcTextSizeA(s.small, FLT_MAX, 0, x.c_str()).x <= inner; };
    std::string now;
    const std::string thr =
        gs.threads ? std::to_string(*gs.threads) + (*gs.threads == 1 ? " thread" : " threads") : std::string();
    if (!s.g.node_starts[k].empty()) {
        const std::uint64_t n = running_at(s.g, k, s.t);
        if (gs.threads) {
            now = thr + "  ·  " + std::to_string(n) + " busy";
            if (!fits(now)) now = thr + ", " + std::to_string(n) + " busy";
            if (!fits(now)) now = std::to_string(n) + " / " + std::to_string(*gs.threads) + " busy";
        } else {
            now = n ? std::to_string(n) + " running" : std::string("not running");
        }
    } else {
        now = thr;
    }
    if (gs.all_from && s.g.stage_numbers[k] > 0) {
        const std::string many = std::to_string(s.g.stage_numbers[k]) + " stages";
        now = now.empty() ? many : fits(now + "  ·  " + many) ? now + "  ·  " + many : now;
    }
    return now;
}

// A stage box's four lines: its name (split at " · " over two lines), its kind, and its threads
// with what runs at the cursor (the shortest form when the box is narrow).
void stage_text(const section& s, std::uint32_t k, ImVec2 a, ImVec2 z, ImU32 tc) {
    const graph_stage& gs = s.prog.stages[k];
    ImFont* font = s.font;
    const float fs = s.fs, small = s.small, line_h = ImGui::GetTextLineHeight();
    const ImVec4 clip(a.x + 4, a.y, z.x - 4, z.y);
    const std::string name = plain_relations(gs.name.empty() ? vocab::numbered(vocab::stage_prefix, gs.number) : gs.name);
    std::string head = name, rest;
    if (const auto dot = name.find(" \xC2\xB7 "); dot != std::string::npos) {
        head = name.substr(0, dot);
        rest = name.substr(dot + 4);
    }
    const float inner = z.x - a.x - 11;
    float y = a.y + 5;
    s.dl->AddText(font, fs, ImVec2(a.x + 7, y), tc, ellipsize(font, fs, head, inner).c_str(), nullptr, 0, &clip);
    y += line_h;
    if (!rest.empty())
        s.dl->AddText(font, fs, ImVec2(a.x + 7, y), tc, ellipsize(font, fs, rest, inner).c_str(), nullptr, 0, &clip);
    y += line_h;
    const std::string kind = gs.kind.empty() ? std::string("kind ?") : gs.kind;
    s.dl->AddText(font, small, ImVec2(a.x + 7, y + 1), tc, ellipsize(font, small, kind, inner).c_str(), nullptr, 0, &clip);
    y += line_h;
    const std::string now = stage_activity(s, k, inner);
    if (!now.empty()) s.dl->AddText(font, small, ImVec2(a.x + 7, y + 1), tc, now.c_str(), nullptr, 0, &clip);
}

// The stage's buffer under its box (a) .. (z): bind-to-stage's reorder buffer, or tbb's input
// buffer against its N tokens.
void stage_buffer(const section& s, std::uint32_t k, ImVec2 a, ImVec2 z) {
    const double v = s.value_at(s.g.buffer_counter[k]);
    const counter_peak& pk = s.g.buffer_peak[k];
    const double scale = s.tokens && s.prog.K ? static_cast<double>(*s.prog.K) : std::max(1.0, pk.value);
    const std::string lab = (s.tokens ? "buffer " : "reorder buffer ") + count_text(v);
    const float by = z.y + 4;
    s.dl->AddText(s.font, s.small, ImVec2(a.x + 1, by), col_text, lab.c_str(), nullptr, 0, nullptr);
    gauge(s.dl, ImVec2(a.x + 1, by + s.small + 3), ImVec2(z.x - 1, by + s.small + 11), v, scale,
          pk.any ? std::optional<double>(pk.value) : std::nullopt, col_buffer_fill);
}

// The stage boxes in their stage colours (the selected node's stage framed), each with its buffer
// under it when the run records one. Returns the stage under the mouse, 100000 + the stage when it
// is the stage's buffer, or -1.
int draw_stages(const section& s, const graph_layout& L, const graph_area& ga, std::uint32_t sel_stage) {
    int hover_stage = -1;
    for (std::uint32_t k = 0; k < s.prog.stages.size(); ++k) {
        const layout_box& b = L.boxes[k];
        const ImU32 c = key_colour(s.prog.stages[k].colour);
        const ImVec2 a = ga.P(b.x0, b.y0), z = ga.P(b.x1, b.y1);
        s.dl->AddRectFilled(a, z, c, 4);
        if (k == sel_stage) s.dl->AddRect(ImVec2(a.x - 3, a.y - 3), ImVec2(z.x + 3, z.y + 3), col_select, 5, 0, 2);
        stage_text(s, k, a, z, text_colour_on(c));
        if (ga.inside(b.x0, b.y0, b.x1, b.y1)) hover_stage = static_cast<int>(k);
        if (s.g.buffer_counter[k] == tm::no_index) continue;
        stage_buffer(s, k, a, z);
        if (ga.inside(b.x0, b.y1, b.x1, b.y1 + buffer_band)) hover_stage = static_cast<int>(k) + 100000;
    }
    return hover_stage;
}

void queue_tooltip(const section& s, std::size_t k) {
    const graph_edge& ge = s.prog.edges[k];
    const std::uint32_t ti = s.g.edge_counter[k];
    const counter_peak& pk = s.g.edge_peak[k];
    ImGui::BeginTooltip();
    ImGui::Text("%s", ge.queue_counter.c_str());
    ImGui::TextDisabled("the bounded queue in front of %s", plain_relations(s.prog.stages[ge.to].name).c_str());
    if (ti == tm::no_index) ImGui::TextDisabled("the run has no such counter");
    else {
        ImGui::Text("at the cursor: %s%s", count_text(s.value_at(ti)).c_str(),
                    ge.capacity ? (" of " + count_text(*ge.capacity)).c_str() : "");
        if (pk.any)
            ImGui::Text("peak %s, first at %s", count_text(pk.value).c_str(),
                        format_duration(static_cast<double>(pk.ts) - s.off, 3).c_str());
    }
    ImGui::EndTooltip();
}

// One gauge row: the label, the counter at the cursor against program.K (else its peak), and the
// figures; nothing when the run does not record the counter.
void gauge_row(const section& s, float avail, const char* label, std::uint32_t ti, const counter_peak& pk, ImU32 fill,
               const char* bound_name, const char* tip) {
    if (ti == tm::no_index) return;
    const program_structure& prog = s.prog;
    ImFont* mono = s.mono;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const double v = s.value_at(ti);
    const double scale = prog.K ? static_cast<double>(*prog.K) : std::max(1.0, pk.value);
    s.dl->AddText(ImVec2(p.x + 8, p.y + (bar_row_h - s.fs) * 0.5f), col_text, label);
    gauge(s.dl, ImVec2(p.x + bar_label_w, p.y + 5), ImVec2(p.x + bar_label_w + bar_w, p.y + bar_row_h - 5), v, scale,
          pk.any ? std::optional<double>(pk.value) : std::nullopt, fill);
    std::string text = count_text(v);
    if (prog.K) text += " / " + std::string(bound_name) + " = " + std::to_string(*prog.K);
    text += "   (peak " + count_text(pk.value) + (prog.K || prog.graph ? "" : ", no K: the queues bound it") + ")";
    s.dl->AddText(mono, mono->FontSize, ImVec2(p.x + bar_label_w + bar_w + 10, p.y + (bar_row_h - mono->FontSize) * 0.5f),
                  col_text, text.c_str());
    ImGui::Dummy(ImVec2(avail, bar_row_h));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
}

// Run-level gauges under the graph: live iterations vs K (not for a stage graph: it has packets,
// not iterations), a stage graph's footprint, tokens in flight vs N.
void run_gauges(const section& s, float avail) {
    const run_graph& g = s.g;
    if (!s.prog.graph)
        gauge_row(s, avail, vocab::live_iterations.data(), g.live, g.live_peak, col_live_fill, "K",
                  "iterations in flight at the cursor (counter `live iterations`), against program.K");
    gauge_row(s, avail, "footprint", g.footprint, g.footprint_peak, col_live_fill, "K",
              "stage graphs: packets in use in all queues at the cursor (counter `footprint packets`: the sum of the queue "
              "counters, which the trace model derives unless the trace recorded it; seed 004 Table III)");
    if (s.tokens || g.tokens != tm::no_index)
        gauge_row(s, avail, vocab::tokens_in_flight.data(), g.tokens, g.tokens_peak, col_tokens_fill, "N",
                  "tbb: tokens taken at the cursor (counter `tokens in flight`), against N (program.K)");
}

// One run's section, in phases: the header, then (when the run has stages) the graph laid out and
// drawn back to front (arrows, the queues on them, the stage boxes with their buffers), the
// tooltip and click of what the mouse is over, and the run-level gauges under the graph.
void stage_graph_view::run_section(view_context& ctx, const run_graph& g, const layout_params& sizes, float avail) {
    const document& doc = ctx.doc;
    const run_ref& rr = doc.runs[g.doc_run];
    const loaded_file& f = *doc.files[rr.file];
    ImFont* font = ImGui::GetFont();
    const float fs = ImGui::GetFontSize();
    const double off = display_offset(doc, rr, ctx.state.align_runs);
    const section s{doc,
                    g,
                    rr,
                    f,
                    g.program,
                    g.program.family() == vocab::policy_family::tokens,
                    ImGui::GetWindowDrawList(),
                    font,
                    ctx.mono ? ctx.mono : font,
                    fs,
                    std::round(fs * 0.87f),
                    off,
                    static_cast<std::uint64_t>(std::max(0.0, std::round(*ctx.state.cursor + off)))};
    section_header(s, avail);
    if (s.prog.stages.empty()) {
        ImGui::TextDisabled(rr.run == tm::no_index
                                ? "not a pipescope run: no program structure"
                                : "no stages: the run metadata names none and the run has no pipeline DAG");
        ImGui::Dummy(ImVec2(avail, 8));
        return;
    }

    layout_params lp = params_for(g, avail);
    lp.box_w = sizes.box_w;
    lp.gap = sizes.gap;
    lp.queue_gap = sizes.queue_gap;
    lp.max_width = 0;
    const graph_layout L = layout_stage_graph(s.prog.stages, s.prog.edges, lp);
    bool queues = false;
    for (const auto& e : L.edges) queues |= e.has_queue;
    const float above = queues ? fs + 2 : 0.f;   // room over the first row for the queues' names
    const ImVec2 cp = ImGui::GetCursorScreenPos();
    ImGui::InvisibleButton("##graph", ImVec2(std::max(avail, L.width), L.height + above));
    const graph_area ga{ImVec2(std::floor(cp.x), std::floor(cp.y + above)), ImGui::IsItemHovered(), ImGui::GetIO().MousePos};

    draw_arrows(s, L, ga);
    const int hover_edge = draw_queues(s, L, lp, ga);
    const int hover_stage = draw_stages(s, L, ga, selected_stage(ctx.state, s));
    if (hover_edge >= 0) queue_tooltip(s, static_cast<std::size_t>(hover_edge));
    else if (hover_stage >= 0) stage_tooltip(ctx, s, hover_stage);
    run_gauges(s, avail);
    ImGui::Dummy(ImVec2(avail, 10));
}

// The tooltip of a stage (or its buffer: hover >= 100000); a click selects its latest node started
// at or before the cursor, or says (under the scrubber) why there is none.
void stage_graph_view::stage_tooltip(view_context& ctx, const section& s, int hover) {
    const bool buffer = hover >= 100000;
    const std::uint32_t k = static_cast<std::uint32_t>(buffer ? hover - 100000 : hover);
    const graph_stage& gs = s.prog.stages[k];
    const run_graph& g = s.g;
    ImGui::BeginTooltip();
    ImGui::TextColored(ImColor(key_colour(gs.colour)), "%s", plain_relations(gs.name).c_str());
    if (!gs.kind.empty()) ImGui::Text("kind %s%s", gs.kind.c_str(), analysis::is_serial_kind(gs.kind) ? " (serial)" : "");
    if (gs.threads)
        ImGui::Text("%llu thread%s bound to it", static_cast<unsigned long long>(*gs.threads), *gs.threads == 1 ? "" : "s");
    if (!gs.note.empty()) {
        ImGui::PushTextWrapPos(s.fs * 28);
        ImGui::TextDisabled("%s", gs.note.c_str());
        ImGui::PopTextWrapPos();
    }
    if (!g.node_starts[k].empty())
        ImGui::Text("%llu nodes, %llu running at the cursor", static_cast<unsigned long long>(g.node_starts[k].size()),
                    static_cast<unsigned long long>(running_at(g, k, s.t)));
    if (g.buffer_counter[k] != tm::no_index) {
        const counter_peak& pk = g.buffer_peak[k];
        ImGui::Text("%s: %s at the cursor, peak %s", gs.buffer_counter.c_str(),
                    count_text(s.value_at(g.buffer_counter[k])).c_str(), count_text(pk.value).c_str());
    }
    const std::string why_not = nothing_started_note(g, k, s.t, s.off, plain_relations(gs.name));
    if (!why_not.empty()) ImGui::TextDisabled("%s", why_not.c_str());
    else ImGui::TextDisabled("click: select its latest node started at or before the cursor");
    ImGui::EndTooltip();
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left) && s.rr.run != tm::no_index) {
        // A click that selects nothing says why (under the scrubber) rather than doing nothing.
        click_note_ = why_not;
        click_note_cursor_ = ctx.state.cursor;
        const std::uint32_t v = latest_node_at(g, k, s.t);
        if (v != tm::no_index) {
            const tm::dag_node& nd = s.f.model.runs[s.rr.run].dag.nodes[v];
            if (nd.slice.valid()) ctx.state.select(ctx.doc, {s.rr.file, nd.slice});
        }
    }
}

void stage_graph_view::draw(view_context& ctx) {
    const document& doc = ctx.doc;
    view_state& st = ctx.state;
    rebuild(doc, st.align_runs);
    if (graphs_.empty()) {
        ImGui::TextDisabled("no runs: open a trace");
        st.playing = false;
        return;
    }
    // The replay's range: every run on the display axis.
    double t0 = 0, t1 = 0;
    bool any = false;
    for (const auto& g : graphs_) {
        const run_ref& rr = doc.runs[g.doc_run];
        const double off = display_offset(doc, rr, st.align_runs);
        const double a = static_cast<double>(rr.start) - off, b = static_cast<double>(rr.end) - off;
        t0 = any ? std::min(t0, a) : a;
        t1 = any ? std::max(t1, b) : b;
        any = true;
    }
    replay_.advance(st, t0, t1);
    const replay_steps steps_now = steps();
    toolbar_flow flow(st.layout, "stage graph toolbar");   // wraps in a narrow window
    replay_.buttons(st, t0, t1, steps_now, flow);
    flow.next(toolbar_flow::text_width("|"), "|");
    ImGui::TextDisabled("|");
    legend(flow);
    replay_.scrubber(st, t0, t1);
    if (click_note_cursor_ != st.cursor) click_note_.clear();
    if (!click_note_.empty()) ImGui::TextColored(ImVec4(1.f, 0.8f, 0.45f, 1.f), "%s", click_note_.c_str());

    ImGui::PushStyleColor(ImGuiCol_ChildBg, col_background);
    ImGui::BeginChild("##stage_graphs", ImVec2(0, 0), false, ImGuiWindowFlags_HorizontalScrollbar);
    const float avail = std::max(200.f, ImGui::GetContentRegionAvail().x);
    // One set of sizes for every run, so that their graphs compare: the smallest any run needs to fit.
    layout_params common = params_for(graphs_.front(), avail);
    for (const auto& g : graphs_) {
        if (g.program.stages.empty()) continue;
        const layout_params u = layout_stage_graph(g.program.stages, g.program.edges, params_for(g, avail)).used;
        common.box_w = std::min(common.box_w, u.box_w);
        common.gap = std::min(common.gap, u.gap);
        common.queue_gap = std::min(common.queue_gap, u.queue_gap);
    }
    for (const auto& g : graphs_) {
        ImGui::PushID(static_cast<int>(g.doc_run));
        run_section(ctx, g, common, avail);
        ImGui::PopID();
    }
    if (!ImGui::GetIO().WantTextInput && (ImGui::IsWindowHovered() || ImGui::IsWindowFocused())) {
        replay_.keys(st, t0, t1, steps_now);
        if (ImGui::IsKeyPressed(ImGui::GetKeyIndex(ImGuiKey_Home), false)) {
            *st.cursor = t0;
            st.playing = false;
        }
    }
    ImGui::EndChild();
    ImGui::PopStyleColor();
}

}   // namespace

std::unique_ptr<view> make_stage_graph_view() { return std::make_unique<stage_graph_view>(); }

}   // namespace pipescope::viewer
