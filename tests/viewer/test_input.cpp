// The input queue (frame batching that keeps quick taps) and the scripted-input language.
#include "model/input_queue.hpp"
#include "model/input_script.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <catch2/catch.hpp>

#include <sstream>

using namespace pipescope::viewer;
using ev = input_event;

namespace {
std::vector<std::vector<ev>> frames_of(input_queue& q) {
    std::vector<std::vector<ev>> f;
    while (!q.empty()) f.push_back(q.take_frame());
    return f;
}
std::vector<script_step> parse(const std::string& text) {
    std::istringstream in(text);
    return parse_script(in, "t.txt");
}
}   // namespace

TEST_CASE("input queue: a press and its release within one frame land in two frames", "[input]") {
    input_queue q;
    q.push(ev::key(GLFW_KEY_F, true));
    q.push(ev::text('f'));
    q.push(ev::key(GLFW_KEY_F, false));
    const auto f = frames_of(q);
    REQUIRE(f.size() == 2);
    CHECK(f[0] == std::vector{ev::key(GLFW_KEY_F, true), ev::text('f')});
    CHECK(f[1] == std::vector{ev::key(GLFW_KEY_F, false)});
}

TEST_CASE("input queue: different keys share a frame, in order", "[input]") {
    input_queue q;
    for (const auto& e : key_events("ctrl+o")) q.push(e);
    const auto f = frames_of(q);
    REQUIRE(f.size() == 2);
    CHECK(f[0] == std::vector{ev::key(GLFW_KEY_LEFT_CONTROL, true), ev::key(GLFW_KEY_O, true)});
    CHECK(f[1] == std::vector{ev::key(GLFW_KEY_O, false), ev::key(GLFW_KEY_LEFT_CONTROL, false)});
}

// The modifiers ImGui sees in each frame: those held once the frame's events are applied (it reads
// io.KeyCtrl once per frame), and a key pressed in the frame is seen with them.
namespace {
struct chord_seen {
    int key;
    bool ctrl, shift;
};
std::vector<chord_seen> presses_seen(const std::vector<std::vector<ev>>& frames, bool ctrl = false, bool shift = false) {
    std::vector<chord_seen> seen;
    for (const auto& fr : frames) {
        std::vector<int> pressed;
        for (const auto& e : fr) {
            if (e.what != ev::kind::key) continue;
            if (e.code == GLFW_KEY_LEFT_CONTROL) ctrl = e.down;
            else if (e.code == GLFW_KEY_LEFT_SHIFT) shift = e.down;
            else if (e.down) pressed.push_back(e.code);
        }
        for (int k : pressed) seen.push_back({k, ctrl, shift});
    }
    return seen;
}
}   // namespace

// xdotool's `key ctrl+o` on a real X server: Ctrl down, then (a frame later) O down, Ctrl up and
// O up within microseconds. O's press and Ctrl's release must not share a frame.
TEST_CASE("input queue: a key is seen with the modifiers it was pressed with (issue 37, 3)", "[input]") {
    const int ctrl = ev::mod_ctrl, shift = ev::mod_shift;
    input_queue q;
    q.push(ev::key(GLFW_KEY_LEFT_CONTROL, true));
    auto first = q.take_frame();
    q.push(ev::key(GLFW_KEY_O, true, ctrl));
    q.push(ev::key(GLFW_KEY_LEFT_CONTROL, false, ctrl));
    q.push(ev::key(GLFW_KEY_O, false));
    auto f = frames_of(q);
    f.insert(f.begin(), first);
    auto seen = presses_seen(f);
    REQUIRE(seen.size() == 1);
    CHECK(seen[0].key == GLFW_KEY_O);
    CHECK(seen[0].ctrl);
    // The whole chord in one batch, and Shift+Return the same way.
    for (const auto& e : {ev::key(GLFW_KEY_LEFT_SHIFT, true), ev::key(GLFW_KEY_ENTER, true, shift),
                          ev::key(GLFW_KEY_LEFT_SHIFT, false, shift), ev::key(GLFW_KEY_ENTER, false)})
        q.push(e);
    seen = presses_seen(frames_of(q));
    REQUIRE(seen.size() == 1);
    CHECK(seen[0].shift);
    // A key pressed after the modifier's release is seen without it: `ctrl+f` then `i` typed.
    for (const auto& e :
         {ev::key(GLFW_KEY_LEFT_CONTROL, true), ev::key(GLFW_KEY_F, true, ctrl), ev::key(GLFW_KEY_LEFT_CONTROL, false, ctrl),
          ev::key(GLFW_KEY_F, false), ev::key(GLFW_KEY_I, true), ev::text('i'), ev::key(GLFW_KEY_I, false)})
        q.push(e);
    seen = presses_seen(frames_of(q));
    REQUIRE(seen.size() == 2);
    CHECK((seen[0].key == GLFW_KEY_F && seen[0].ctrl));
    CHECK((seen[1].key == GLFW_KEY_I && !seen[1].ctrl));
    CHECK(is_modifier_key(GLFW_KEY_RIGHT_SUPER));
    CHECK_FALSE(is_modifier_key(GLFW_KEY_MENU));
}

TEST_CASE("input queue: three taps of one key take six frames, none lost", "[input]") {
    input_queue q;
    for (int i = 0; i < 3; ++i)
        for (const auto& e : key_events("w")) q.push(e);
    const auto f = frames_of(q);
    REQUIRE(f.size() == 6);
    int presses = 0;
    for (const auto& fr : f)
        for (const auto& e : fr) presses += e.what == ev::kind::key && e.down;
    CHECK(presses == 3);
}

TEST_CASE("input queue: a click happens where the pointer was, a move after it waits", "[input]") {
    input_queue q;
    q.push(ev::move(10, 10));
    q.push(ev::move(20, 30));
    q.push(ev::button(0, true));
    q.push(ev::move(50, 30));
    q.push(ev::button(0, false));
    const auto f = frames_of(q);
    REQUIRE(f.size() == 2);
    CHECK(f[0] == std::vector{ev::move(10, 10), ev::move(20, 30), ev::button(0, true)});
    CHECK(f[1] == std::vector{ev::move(50, 30), ev::button(0, false)});
}

TEST_CASE("input queue: a wheel zooms where it happened, frame marks split", "[input]") {
    input_queue q;
    q.push(ev::move(5, 5));
    q.push(ev::wheel(0, 1));
    q.push(ev::wheel(0, 1));
    q.push(ev::move(6, 6));
    q.push(ev::next_frame());
    q.push(ev::next_frame());
    q.push(ev::text('x'));
    const auto f = frames_of(q);
    REQUIRE(f.size() == 3);
    CHECK(f[0].size() == 3);
    CHECK(f[1] == std::vector{ev::move(6, 6)});
    CHECK(f[2] == std::vector{ev::text('x')});
}

TEST_CASE("script: key chords as GLFW reports them", "[input]") {
    CHECK(key_events("?") == std::vector{ev::key(GLFW_KEY_LEFT_SHIFT, true), ev::key(GLFW_KEY_SLASH, true), ev::text('?'),
                                         ev::key(GLFW_KEY_SLASH, false), ev::key(GLFW_KEY_LEFT_SHIFT, false)});
    CHECK(key_events("ctrl+1") == std::vector{ev::key(GLFW_KEY_LEFT_CONTROL, true), ev::key(GLFW_KEY_1, true),
                                              ev::key(GLFW_KEY_1, false), ev::key(GLFW_KEY_LEFT_CONTROL, false)});
    CHECK(key_events("shift+enter").size() == 4);   // no character
    CHECK(key_events("esc") == std::vector{ev::key(GLFW_KEY_ESCAPE, true), ev::key(GLFW_KEY_ESCAPE, false)});
    CHECK(key_events("F1")[0] == ev::key(GLFW_KEY_F1, true));
    CHECK(key_events("H")[0] == ev::key(GLFW_KEY_LEFT_SHIFT, true));
    CHECK(key_events("+")[2] == ev::text('+'));
    CHECK(key_events("ctrl++")[1] == ev::key(GLFW_KEY_LEFT_SHIFT, true));
    CHECK(key_events("w", key_phase::press) == std::vector{ev::key(GLFW_KEY_W, true), ev::text('w')});
    CHECK(key_events("w", key_phase::release) == std::vector{ev::key(GLFW_KEY_W, false)});
    CHECK_THROWS_WITH(key_events("ctlr+f"), "unknown modifier 'ctlr' (ctrl, shift, alt, super)");
    CHECK_THROWS_WITH(key_events("f13"), "unknown key 'f13'");
    CHECK_THROWS_WITH(key_events("banana"), "unknown key 'banana'");
}

TEST_CASE("script: every command parses, comments and blank lines are skipped", "[input]") {
    const auto s = parse(
        "# a test\n\nkey ctrl+f\ntext stage 2\nmove 10 20\nclick 1 2 right double shift\n"
        "drag 0 0 80 0 shift\nscroll 5 5 -1\nscroll 5 5 0 2 shift\nframes 3\nwait-loaded\n"
        "screenshot out dir/a.png\ndump s.json\nexpect /view dag\nexpect /visible/start >= 0\n"
        "expect /selection/name == \"stage 1\"\nresize 1000 700\ndrop a.pftrace b.pftrace\nkeydown w\nkeyup w\nleave\n");
    REQUIRE(s.size() == 19);
    using op = script_step::op;
    CHECK(s[0].line == 3);
    CHECK(s[0].events.size() == 4);
    CHECK(s[1].events.size() == 7);
    CHECK(s[1].events[5] == ev::text(' '));
    CHECK(s[2].events == std::vector{ev::move(10, 20)});
    CHECK(s[3].events.size() == 1 + 1 + 4 + 1);   // move, shift down, two clicks, shift up
    CHECK(s[3].events[2] == ev::button(1, true));
    CHECK(s[4].events.front() == ev::move(0, 0));
    CHECK(s[4].events[1] == ev::key(GLFW_KEY_LEFT_SHIFT, true));
    CHECK(s[5].events.back() == ev::wheel(0, -1));
    CHECK(s[6].events[2] == ev::wheel(2, 0));
    CHECK((s[7].what == op::frames && s[7].count == 3));
    CHECK(s[8].what == op::wait_loaded);
    CHECK((s[9].what == op::screenshot && s[9].path == "out dir/a.png"));
    CHECK((s[10].what == op::dump && s[10].path == "s.json"));
    CHECK((s[11].what == op::expect && s[11].pointer == "/view" && s[11].compare == "==" && s[11].value == "dag"));
    CHECK((s[12].compare == ">=" && s[12].value == "0"));
    CHECK(s[13].value == "\"stage 1\"");
    CHECK((s[14].what == op::resize && s[14].width == 1000 && s[14].height == 700));
    CHECK((s[15].what == op::drop && s[15].paths.size() == 2));
    CHECK(s[16].events.size() == 2);
    CHECK(s[17].events.size() == 1);
    CHECK(s[18].events == std::vector{ev::leave()});
}

TEST_CASE("script: a drag moves in steps, one frame each", "[input]") {
    const auto s = parse("drag 0 0 80 40\n");
    input_queue q;
    for (const auto& e : s[0].events) q.push(e);
    const auto f = frames_of(q);
    REQUIRE(f.size() == 9);   // the press, then 8 steps (the release with the last)
    CHECK(f[0].back() == ev::button(0, true));
    CHECK(f[4].front() == ev::move(40, 20));
    CHECK(f[8] == std::vector{ev::move(80, 40), ev::button(0, false)});
}

TEST_CASE("script: the real devices and a shell command (xdotool)", "[input]") {
    using op = script_step::op;
    const auto s = parse("devices on\nshell xdotool key 'ctrl+o'\ndevices off\n");
    REQUIRE(s.size() == 3);
    CHECK((s[0].what == op::devices && s[0].count == 1));
    CHECK((s[1].what == op::shell && s[1].path == "xdotool key 'ctrl+o'"));
    CHECK((s[2].what == op::devices && s[2].count == 0));
    CHECK_THROWS_WITH(parse("devices maybe\n"), "t.txt:1: usage: devices on|off");
    CHECK_THROWS_WITH(parse("shell\n"), "t.txt:1: usage: shell COMMAND");
}

TEST_CASE("script: mistakes name the file and the line", "[input]") {
    CHECK_THROWS_WITH(parse("frames 2\nfly 3\n"), Catch::Matchers::Contains("t.txt:2: unknown command 'fly'"));
    CHECK_THROWS_WITH(parse("frames 0\n"), "t.txt:1: expected N (an integer >= 1), got '0'");
    CHECK_THROWS_WITH(parse("click 10\n"), "t.txt:1: usage: click X Y [left|right|middle] [double] [ctrl|shift|alt]...");
    CHECK_THROWS_WITH(parse("move 1 x\n"), "t.txt:1: expected Y, got 'x'");
    CHECK_THROWS_WITH(parse("expect view dag\n"), "t.txt:1: expected a JSON pointer starting with '/', got 'view'");
    CHECK_THROWS_WITH(parse("expect /view\n"), "t.txt:1: usage: expect /json/pointer [== != < <= > >=] VALUE");
    CHECK_THROWS_WITH(parse("key ctrl+\n"), Catch::Matchers::Contains("t.txt:1:"));
    CHECK_THROWS_WITH(parse("resize 10 10\n"), "t.txt:1: expected W (an integer >= 200), got '10'");
    CHECK_THROWS_WITH(load_script("/nonexistent/s.txt"), "/nonexistent/s.txt: cannot be read");
}
