// The application shell: document, loading on a background thread, menus, welcome screen, file
// browser, recent files, examples, error display, and the active view with the details panel.
#pragma once

#include "save_screenshot.hpp"

#include "../model/document.hpp"
#include "../model/file_state.hpp"
#include "../model/lesson.hpp"
#include "../model/loader.hpp"
#include "../model/run_launcher.hpp"
#include "../model/view_state.hpp"
#include "../views/view.hpp"

#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace pipescope::viewer {

std::filesystem::path config_dir();                   // $XDG_CONFIG_HOME/pipescope or ~/.config/pipescope
std::vector<std::filesystem::path> find_examples();   // traces/*.pftrace of the source tree / install

// Where an open comes from: only what the user opens in the window goes into the recent files
// (never the command line, --screenshot, --script or test runs).
enum class open_origin { command_line, user };

class shell {
public:
    shell();
    // Background load; runs are added in open order.
    void open(const std::filesystem::path& p, open_origin from = open_origin::user);
    void add_loaded(load_result r);   // into the document (or the error list)
    void frame();                     // builds the whole UI for one frame
    bool set_view(std::string_view name);
    void poll_loads();

    // The lesson (--lesson, app/shell_lesson.cpp). open_lesson starts loading its traces and goes to
    // step `first` (0-based) once they have loaded; go_to_step applies a step's move at once (switches
    // the view, sets the cursor, frames the range, selects the node, aligns the runs) and opens the panel.
    void open_lesson(lesson l, std::size_t first);
    // A scaling sweep (`pipescope scale`'s DIR): loads its traces and shows the scaling view.
    void open_sweep(sweep s, open_origin from);
    void go_to_step(std::size_t k);
    std::optional<lesson> lesson_loaded;
    std::size_t lesson_step = 0;
    std::string lesson_note;   // what went wrong applying the current step

    document doc;
    view_state state;
    loader loads;
    run_launcher runs;                   // the run panel's recordings (views/run_panel.cpp)
    std::vector<std::string> errors;     // files that could not be opened
    std::vector<std::string> warnings;   // files read only up to their damage
    ImFont* mono = nullptr;
    bool quit = false;
    // Keep every file's arrangement and bookmarks (model/file_state.hpp; a user's window). Else only
    // of the files opened in the window, as the recent files (--script, --screenshot).
    bool keep_state_of_all_files = false;
    screenshot_state screenshot;   // File > Save screenshot... (app/save_screenshot.hpp)

    const std::vector<std::filesystem::path>& recent_files() const { return recent_; }
    // UI scale: the monitor's content scale (GLFW), unless View > UI scale or --ui-scale overrides
    // it. app/main.cpp rebuilds the fonts and the style when wanted_ui_scale() changes.
    float ui_scale = 1.f;   // the scale the fonts and style are built at
    float monitor_scale = 1.f;
    std::optional<float> scale_override;
    float wanted_ui_scale() const { return scale_override.value_or(monitor_scale); }
    void set_ui_scale(float s);   // rescales the side column's widths with it
    float side_width() const { return lesson_loaded && state.show_lesson ? lesson_width_ : details_width_; }
    bool file_browser_open() const { return browser_open_; }
    bool lesson_waiting() const { return lesson_pending_; }   // a lesson's first step waits for its traces

private:
    std::unique_ptr<view> view_;
    std::vector<std::filesystem::path> recent_, examples_;
    bool browser_open_ = false;
    std::filesystem::path browser_dir_;
    std::vector<std::filesystem::directory_entry> browser_entries_;
    bool browser_all_files_ = false;
    char browser_path_[1024] = {};

    void menus();
    void banners(std::vector<std::string>& list, const char* heading, ImU32 background, ImVec4 heading_colour);
    void global_keys();   // app/shell_keys.cpp
    void welcome();
    void file_browser();
    void refresh_browser();
    void load_recent();
    void save_recent(const std::filesystem::path& p);
    void side_column(view_context& ctx);   // the lesson and details panels, right of the view
    void splitter(float& width, float avail);
    float clamp_side_width(float width, float avail) const;
    // The files' arrangements and bookmarks (app/shell_file_state.cpp): read when a file is added,
    // written when changed, forgotten with the files.
    file_state_store file_states_;
    void attach_file_state(bool user_opened);
    void save_file_states();
    void forget_file_states();
    void bookmark_menu();
    static constexpr float splitter_w = 8;
    float details_width_ = 360, lesson_width_ = 420;   // the side column's, as last dragged
    bool lesson_pending_ = false;                      // go to lesson_step once the loads finish
};

}   // namespace pipescope::viewer
