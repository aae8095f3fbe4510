#include "shell.hpp"

#include "open_in_perfetto.hpp"

#include "../model/open_framing.hpp"

#include "../views/palette.hpp"
#include "../views/run_panel.hpp"

#include <pipescope/analysis/numbers.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>

#ifndef PIPESCOPE_SOURCE_DIR
#define PIPESCOPE_SOURCE_DIR ""
#endif

namespace fs = std::filesystem;

namespace pipescope::viewer {

// ---------------------------------------------------------------------------------------------

fs::path config_dir() {
    if (const char* x = std::getenv("XDG_CONFIG_HOME"); x && *x) return fs::path(x) / "pipescope";
    if (const char* h = std::getenv("HOME"); h && *h) return fs::path(h) / ".config" / "pipescope";
    return {};
}

std::vector<fs::path> find_examples() {
    std::vector<fs::path> dirs;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (!ec) {
        dirs.push_back(exe.parent_path() / "../share/pipescope/traces");
        dirs.push_back(exe.parent_path() / "../traces");
        dirs.push_back(exe.parent_path() / "../../traces");
    }
    if (*PIPESCOPE_SOURCE_DIR) dirs.push_back(fs::path(PIPESCOPE_SOURCE_DIR) / "traces");
    for (const auto& d : dirs) {
        std::vector<fs::path> v;
        for (const auto& e : fs::directory_iterator(d, ec))
            if (e.path().extension() == ".pftrace") v.push_back(fs::weakly_canonical(e.path(), ec));
        if (!v.empty()) {
            std::sort(v.begin(), v.end());
            return v;
        }
    }
    return {};
}

shell::shell() {
    examples_ = find_examples();
    load_recent();
    file_states_.set_dir(config_dir());
    set_view("timeline");
    std::error_code ec;
    browser_dir_ = fs::current_path(ec);
}

bool shell::set_view(std::string_view name) {
    const view_entry* e = find_view(name);
    if (!e) return false;
    view_ = e->make();
    state.active_view = e->name;
    state.playing =
        false;   // the shown view advances the cursor (views/replay.hpp); a hidden replay would spin the frame loop
    return true;
}

void shell::load_recent() {
    recent_.clear();
    std::ifstream in(config_dir() / "recent.txt");
    std::string line;
    while (std::getline(in, line))
        if (!line.empty()) recent_.emplace_back(line);
}

void shell::save_recent(const fs::path& p) {
    std::error_code ec;
    // One spelling per file: "tests/data/lesson/../../../traces/x" and "traces/x" are one entry.
    fs::path abs = fs::weakly_canonical(fs::absolute(p, ec), ec);
    if (ec) abs = fs::absolute(p, ec).lexically_normal();
    recent_.erase(std::remove(recent_.begin(), recent_.end(), abs), recent_.end());
    recent_.insert(recent_.begin(), abs);
    if (recent_.size() > 12) recent_.resize(12);
    const fs::path dir = config_dir();
    if (dir.empty()) return;
    fs::create_directories(dir, ec);
    std::ofstream out(dir / "recent.txt", std::ios::trunc);
    for (const auto& r : recent_) out << r.string() << '\n';
}

void shell::open(const fs::path& p, open_origin from) {
    if (looks_like_sweep(p)) {   // a sweep's traces, and its plot in the scaling view
        try {
            open_sweep(load_sweep(p), from);
        } catch (const std::exception& e) {
            errors.push_back(e.what());
        }
        return;
    }
    if (!looks_like_lesson(p)) {
        loads.start(p, from == open_origin::user);
        return;
    }
    // A lesson replaces what is open: its steps refer to its own runs.
    try {
        lesson l = load_lesson(p, [](std::string_view v) { return find_view(v) != nullptr; });
        doc.clear();
        forget_file_states();
        state.select(doc, {});
        if (from == open_origin::user) save_recent(p);
        open_lesson(std::move(l), 0);
    } catch (const std::exception& e) {
        errors.push_back(e.what());
    }
}

void shell::open_sweep(sweep s, open_origin from) {
    const std::vector<fs::path> traces = s.traces();
    state.scaling = std::move(s);
    for (const fs::path& t : traces) loads.start(t, false);
    if (from == open_origin::user) save_recent(state.scaling->dir);
    set_view("scaling");
}

void shell::add_loaded(load_result r) {
    if (!r.file) {
        errors.push_back(r.error);
        return;
    }
    if (r.user_opened) save_recent(r.path);
    if (std::string note = damage_note(*r.file); !note.empty()) warnings.push_back(std::move(note));
    if (std::string note = no_runs_note(*r.file); !note.empty()) {   // nothing to show: not an empty run
        warnings.push_back(std::move(note));
        return;
    }
    // Everything framed again while nothing was zoomed or selected, else the range and the
    // selection kept (model/open_framing.hpp); files append, so selections stay valid.
    const axis_before_add axis = note_axis_before_add(doc, state);
    doc.add(std::move(r.file));
    attach_file_state(r.user_opened);
    // Runs recorded into different files ran at unrelated times: on one absolute axis all but
    // one would be off screen, so a second file switches to aligned runs (the user can undo it).
    if (doc.files.size() == 2) state.align_runs = true;
    if (!axis.had_runs) state.lines_open.clear();   // Close all left the old runs' entries
    state.lines_open.resize(doc.runs.size(), 1);
    carry_axis_after_add(doc, state, axis);
}

void shell::poll_loads() {
    for (auto& r : loads.take()) add_loaded(std::move(r));
}

// ---------------------------------------------------------------------------------------------

void shell::menus() {
    if (!ImGui::BeginMainMenuBar()) return;
    if (ImGui::BeginMenu("File")) {
        if (ImGui::MenuItem("Open...", "Ctrl+O")) browser_open_ = true;
        if (ImGui::MenuItem("New run...", "Ctrl+R")) runs.show = true;
        if (ImGui::BeginMenu("Open recent", !recent_.empty())) {
            for (const auto& r : recent_)
                if (ImGui::MenuItem(r.string().c_str())) open(r);
            ImGui::EndMenu();
        }
        if (ImGui::BeginMenu("Open in Perfetto UI", !doc.empty())) {
            for (const auto& f : doc.files) {
                const std::string label = f->path.empty() ? "(not from a file)" : f->path.filename().string();
                if (ImGui::MenuItem(label.c_str(), nullptr, false, !f->path.empty()))
                    if (std::string e = open_in_perfetto(f->path); !e.empty()) errors.push_back(std::move(e));
            }
            ImGui::EndMenu();
        }
        if (ImGui::MenuItem("Close all", nullptr, false, !doc.empty())) {
            doc.clear();
            forget_file_states();
            state.scaling.reset();
            state.select(doc, {});
        }
        ImGui::Separator();
        if (ImGui::MenuItem("Save screenshot...")) screenshot.wanted = true;   // after the next frame
        ImGui::Separator();
        if (ImGui::MenuItem("Quit", "Ctrl+Q")) quit = true;
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("Examples")) {
        if (examples_.empty()) ImGui::MenuItem("(no traces/ directory found)", nullptr, false, false);
        for (const auto& e : examples_)
            if (ImGui::MenuItem(e.filename().string().c_str())) open(e);
        ImGui::EndMenu();
    }
    if (ImGui::BeginMenu("View")) {
        int n = 0;
        for (const auto& v : view_registry()) {
            const std::string key = std::to_string(++n);
            if (ImGui::MenuItem(v.title, key.c_str(), state.active_view == v.name)) set_view(v.name);
        }
        ImGui::Separator();
        ImGui::MenuItem("Details panel", nullptr, &state.show_details);
        ImGui::MenuItem("Lesson panel", "L", &state.show_lesson, lesson_loaded.has_value());
        ImGui::MenuItem("Align runs to their start", nullptr, &state.align_runs);
        ImGui::MenuItem("All flows in view", nullptr, &state.all_flows);
        bookmark_menu();
        if (ImGui::BeginMenu("UI scale")) {
            char auto_label[48];
            *fmt::format_to_n(auto_label, sizeof auto_label - 1, "Monitor's ({})", analysis::numbers::percent(monitor_scale))
                 .out = '\0';
            if (ImGui::MenuItem(auto_label, nullptr, !scale_override)) scale_override.reset();
            for (const float f : {0.75f, 1.f, 1.25f, 1.5f, 1.75f, 2.f, 2.5f, 3.f}) {
                char label[16];
                *fmt::format_to_n(label, sizeof label - 1, "{}", analysis::numbers::percent(f)).out = '\0';
                if (ImGui::MenuItem(label, nullptr, scale_override && std::abs(*scale_override - f) < 0.01f))
                    scale_override = f;
            }
            ImGui::EndMenu();
        }
        ImGui::Separator();
        ImGui::MenuItem("Help", "?", &state.show_help);
        ImGui::EndMenu();
    }
    if (!doc.empty()) {
        char b[160];
        *fmt::format_to_n(b, sizeof b - 1, "{} file{}, {} run{}, {:.2f}M events", doc.files.size(),
                          doc.files.size() == 1 ? "" : "s", doc.runs.size(), doc.runs.size() == 1 ? "" : "s",
                          static_cast<double>(doc.event_count()) / 1e6)
             .out = '\0';
        ImGui::SameLine(ImGui::GetWindowWidth() - ImGui::CalcTextSize(b).x - 20);
        ImGui::TextDisabled("%s", b);
    }
    ImGui::EndMainMenuBar();
}

void shell::welcome() {
    ImGui::Dummy(ImVec2(0, 30));
    ImGui::Indent(40);
    ImGui::SetWindowFontScale(1.6f);
    ImGui::TextUnformatted("pipescope-viewer");
    ImGui::SetWindowFontScale(1.0f);
    ImGui::TextDisabled(
        "How pipeline-parallel programs were scheduled: open a .pftrace recorded by `pipescope run ... -o`.");
    ImGui::Dummy(ImVec2(0, 10));
    ImGui::TextUnformatted("Drop trace files on this window, use File > Open (Ctrl+O), or start with an example:");
    ImGui::Dummy(ImVec2(0, 6));
    for (const auto& e : examples_) {
        if (ImGui::Button(e.filename().string().c_str(), ImVec2(320, 0))) open(e);
    }
    if (examples_.empty()) ImGui::TextDisabled("(no example traces found next to the executable)");
    if (!recent_.empty()) {
        ImGui::Dummy(ImVec2(0, 10));
        ImGui::TextUnformatted("Recent files:");
        for (const auto& r : recent_)
            if (ImGui::Selectable(r.string().c_str())) open(r);
    }
    ImGui::Dummy(ImVec2(0, 10));
    if (ImGui::Button("Open...")) browser_open_ = true;
    ImGui::SameLine();
    if (ImGui::Button("Help")) state.show_help = true;
    ImGui::Unindent(40);
}

void shell::refresh_browser() {
    browser_entries_.clear();
    std::error_code ec;
    for (const auto& e : fs::directory_iterator(browser_dir_, fs::directory_options::skip_permission_denied, ec)) {
        if (e.path().filename().string().starts_with(".")) continue;
        std::error_code ec2;
        if (e.is_directory(ec2) || browser_all_files_ || e.path().extension() == ".pftrace" ||
            e.path().extension() == ".tmp" || e.path().filename() == "lesson.json")
            browser_entries_.push_back(e);
    }
    std::sort(browser_entries_.begin(), browser_entries_.end(), [](const auto& a, const auto& b) {
        std::error_code e1, e2;
        const bool da = a.is_directory(e1), db = b.is_directory(e2);
        if (da != db) return da;
        return a.path().filename() < b.path().filename();
    });
    *fmt::format_to_n(browser_path_, sizeof browser_path_ - 1, "{}", browser_dir_.string()).out = '\0';
}

void shell::file_browser() {
    if (!browser_open_) return;
    static bool first = true;
    if (first) {
        refresh_browser();
        first = false;
    }
    ImGui::SetNextWindowSize(ImVec2(640, 460), ImGuiCond_FirstUseEver);
    if (ImGui::Begin("Open trace", &browser_open_)) {
        ImGui::SetNextItemWidth(-140);
        if (ImGui::InputText("##path", browser_path_, sizeof browser_path_, ImGuiInputTextFlags_EnterReturnsTrue)) {
            const fs::path p(browser_path_);
            std::error_code ec;
            if (fs::is_directory(p, ec)) {
                browser_dir_ = p;
                refresh_browser();
            } else if (fs::exists(p, ec)) {
                open(p);
                browser_open_ = false;
            }
        }
        ImGui::SameLine();
        if (ImGui::Checkbox("all files", &browser_all_files_)) refresh_browser();
        if (ImGui::Button("..")) {
            browser_dir_ = browser_dir_.parent_path();
            refresh_browser();
        }
        ImGui::SameLine();
        ImGui::TextDisabled("%s", browser_dir_.string().c_str());
        // The list leaves a line for the Open and Cancel buttons under it.
        ImGui::BeginChild("##entries", ImVec2(0, -ImGui::GetFrameHeightWithSpacing()), true);
        fs::path go;
        for (const auto& e : browser_entries_) {
            std::error_code ec;
            const bool dir = e.is_directory(ec);
            std::string label = (dir ? "[dir] " : "      ") + e.path().filename().string();
            if (!dir) {
                char b[32];
                *fmt::format_to_n(b, sizeof b - 1, "   {:.1f} MB", static_cast<double>(e.file_size(ec)) / 1e6).out = '\0';
                label += b;
            }
            // A click chooses a file (its path goes into the field, Open opens it); a double click opens it.
            const bool chosen = !dir && e.path().string() == browser_path_;
            if (ImGui::Selectable(label.c_str(), chosen, ImGuiSelectableFlags_AllowDoubleClick)) {
                if (dir || ImGui::IsMouseDoubleClicked(0)) go = e.path();
                else *fmt::format_to_n(browser_path_, sizeof browser_path_ - 1, "{}", e.path().string()).out = '\0';
            }
        }
        ImGui::EndChild();
        if (ImGui::Button("Open")) go = fs::path(browser_path_);
        ImGui::SameLine();
        if (ImGui::Button("Cancel")) browser_open_ = false;
        if (!go.empty()) {
            std::error_code ec;
            if (fs::is_directory(go, ec)) {
                browser_dir_ = go;
                refresh_browser();
            } else if (fs::exists(go, ec)) {
                open(go);
                browser_open_ = false;
            }
        }
    }
    ImGui::End();
}

void shell::set_ui_scale(float s) {
    details_width_ *= s / ui_scale;
    lesson_width_ *= s / ui_scale;
    ui_scale = s;
}

// The side column's width: what the user dragged it to, within what the window leaves the view.
float shell::clamp_side_width(float width, float avail) const {
    const float lo = 220.f * ui_scale, hi = std::max(lo, avail * 0.6f);
    return std::clamp(width, lo, hi);
}

// A vertical bar between the view and the side column; dragging it moves the border.
void shell::splitter(float& width, float avail) {
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float h = ImGui::GetContentRegionAvail().y;
    ImGui::InvisibleButton("##splitter", ImVec2(splitter_w, std::max(h, 1.f)));
    const bool active = ImGui::IsItemActive(), hovered = ImGui::IsItemHovered();
    if (active || hovered) ImGui::SetMouseCursor(ImGuiMouseCursor_ResizeEW);
    // The release's own frame counts too: the pointer may have moved in the frame it was let go.
    if (active || ImGui::IsItemDeactivated())
        width = clamp_side_width(clamp_side_width(width, avail) - ImGui::GetIO().MouseDelta.x, avail);
    const ImU32 c = active    ? IM_COL32(120, 170, 255, 255)
                    : hovered ? IM_COL32(120, 170, 255, 160)
                              : IM_COL32(60, 64, 76, 255);
    ImGui::GetWindowDrawList()->AddRectFilled(ImVec2(p.x + splitter_w * 0.5f - 1, p.y),
                                              ImVec2(p.x + splitter_w * 0.5f + 1, p.y + h), c);
}

// Messages that stay until dismissed, one box each.
void shell::banners(std::vector<std::string>& list, const char* heading, ImU32 background, ImVec4 heading_colour) {
    ImGui::PushID(heading);
    for (std::size_t i = 0; i < list.size();) {
        ImGui::PushStyleColor(ImGuiCol_ChildBg, background);
        ImGui::PushID(static_cast<int>(i));
        const float h = ImGui::GetTextLineHeightWithSpacing() * 2.6f;
        ImGui::BeginChild("##banner", ImVec2(0, h), true);
        ImGui::TextColored(heading_colour, "%s", heading);
        ImGui::SameLine(ImGui::GetWindowWidth() - 80);
        const bool dismiss = ImGui::SmallButton("dismiss");
        ImGui::TextWrapped("%s", list[i].c_str());
        ImGui::EndChild();
        ImGui::PopID();
        ImGui::PopStyleColor();
        if (dismiss) list.erase(list.begin() + static_cast<std::ptrdiff_t>(i));
        else ++i;
    }
    ImGui::PopID();
}

void shell::frame() {
    state.layout.clear();
    poll_loads();
    for (const auto& p : runs.take_finished()) open(p);              // a run from the run panel, beside the open ones
    if (lesson_pending_ && !loads.busy()) go_to_step(lesson_step);   // the lesson's traces have loaded
    global_keys();
    menus();
    const ImGuiViewport* vp = ImGui::GetMainViewport();
    ImGui::SetNextWindowPos(vp->WorkPos);
    ImGui::SetNextWindowSize(vp->WorkSize);
    ImGui::PushStyleVar(ImGuiStyleVar_WindowRounding, 0);
    ImGui::Begin("##main", nullptr,
                 ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoMove |
                     ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoBringToFrontOnFocus |
                     ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoScrollbar);
    ImGui::PopStyleVar();
    banners(errors, "Could not open the trace:", IM_COL32(90, 28, 30, 255), ImVec4(1, 0.75f, 0.75f, 1));
    banners(warnings, "Read with a warning:", IM_COL32(92, 66, 18, 255), ImVec4(1, 0.86f, 0.55f, 1));
    for (const auto& p : loads.in_progress()) {
        const float t = static_cast<float>(ImGui::GetTime());
        const ImVec2 c = ImGui::GetCursorScreenPos();
        ImDrawList* dl = ImGui::GetWindowDrawList();
        const float r = 7;
        const float a0 = t * 6.0f;
        dl->PathArcTo(ImVec2(c.x + r + 2, c.y + r + 2), r, a0, a0 + 4.2f, 16);
        dl->PathStroke(IM_COL32(120, 170, 255, 255), 0, 2.5f);
        ImGui::Dummy(ImVec2(2 * r + 6, 2 * r + 4));
        ImGui::SameLine();
        ImGui::Text("Loading %s  (%.1f MB, %.1f s)...", p.name.c_str(), static_cast<double>(p.bytes) / 1e6, p.seconds);
    }
    const bool lesson_open = lesson_loaded && state.show_lesson;
    if (doc.empty() && !lesson_open) {
        if (loads.in_progress().empty()) welcome();
    } else if (view_) {
        // The side column: the details panel, or the lesson panel (wider: it holds sentences) with
        // the details under it, right of a splitter that keeps the width it is dragged to (the
        // splitter takes the first splitter_w pixels of side_w, where the item spacing used to be). A
        // lesson whose traces did not load still shows its panel.
        const bool side = lesson_open || state.show_details;
        const float avail = ImGui::GetContentRegionAvail().x;
        float& width = lesson_open ? lesson_width_ : details_width_;
        const float side_w = side ? clamp_side_width(width, avail) : 0.f;
        view_context ctx{doc, state, mono};
        ImGui::BeginChild("##view", ImVec2(avail - side_w, 0), false,
                          ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
        if (!doc.empty()) view_->draw(ctx);
        else if (loads.in_progress().empty())
            ImGui::TextDisabled("None of the lesson's traces could be loaded (see above).");
        ImGui::EndChild();
        if (side) {
            ImGui::SameLine(0, 0);
            splitter(width, avail);
            ImGui::SameLine(0, 0);
            side_column(ctx);
        }
    }
    ImGui::End();
    file_browser();
    draw_run_panel(runs, ui_scale);
    view_context ctx{doc, state, mono};
    draw_help_overlay(ctx);
    draw_screenshot_notice(screenshot);
    if (!state.view_request.empty()) {   // e.g. the scaling view's click: the run in the timeline
        set_view(state.view_request);
        state.view_request.clear();
    }
    save_file_states();
}

}   // namespace pipescope::viewer
