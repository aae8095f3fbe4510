#include "bookmarks_view.hpp"

#include "../model/bookmarks.hpp"

#include <fmt/format.h>

#include <cstring>

namespace pipescope::viewer {

namespace {

// Appends the characters queued this frame from `from` on to the note waiting for the keyboard.
void take_note_text_from(view_state& st, std::size_t from) {
    ImGuiIO& io = ImGui::GetIO();
    if (!st.bookmark_edit || st.bookmark_edit->file >= st.arranged.size()) return;
    auto& list = st.arranged[st.bookmark_edit->file].bookmarks;
    if (st.bookmark_edit->index >= list.size()) return;
    for (int i = static_cast<int>(from); i < io.InputQueueCharacters.Size; ++i) {   // UTF-8
        const ImWchar c = io.InputQueueCharacters[i];
        std::string& s = list[st.bookmark_edit->index].note;
        if (c < 0x80) s += static_cast<char>(c);
        else if (c < 0x800) s += {static_cast<char>(0xC0 | (c >> 6)), static_cast<char>(0x80 | (c & 0x3F))};
        else
            s += {static_cast<char>(0xE0 | (c >> 12)), static_cast<char>(0x80 | ((c >> 6) & 0x3F)),
                  static_cast<char>(0x80 | (c & 0x3F))};
    }
    io.InputQueueCharacters.resize(0);
}

}   // namespace

void draw_bookmark_flags(view_context& ctx, ImDrawList* dl, const ruler_area& ruler) {
    const viewport& vp = ctx.state.vp;
    const float x0 = ruler.origin.x + ruler.label_w, y0 = ruler.origin.y, fs = ImGui::GetFontSize();
    const ImVec2 mp = ImGui::GetIO().MousePos;
    int n = 0;
    for (const placed_bookmark& p : placed_bookmarks(ctx.doc, ctx.state)) {
        ++n;
        const double px = vp.to_px(p.t);
        if (px < 0 || px > ruler.width) continue;
        const float x = x0 + static_cast<float>(px);
        const bool current = ctx.state.bookmark_current && *ctx.state.bookmark_current == p.ref;
        const std::string num = std::to_string(n);
        const float w = ImGui::CalcTextSize(num.c_str()).x + fs * 0.4f, h = fs + 2;
        dl->AddLine(ImVec2(x, y0), ImVec2(x, y0 + ruler.height), col_bookmark, 2.0f);
        dl->AddRectFilled(ImVec2(x, y0), ImVec2(x + w, y0 + h), col_bookmark);
        if (current) dl->AddRect(ImVec2(x, y0), ImVec2(x + w, y0 + h), IM_COL32(255, 255, 255, 255), 0, 0, 1.5f);
        dl->AddText(ImVec2(x + fs * 0.2f, y0 + 1), IM_COL32(20, 20, 20, 255), num.c_str());
        if (mp.x >= x - 2 && mp.x < x + w && mp.y >= y0 && mp.y < y0 + h)
            ImGui::SetTooltip("bookmark %d at %s%s%s ([ / ] step through them)", n, format_duration(p.t, 3).c_str(),
                              p.b->note.empty() ? "" : ": ", p.b->note.c_str());
    }
}

void draw_bookmark_lines(view_context& ctx, const track_area& fr) {
    const viewport& vp = ctx.state.vp;
    for (const placed_bookmark& p : placed_bookmarks(ctx.doc, ctx.state)) {
        const double px = vp.to_px(p.t);
        if (px < 0 || px > fr.width) continue;
        const float x = fr.x0 + static_cast<float>(px);
        fr.dl->AddLine(ImVec2(x, fr.clip_y0), ImVec2(x, fr.clip_y1), (col_bookmark & 0x00FFFFFF) | (150u << 24), 1.0f);
    }
}

void bookmark_keys(view_context& ctx) {
    if (ImGui::IsKeyPressed('B', false) && add_bookmark(ctx.doc, ctx.state)) {
        ctx.state.show_details = true;
        // What was typed after the B in this frame already is the note (a quick typist).
        const ImVector<ImWchar>& q = ImGui::GetIO().InputQueueCharacters;
        int b = 0;
        while (b < q.Size && q[b] != 'b' && q[b] != 'B') ++b;
        take_note_text_from(ctx.state, static_cast<std::size_t>(b < q.Size ? b + 1 : q.Size));
    }
    if (ImGui::IsKeyPressed(']', false)) step_bookmark(ctx.doc, ctx.state, +1);
    if (ImGui::IsKeyPressed('[', false)) step_bookmark(ctx.doc, ctx.state, -1);
}

void take_note_text(view_context& ctx) { take_note_text_from(ctx.state, 0); }

void draw_bookmarks_panel(view_context& ctx) {
    view_state& st = ctx.state;
    const std::vector<placed_bookmark> v = placed_bookmarks(ctx.doc, st);
    if (v.empty()) return;
    char title[48];
    *fmt::format_to_n(title, sizeof title - 1, "Bookmarks ({})###bookmarks", v.size()).out = '\0';
    if (st.bookmark_edit) ImGui::SetNextItemOpen(true);
    if (!ImGui::CollapsingHeader(title, ImGuiTreeNodeFlags_DefaultOpen)) return;
    std::optional<bookmark_ref> remove;
    int n = 0;
    for (const placed_bookmark& p : v) {
        ImGui::PushID(static_cast<int>(p.ref.file * 100000 + p.ref.index));
        const std::string label = fmt::format("{}  {}", ++n, format_duration(p.t, 3));
        const bool current = st.bookmark_current && *st.bookmark_current == p.ref;
        if (ImGui::Selectable(label.c_str(), current, 0, ImVec2(ImGui::GetFontSize() * 7, 0)))
            jump_to_bookmark(ctx.doc, st, p);
        ImGui::SameLine();
        const float del_w = ImGui::CalcTextSize("x").x + ImGui::GetStyle().FramePadding.x * 2;
        ImGui::SetNextItemWidth(ImGui::GetContentRegionAvail().x - del_w - ImGui::GetStyle().ItemSpacing.x);
        // A new bookmark's note asks for the keyboard until its field has it (ImGui gives it a frame later).
        const bool edit = st.bookmark_edit && *st.bookmark_edit == p.ref;
        if (edit) {
            take_note_text_from(st, 0);   // typed before the field has the keyboard (it drops them)
            ImGui::SetKeyboardFocusHere();
        }
        std::string& note = st.arranged[p.ref.file].bookmarks[p.ref.index].note;
        char buf[256];
        std::strncpy(buf, note.c_str(), sizeof buf - 1);
        buf[sizeof buf - 1] = '\0';
        // Focused by code, ImGui selects the text: what was already typed would be overwritten.
        const auto cursor_to_end = [](ImGuiInputTextCallbackData* data) {
            data->CursorPos = data->SelectionStart = data->SelectionEnd = data->BufTextLen;
            return 0;
        };
        if (ImGui::InputTextWithHint("##note", "note (Enter)", buf, sizeof buf,
                                     edit ? ImGuiInputTextFlags_CallbackAlways : 0, edit ? +cursor_to_end : nullptr))
            note = buf;
        if (edit && ImGui::IsItemActive()) st.bookmark_edit.reset();
        ImGui::SameLine();
        if (ImGui::SmallButton("x")) remove = p.ref;
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("Remove this bookmark");
        ImGui::PopID();
    }
    if (remove) remove_bookmark(st, *remove);
}

}   // namespace pipescope::viewer
