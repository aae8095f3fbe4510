// The stage graph: each run's program structure — one box per stage (name, kind, threads under
// bind-to-stage, nodes running at the cursor) in the timeline's stage colours, left to right, joined
// by arrows — with what its queues and buffers hold at the shared time cursor: bind-to-stage's
// bounded queue on every arrow into a stage (fill / capacity, the run's peak as a mark), a stage's
// reorder buffer (bind-to-stage) or input buffer (tbb) under its box, and live iterations vs K and
// tokens in flight vs N under the graph. Several runs stack, one graph each. The model (structure,
// counters at t, peaks, layout) is viewer/model/stage_graph.hpp; the replay control is shared with
// the DAG view (views/replay.hpp).
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

void arrow_head(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 c, float size) {
    const float dx = b.x - a.x, dy = b.y - a.y, len = std::sqrt(dx * dx + dy * dy);
    if (len < 1) return;
    const float ux = dx / len, uy = dy / len;
    dl->AddTriangleFilled(b, ImVec2(b.x - ux * size - uy * size * 0.5f, b.y - uy * size + ux * size * 0.5f),
                          ImVec2(b.x - ux * size + uy * size * 0.5f, b.y - uy * size - ux * size * 0.5f), c);
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

void stage_graph_view::run_section(view_context& ctx, const run_graph& g, const layout_params& sizes, float avail) {
    const document& doc = ctx.doc;
    view_state& st = ctx.state;
    const run_ref& rr = doc.runs[g.doc_run];
    const loaded_file& f = *doc.files[rr.file];
    const tm::trace_model& m = f.model;
    const program_structure& prog = g.program;
    const bool tokens = prog.family() == vocab::policy_family::tokens;   // tbb: N tokens, serial-filter buffers
    ImDrawList* dl = ImGui::GetWindowDrawList();
    ImFont* font = ImGui::GetFont();
    ImFont* mono = ctx.mono ? ctx.mono : font;
    const float fs = ImGui::GetFontSize(), small = std::round(fs * 0.87f);
    const double off = display_offset(doc, rr, st.align_runs);
    const std::uint64_t t = static_cast<std::uint64_t>(std::max(0.0, std::round(*st.cursor + off)));
    auto samples = [&](std::uint32_t ti) {
        return ti == tm::no_index ? std::span<const tm::counter_sample>()
                                  : std::span<const tm::counter_sample>(m.tracks[ti].counters);
    };
    auto value_at = [&](std::uint32_t ti) { return counter_value_at(samples(ti), t).value_or(0.0); };

    // Header: the run's title and what bounds it.
    {
        const ImVec2 hp = ImGui::GetCursorScreenPos();
        dl->AddRectFilled(hp, ImVec2(hp.x + avail, hp.y + header_h), IM_COL32(52, 56, 70, 255));
        dl->AddText(ImVec2(hp.x + 6, hp.y + (header_h - fs) * 0.5f), IM_COL32(240, 240, 245, 255), rr.title.c_str());
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
            note = (tokens ? "N = " : "K = ") + std::to_string(*prog.K) +
                   (tokens ? " tokens" : " iterations in flight at most");
        }
        if (!prog.valid && !prog.stages.empty())
            note += (note.empty() ? "" : "  ·  ") + std::string("stages from the DAG (no program.stages in the metadata)");
        // The note right-aligned in what the title leaves (shortened, or left out when there is no room).
        const float room = avail - ImGui::CalcTextSize(rr.title.c_str()).x - 6 - 24 - 8;
        if (!note.empty() && room > 60) {
            note = ellipsize(font, fs, note, room);
            const float nw = ImGui::CalcTextSize(note.c_str()).x;
            dl->AddText(ImVec2(hp.x + avail - nw - 8, hp.y + (header_h - fs) * 0.5f), IM_COL32(170, 170, 185, 255),
                        note.c_str());
        }
        ImGui::Dummy(ImVec2(avail, header_h + 4));
    }
    if (prog.stages.empty()) {
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
    const graph_layout L = layout_stage_graph(prog.stages, prog.edges, lp);
    bool queues = false;
    for (const auto& e : L.edges) queues |= e.has_queue;
    const float above = queues ? fs + 2 : 0.f;   // room over the first row for the queues' names
    const ImVec2 cp = ImGui::GetCursorScreenPos();
    const ImVec2 o(std::floor(cp.x), std::floor(cp.y + above));
    const float total_h = L.height + above;
    ImGui::InvisibleButton("##graph", ImVec2(std::max(avail, L.width), total_h));
    const bool hovered = ImGui::IsItemHovered();
    const ImVec2 mp = ImGui::GetIO().MousePos;
    auto P = [&](float x, float y) { return ImVec2(o.x + x, o.y + y); };
    auto inside = [&](float x0, float y0, float x1, float y1) {
        return hovered && mp.x >= o.x + x0 && mp.x < o.x + x1 && mp.y >= o.y + y0 && mp.y < o.y + y1;
    };

    // The selected node's stage, if the selection is a node slice of this run.
    std::uint32_t sel_stage = tm::no_index;
    if (st.sel.valid() && !st.sel.ev.is_instant && st.sel.file == rr.file &&
        run_of(doc, st.sel.file, st.sel.ev.track) == g.doc_run) {
        const tm::slice& s = m.tracks[st.sel.ev.track].slices[st.sel.ev.index];
        if (const tm::node_extent x = m.node_of(s); x.stage >= 0)
            sel_stage = stage_of_number(prog, static_cast<std::uint64_t>(x.stage));
        else if (is_stage(f.key(s))) sel_stage = stage_of_number(prog, f.key(s));
    }

    // Arrows under everything.
    for (std::size_t k = 0; k < L.edges.size(); ++k) {
        const layout_edge& e = L.edges[k];
        if (e.points.size() < 2) continue;
        for (std::size_t i = 0; i + 1 < e.points.size(); ++i) {
            ImVec2 a = P(e.points[i].x, e.points[i].y), b = P(e.points[i + 1].x, e.points[i + 1].y);
            if (i + 2 == e.points.size()) {   // stop the line at the arrow head's base
                const float dx = b.x - a.x, dy = b.y - a.y, len = std::sqrt(dx * dx + dy * dy);
                if (len > 8) b = ImVec2(b.x - dx / len * 6, b.y - dy / len * 6);
            }
            dl->AddLine(a, b, col_arrow, 1.6f);
        }
        const auto& q = e.points[e.points.size() - 2];
        const auto& z = e.points.back();
        arrow_head(dl, P(q.x, q.y), P(z.x, z.y), col_arrow, 9);
    }
    // Queues on the arrows.
    int hover_edge = -1;
    for (std::size_t k = 0; k < L.edges.size(); ++k) {
        const layout_edge& e = L.edges[k];
        if (!e.has_queue) continue;
        const graph_edge& ge = prog.edges[k];
        const std::uint32_t ti = g.edge_counter[k];
        const double v = value_at(ti);
        const counter_peak& pk = g.edge_peak[k];
        // An unbounded queue may grow past its capacity (its first block): scale it to its peak.
        const double cap =
            ge.capacity ? (ge.unbounded ? std::max(*ge.capacity, pk.value) : *ge.capacity) : std::max(1.0, pk.value);
        const bool full = ge.capacity && !ge.unbounded && v >= *ge.capacity;
        gauge(dl, P(e.qx0, e.qy0), P(e.qx1, e.qy1), v, cap, pk.any ? std::optional<double>(pk.value) : std::nullopt,
              full ? col_queue_full : col_queue_fill);
        const float cx = o.x + (e.qx0 + e.qx1) * 0.5f;
        const float gx0 = o.x + e.qx0 - lp.queue_pad + 2, gx1 = o.x + e.qx1 + lp.queue_pad - 2;
        const std::string name =
            ge.queue_name.empty() ? "queue " + std::to_string(prog.stages[ge.to].number) : ge.queue_name;
        std::string fill = ti == tm::no_index ? std::string("not recorded") : count_text(v);
        if (ti != tm::no_index && ge.capacity && !ge.unbounded)
            fill += " / " + count_text(*ge.capacity);   // unbounded: the header says so
        const ImU32 fill_colour = ti == tm::no_index ? col_dim : col_text;
        if (!e.feedback) {
            centred_text(dl, font, small, cx, o.y + e.qy0 - small - 4, col_dim, name, gx0, gx1);
            centred_text(dl, mono, mono->FontSize, cx, o.y + e.qy1 + 4, fill_colour, fill, gx0, gx1);
        } else {
            // A feedback edge runs just under the boxes, where a forward queue above writes its count:
            // its name goes beside its own count, under the bar, not above it over theirs.
            const float nw = font->CalcTextSizeA(small, FLT_MAX, 0, name.c_str()).x, gap = small * 0.6f;
            const float fw = mono->CalcTextSizeA(mono->FontSize, FLT_MAX, 0, fill.c_str()).x;
            const float x0 = std::max(gx0, cx - (nw + gap + fw) * 0.5f), y = o.y + e.qy1 + 4;
            dl->AddText(font, small, ImVec2(x0, y + (mono->FontSize - small) * 0.5f), col_dim, name.c_str());
            dl->AddText(mono, mono->FontSize, ImVec2(x0 + nw + gap, y), fill_colour, fill.c_str());
        }
        if (inside(e.qx0 - 4, e.qy0 - small - 4, e.qx1 + 4, e.qy1 + mono->FontSize + 6)) hover_edge = static_cast<int>(k);
    }
    // Stage boxes.
    int hover_stage = -1;
    const float line_h = ImGui::GetTextLineHeight();
    for (std::uint32_t s = 0; s < prog.stages.size(); ++s) {
        const graph_stage& gs = prog.stages[s];
        const layout_box& b = L.boxes[s];
        const ImU32 c = key_colour(gs.colour);
        const ImU32 tc = text_colour_on(c);
        const ImVec2 a = P(b.x0, b.y0), z = P(b.x1, b.y1);
        dl->AddRectFilled(a, z, c, 4);
        if (s == sel_stage) dl->AddRect(ImVec2(a.x - 3, a.y - 3), ImVec2(z.x + 3, z.y + 3), col_select, 5, 0, 2);
        const ImVec4 clip(a.x + 4, a.y, z.x - 4, z.y);
        const std::string name =
            plain_relations(gs.name.empty() ? vocab::numbered(vocab::stage_prefix, gs.number) : gs.name);
        std::string head = name, rest;
        if (const auto dot = name.find(" \xC2\xB7 "); dot != std::string::npos) {
            head = name.substr(0, dot);
            rest = name.substr(dot + 4);
        }
        const float inner = z.x - a.x - 11;
        float y = a.y + 5;
        dl->AddText(font, fs, ImVec2(a.x + 7, y), tc, ellipsize(font, fs, head, inner).c_str(), nullptr, 0, &clip);
        y += line_h;
        if (!rest.empty())
            dl->AddText(font, fs, ImVec2(a.x + 7, y), tc, ellipsize(font, fs, rest, inner).c_str(), nullptr, 0, &clip);
        y += line_h;
        const std::string kind = gs.kind.empty() ? std::string("kind ?") : gs.kind;
        dl->AddText(font, small, ImVec2(a.x + 7, y + 1), tc, ellipsize(font, small, kind, inner).c_str(), nullptr, 0, &clip);
        y += line_h;
        // Threads (bind-to-stage) and what runs at the cursor; the shortest form when the box is narrow.
        auto fits = [&](const std::string& x) { return font->CalcTextSizeA(small, FLT_MAX, 0, x.c_str()).x <= inner; };
        std::string now;
        const std::string thr =
            gs.threads ? std::to_string(*gs.threads) + (*gs.threads == 1 ? " thread" : " threads") : std::string();
        if (!g.node_starts[s].empty()) {
            const std::uint64_t n = running_at(g, s, t);
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
        if (gs.all_from && g.stage_numbers[s] > 0) {
            const std::string many = std::to_string(g.stage_numbers[s]) + " stages";
            now = now.empty() ? many : fits(now + "  ·  " + many) ? now + "  ·  " + many : now;
        }
        if (!now.empty()) dl->AddText(font, small, ImVec2(a.x + 7, y + 1), tc, now.c_str(), nullptr, 0, &clip);
        if (inside(b.x0, b.y0, b.x1, b.y1)) hover_stage = static_cast<int>(s);
        // The stage's buffer under its box.
        const std::uint32_t bt = g.buffer_counter[s];
        if (bt != tm::no_index) {
            const double v = value_at(bt);
            const counter_peak& pk = g.buffer_peak[s];
            const double scale = tokens && prog.K ? static_cast<double>(*prog.K) : std::max(1.0, pk.value);
            const std::string lab = (tokens ? "buffer " : "reorder buffer ") + count_text(v);
            const float by = z.y + 4;
            dl->AddText(font, small, ImVec2(a.x + 1, by), col_text, lab.c_str(), nullptr, 0, nullptr);
            gauge(dl, ImVec2(a.x + 1, by + small + 3), ImVec2(z.x - 1, by + small + 11), v, scale,
                  pk.any ? std::optional<double>(pk.value) : std::nullopt, col_buffer_fill);
            if (inside(b.x0, b.y1, b.x1, b.y1 + buffer_band)) hover_stage = static_cast<int>(s) + 100000;
        }
    }
    // Tooltips and clicks.
    if (hover_edge >= 0) {
        const graph_edge& ge = prog.edges[static_cast<std::size_t>(hover_edge)];
        const std::uint32_t ti = g.edge_counter[static_cast<std::size_t>(hover_edge)];
        const counter_peak& pk = g.edge_peak[static_cast<std::size_t>(hover_edge)];
        ImGui::BeginTooltip();
        ImGui::Text("%s", ge.queue_counter.c_str());
        ImGui::TextDisabled("the bounded queue in front of %s", plain_relations(prog.stages[ge.to].name).c_str());
        if (ti == tm::no_index) ImGui::TextDisabled("the run has no such counter");
        else {
            ImGui::Text("at the cursor: %s%s", count_text(value_at(ti)).c_str(),
                        ge.capacity ? (" of " + count_text(*ge.capacity)).c_str() : "");
            if (pk.any)
                ImGui::Text("peak %s, first at %s", count_text(pk.value).c_str(),
                            format_duration(static_cast<double>(pk.ts) - off, 3).c_str());
        }
        ImGui::EndTooltip();
    } else if (hover_stage >= 0) {
        const bool buffer = hover_stage >= 100000;
        const std::uint32_t s = static_cast<std::uint32_t>(buffer ? hover_stage - 100000 : hover_stage);
        const graph_stage& gs = prog.stages[s];
        ImGui::BeginTooltip();
        ImGui::TextColored(ImColor(key_colour(gs.colour)), "%s", plain_relations(gs.name).c_str());
        if (!gs.kind.empty())
            ImGui::Text("kind %s%s", gs.kind.c_str(), analysis::is_serial_kind(gs.kind) ? " (serial)" : "");
        if (gs.threads)
            ImGui::Text("%llu thread%s bound to it", static_cast<unsigned long long>(*gs.threads),
                        *gs.threads == 1 ? "" : "s");
        if (!gs.note.empty()) {
            ImGui::PushTextWrapPos(fs * 28);
            ImGui::TextDisabled("%s", gs.note.c_str());
            ImGui::PopTextWrapPos();
        }
        if (!g.node_starts[s].empty())
            ImGui::Text("%llu nodes, %llu running at the cursor", static_cast<unsigned long long>(g.node_starts[s].size()),
                        static_cast<unsigned long long>(running_at(g, s, t)));
        if (g.buffer_counter[s] != tm::no_index) {
            const counter_peak& pk = g.buffer_peak[s];
            ImGui::Text("%s: %s at the cursor, peak %s", gs.buffer_counter.c_str(),
                        count_text(value_at(g.buffer_counter[s])).c_str(), count_text(pk.value).c_str());
        }
        const std::string why_not = nothing_started_note(g, s, t, off, plain_relations(gs.name));
        if (!why_not.empty()) ImGui::TextDisabled("%s", why_not.c_str());
        else ImGui::TextDisabled("click: select its latest node started at or before the cursor");
        ImGui::EndTooltip();
        if (ImGui::IsMouseClicked(ImGuiMouseButton_Left) && rr.run != tm::no_index) {
            // A click that selects nothing says why (under the scrubber) rather than doing nothing.
            click_note_ = why_not;
            click_note_cursor_ = st.cursor;
            const std::uint32_t v = latest_node_at(g, s, t);
            if (v != tm::no_index) {
                const tm::dag_node& nd = m.runs[rr.run].dag.nodes[v];
                if (nd.slice.valid()) st.select(doc, {rr.file, nd.slice});
            }
        }
    }

    // Run-level gauges: live iterations vs K, tokens in flight vs N.
    auto row = [&](const char* label, std::uint32_t ti, const counter_peak& pk, ImU32 fill, const char* bound_name,
                   const char* tip) {
        if (ti == tm::no_index) return;
        const ImVec2 p = ImGui::GetCursorScreenPos();
        const double v = value_at(ti);
        const double scale = prog.K ? static_cast<double>(*prog.K) : std::max(1.0, pk.value);
        dl->AddText(ImVec2(p.x + 8, p.y + (bar_row_h - fs) * 0.5f), col_text, label);
        gauge(dl, ImVec2(p.x + bar_label_w, p.y + 5), ImVec2(p.x + bar_label_w + bar_w, p.y + bar_row_h - 5), v, scale,
              pk.any ? std::optional<double>(pk.value) : std::nullopt, fill);
        std::string s = count_text(v);
        if (prog.K) s += " / " + std::string(bound_name) + " = " + std::to_string(*prog.K);
        s += "   (peak " + count_text(pk.value) + (prog.K || prog.graph ? "" : ", no K: the queues bound it") + ")";
        dl->AddText(mono, mono->FontSize, ImVec2(p.x + bar_label_w + bar_w + 10, p.y + (bar_row_h - mono->FontSize) * 0.5f),
                    col_text, s.c_str());
        ImGui::Dummy(ImVec2(avail, bar_row_h));
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", tip);
    };
    if (!prog.graph)   // a stage graph has packets, not iterations
        row(vocab::live_iterations.data(), g.live, g.live_peak, col_live_fill, "K",
            "iterations in flight at the cursor (counter `live iterations`), against program.K");
    row("footprint", g.footprint, g.footprint_peak, col_live_fill, "K",
        "stage graphs: packets in use in all queues at the cursor (counter `footprint packets`: the sum of the queue "
        "counters, which the trace model derives unless the trace recorded it; seed 004 Table III)");
    if (tokens || g.tokens != tm::no_index)
        row(vocab::tokens_in_flight.data(), g.tokens, g.tokens_peak, col_tokens_fill, "N",
            "tbb: tokens taken at the cursor (counter `tokens in flight`), against N (program.K)");
    ImGui::Dummy(ImVec2(avail, 10));
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
