#include "input_script.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>   // only the key codes: the script speaks GLFW's language, like the real keyboard

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <optional>
#include <charconv>
#include <fstream>
#include <sstream>

namespace pipescope::viewer {

namespace {

struct named_key {
    std::string_view name;
    int code;
};
constexpr std::array named_keys{
    named_key{"esc", GLFW_KEY_ESCAPE},    named_key{"escape", GLFW_KEY_ESCAPE},  named_key{"enter", GLFW_KEY_ENTER},
    named_key{"return", GLFW_KEY_ENTER},  named_key{"tab", GLFW_KEY_TAB},        named_key{"backspace", GLFW_KEY_BACKSPACE},
    named_key{"delete", GLFW_KEY_DELETE}, named_key{"insert", GLFW_KEY_INSERT},  named_key{"home", GLFW_KEY_HOME},
    named_key{"end", GLFW_KEY_END},       named_key{"pageup", GLFW_KEY_PAGE_UP}, named_key{"pagedown", GLFW_KEY_PAGE_DOWN},
    named_key{"left", GLFW_KEY_LEFT},     named_key{"right", GLFW_KEY_RIGHT},    named_key{"up", GLFW_KEY_UP},
    named_key{"down", GLFW_KEY_DOWN},     named_key{"space", GLFW_KEY_SPACE},    named_key{"kpenter", GLFW_KEY_KP_ENTER},
};

struct modifier {
    std::string_view name;
    int code;
};
constexpr std::array modifiers{
    modifier{"ctrl", GLFW_KEY_LEFT_CONTROL},
    modifier{"shift", GLFW_KEY_LEFT_SHIFT},
    modifier{"alt", GLFW_KEY_LEFT_ALT},
    modifier{"super", GLFW_KEY_LEFT_SUPER},
};

const modifier* find_modifier(std::string_view name) {
    const auto it = std::find_if(modifiers.begin(), modifiers.end(), [&](const modifier& x) { return x.name == name; });
    return it == modifiers.end() ? nullptr : &*it;
}

// A US keyboard: the character Shift gives on each punctuation and digit key.
constexpr std::string_view unshifted = "1234567890-=[]\\;',./`";
constexpr std::string_view shifted = "!@#$%^&*()_+{}|:\"<>?~";

struct key_of_char {
    int code;
    bool shift;
};
std::optional<key_of_char> key_for_char(char c) {
    if (c >= 'a' && c <= 'z') return key_of_char{GLFW_KEY_A + (c - 'a'), false};
    if (c >= 'A' && c <= 'Z') return key_of_char{GLFW_KEY_A + (c - 'A'), true};
    if (unshifted.find(c) != std::string_view::npos) return key_of_char{c, false};   // GLFW codes of these are their ASCII
    if (const auto p = shifted.find(c); p != std::string_view::npos) return key_of_char{unshifted[p], true};
    return std::nullopt;
}

// The character a key types with Shift up or down, 0 for none.
unsigned char_of_key(int code, bool shift) {
    if (code >= GLFW_KEY_A && code <= GLFW_KEY_Z) return static_cast<unsigned>(code - GLFW_KEY_A + (shift ? 'A' : 'a'));
    if (code == GLFW_KEY_SPACE) return ' ';
    if (code < 128)
        if (const auto p = unshifted.find(static_cast<char>(code)); p != std::string_view::npos)
            return static_cast<unsigned char>(shift ? shifted[p] : unshifted[p]);
    return 0;
}

std::string lower(std::string_view s) {
    std::string r(s);
    for (auto& c : r) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return r;
}

std::vector<std::string> words(std::string_view s) {
    std::vector<std::string> w;
    std::istringstream in{std::string(s)};
    for (std::string t; in >> t;) w.push_back(t);
    return w;
}

// UTF-8 to code points (a malformed byte becomes U+FFFD).
std::vector<unsigned> code_points(std::string_view s) {
    std::vector<unsigned> out;
    for (std::size_t i = 0; i < s.size();) {
        const auto b = static_cast<unsigned char>(s[i]);
        const int n = b < 0x80 ? 1 : (b >> 5) == 6 ? 2 : (b >> 4) == 14 ? 3 : (b >> 3) == 30 ? 4 : 0;
        if (n == 0 || i + n > s.size()) {
            out.push_back(0xFFFD);
            ++i;
            continue;
        }
        unsigned cp = n == 1 ? b : b & (0x7F >> n);
        for (int k = 1; k < n; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
        out.push_back(cp);
        i += n;
    }
    return out;
}

}   // namespace

std::vector<input_event> key_events(std::string_view spec, key_phase phase) {
    std::vector<int> mods;
    std::string_view rest = spec;
    // "ctrl+shift+f": modifiers before the last '+'; a lone "+" (or "ctrl++") is the plus key.
    while (rest.size() > 1) {
        const auto plus = rest.find('+');
        if (plus == std::string_view::npos || plus == 0) break;
        const std::string m = lower(rest.substr(0, plus));
        const modifier* mod = find_modifier(m);
        if (!mod) throw std::invalid_argument("unknown modifier '" + m + "' (ctrl, shift, alt, super)");
        mods.push_back(mod->code);
        rest.remove_prefix(plus + 1);
    }
    if (rest.empty()) throw std::invalid_argument("no key after the modifiers in '" + std::string(spec) + "'");
    int code = 0;
    bool shift = std::find(mods.begin(), mods.end(), GLFW_KEY_LEFT_SHIFT) != mods.end();
    const std::string name = lower(rest);
    if (const auto it =
            std::find_if(named_keys.begin(), named_keys.end(), [&](const named_key& k) { return k.name == name; });
        it != named_keys.end()) {
        code = it->code;
    } else if (name.size() >= 2 && name[0] == 'f' && std::isdigit(static_cast<unsigned char>(name[1]))) {
        int n = 0;
        const auto r = std::from_chars(name.data() + 1, name.data() + name.size(), n);
        if (r.ptr != name.data() + name.size() || n < 1 || n > 12)
            throw std::invalid_argument("unknown key '" + std::string(rest) + "'");
        code = GLFW_KEY_F1 + n - 1;
    } else if (rest.size() == 1) {
        const auto k = key_for_char(rest[0]);
        if (!k) throw std::invalid_argument("unknown key '" + std::string(rest) + "'");
        code = k->code;
        if (k->shift && !shift) {   // '?' is Shift+/ : the script says the character, the keyboard needs Shift
            mods.push_back(GLFW_KEY_LEFT_SHIFT);
            shift = true;
        }
    } else {
        throw std::invalid_argument("unknown key '" + std::string(rest) + "'");
    }
    const bool command = std::any_of(mods.begin(), mods.end(), [](int m) { return m != GLFW_KEY_LEFT_SHIFT; });
    std::vector<input_event> ev;
    if (phase != key_phase::release) {
        for (int m : mods) ev.push_back(input_event::key(m, true));
        ev.push_back(input_event::key(code, true));
        if (const unsigned c = char_of_key(code, shift); c && !command) ev.push_back(input_event::text(c));
    }
    if (phase != key_phase::press) {
        ev.push_back(input_event::key(code, false));
        for (auto m = mods.rbegin(); m != mods.rend(); ++m) ev.push_back(input_event::key(*m, false));
    }
    return ev;
}

namespace {

float number(const std::string& w, const char* what) {
    float v = 0;
    const auto r = std::from_chars(w.data(), w.data() + w.size(), v);
    if (r.ec != std::errc{} || r.ptr != w.data() + w.size())
        throw std::invalid_argument(std::string("expected ") + what + ", got '" + w + "'");
    return v;
}

int count(const std::string& w, const char* what, int lo) {
    int v = 0;
    const auto r = std::from_chars(w.data(), w.data() + w.size(), v);
    if (r.ec != std::errc{} || r.ptr != w.data() + w.size() || v < lo)
        throw std::invalid_argument(std::string("expected ") + what + " (an integer >= " + std::to_string(lo) + "), got '" +
                                    w + "'");
    return v;
}

int mouse_button(const std::string& w) {
    if (w == "left") return 0;
    if (w == "right") return 1;
    if (w == "middle") return 2;
    return -1;
}

// The options after a mouse command's coordinates: a button and modifiers held during it.
struct mouse_options {
    int button = 0;
    bool twice = false;
    std::vector<input_event> press, release;
};
mouse_options mouse_opts(const std::vector<std::string>& w, std::size_t from, bool allow_double) {
    mouse_options o;
    std::vector<int> mods;
    for (std::size_t i = from; i < w.size(); ++i) {
        if (const int b = mouse_button(w[i]); b >= 0) {
            o.button = b;
        } else if (allow_double && w[i] == "double") {
            o.twice = true;
        } else {
            const modifier* mod = find_modifier(w[i]);
            if (!mod)
                throw std::invalid_argument("unknown option '" + w[i] + "' (left, right, middle, ctrl, shift, alt, super" +
                                            (allow_double ? ", double)" : ")"));
            mods.push_back(mod->code);
        }
    }
    for (int m : mods) o.press.push_back(input_event::key(m, true));
    for (auto m = mods.rbegin(); m != mods.rend(); ++m) o.release.push_back(input_event::key(*m, false));
    return o;
}

void append(std::vector<input_event>& to, const std::vector<input_event>& from) {
    to.insert(to.end(), from.begin(), from.end());
}

void need(const std::vector<std::string>& w, std::size_t n, const char* usage) {
    if (w.size() < n) throw std::invalid_argument(std::string("usage: ") + usage);
}

void skip_spaces(std::string_view& s) {
    while (!s.empty() && s.front() == ' ') s.remove_prefix(1);
}

// click X Y [left|right|middle] [double] [modifiers]: the pointer moves there, the modifiers go
// down, one press and release (two with double), the modifiers come up.
std::vector<input_event> click_events(const std::vector<std::string>& w) {
    need(w, 2, "click X Y [left|right|middle] [double] [ctrl|shift|alt]...");
    const mouse_options o = mouse_opts(w, 2, true);
    std::vector<input_event> ev;
    ev.push_back(input_event::move(number(w[0], "X"), number(w[1], "Y")));
    append(ev, o.press);
    for (int i = 0; i < (o.twice ? 2 : 1); ++i) {
        ev.push_back(input_event::button(o.button, true));
        ev.push_back(input_event::button(o.button, false));
    }
    append(ev, o.release);
    return ev;
}

// drag X0 Y0 X1 Y1 [button] [modifiers]: pressed at the start, moved in steps a frame apart,
// released at the end.
std::vector<input_event> drag_events(const std::vector<std::string>& w) {
    need(w, 4, "drag X0 Y0 X1 Y1 [left|right|middle] [ctrl|shift|alt]...");
    const mouse_options o = mouse_opts(w, 4, false);
    const float x0 = number(w[0], "X0"), y0 = number(w[1], "Y0"), x1 = number(w[2], "X1"), y1 = number(w[3], "Y1");
    std::vector<input_event> ev;
    ev.push_back(input_event::move(x0, y0));
    append(ev, o.press);
    ev.push_back(input_event::button(o.button, true));
    constexpr int steps = 8;   // a hand's drag: the pointer passes through the points between
    for (int i = 1; i <= steps; ++i) {
        const float f = static_cast<float>(i) / steps;
        ev.push_back(input_event::move(x0 + (x1 - x0) * f, y0 + (y1 - y0) * f));
        if (i < steps) ev.push_back(input_event::next_frame());   // the view sees the pointer travel, step by step
    }
    ev.push_back(input_event::button(o.button, false));
    append(ev, o.release);
    return ev;
}

// scroll X Y DY [DX] [modifiers]: a fourth word that is no button or modifier is DX.
std::vector<input_event> scroll_events(const std::vector<std::string>& w) {
    need(w, 3, "scroll X Y DY [DX] [ctrl|shift|alt]...");
    const float dy = number(w[2], "DY");
    float dx = 0;
    std::size_t opt = 3;
    if (w.size() > 3 && mouse_button(w[3]) < 0 && !find_modifier(w[3])) {
        dx = number(w[3], "DX");
        opt = 4;
    }
    const mouse_options o = mouse_opts(w, opt, false);
    std::vector<input_event> ev;
    ev.push_back(input_event::move(number(w[0], "X"), number(w[1], "Y")));
    append(ev, o.press);
    ev.push_back(input_event::wheel(dx, dy));
    append(ev, o.release);
    return ev;
}

// expect /json/pointer [== != < <= > >=] VALUE: the comparison is == unless given; the value is
// the rest of the line as written (JSON, or a bare word for a string).
void parse_expect(std::string_view args, const std::vector<std::string>& w, script_step& s) {
    need(w, 2, "expect /json/pointer [== != < <= > >=] VALUE");
    s.what = script_step::op::expect;
    s.pointer = w[0];
    if (s.pointer.empty() || s.pointer[0] != '/')
        throw std::invalid_argument("expected a JSON pointer starting with '/', got '" + s.pointer + "'");
    std::string_view rest = args.substr(args.find(w[0]) + w[0].size());
    skip_spaces(rest);
    for (const char* op : {"==", "!=", "<=", ">=", "<", ">"})
        if (rest.starts_with(op) && (rest.size() == std::strlen(op) || rest[std::strlen(op)] == ' ')) {
            s.compare = op;
            rest.remove_prefix(std::strlen(op));
            skip_spaces(rest);
            break;
        }
    if (rest.empty()) throw std::invalid_argument("expect: no value to compare with");
    s.value = std::string(rest);
}

script_step parse_line(const std::string& cmd, std::string_view args) {
    const std::vector<std::string> w = words(args);
    script_step s;
    s.what = script_step::op::input;
    if (cmd == "key" || cmd == "keydown" || cmd == "keyup") {
        need(w, 1, "key SPEC... (e.g. key ctrl+f, key ?, key shift+enter)");
        const key_phase ph = cmd == "key" ? key_phase::tap : cmd == "keydown" ? key_phase::press : key_phase::release;
        for (const auto& k : w) append(s.events, key_events(k, ph));
    } else if (cmd == "text") {
        if (args.empty()) throw std::invalid_argument("usage: text CHARACTERS");
        for (unsigned c : code_points(args)) s.events.push_back(input_event::text(c));
    } else if (cmd == "move") {
        need(w, 2, "move X Y");
        s.events.push_back(input_event::move(number(w[0], "X"), number(w[1], "Y")));
    } else if (cmd == "click") {
        s.events = click_events(w);
    } else if (cmd == "drag") {
        s.events = drag_events(w);
    } else if (cmd == "scroll") {
        s.events = scroll_events(w);
    } else if (cmd == "leave") {
        s.events.push_back(input_event::leave());
    } else if (cmd == "frames") {
        need(w, 1, "frames N");
        s.what = script_step::op::frames;
        s.count = count(w[0], "N", 1);
    } else if (cmd == "wait-loaded") {
        s.what = script_step::op::wait_loaded;
    } else if (cmd == "screenshot" || cmd == "dump") {
        if (args.empty()) throw std::invalid_argument("usage: " + cmd + " FILE");
        s.what = cmd == "dump" ? script_step::op::dump : script_step::op::screenshot;
        s.path = std::string(args);
    } else if (cmd == "expect") {
        parse_expect(args, w, s);
    } else if (cmd == "resize") {
        need(w, 2, "resize W H");
        s.what = script_step::op::resize;
        s.width = count(w[0], "W", 200);
        s.height = count(w[1], "H", 150);
    } else if (cmd == "drop") {
        need(w, 1, "drop FILE...");
        s.what = script_step::op::drop;
        s.paths = w;
    } else if (cmd == "devices") {
        if (w.size() != 1 || (w[0] != "on" && w[0] != "off")) throw std::invalid_argument("usage: devices on|off");
        s.what = script_step::op::devices;
        s.count = w[0] == "on";
    } else if (cmd == "shell") {
        if (args.empty()) throw std::invalid_argument("usage: shell COMMAND");
        s.what = script_step::op::shell;
        s.path = std::string(args);
    } else {
        throw std::invalid_argument("unknown command '" + cmd +
                                    "' (key, keydown, keyup, text, move, click, drag, scroll, leave, frames, wait-loaded, "
                                    "screenshot, dump, expect, resize, drop, devices, shell)");
    }
    return s;
}

}   // namespace

std::vector<script_step> parse_script(std::istream& in, const std::string& name) {
    std::vector<script_step> steps;
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
        std::string_view t = line;
        while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.remove_prefix(1);
        while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.remove_suffix(1);
        if (t.empty() || t.front() == '#') continue;
        const auto sp = t.find(' ');
        const std::string cmd(t.substr(0, sp));
        std::string_view args = sp == std::string_view::npos ? std::string_view{} : t.substr(sp + 1);
        skip_spaces(args);
        try {
            script_step s = parse_line(cmd, args);
            s.line = n;
            s.text = std::string(t);
            steps.push_back(std::move(s));
        } catch (const std::invalid_argument& e) {
            throw script_error(name + ":" + std::to_string(n) + ": " + e.what());
        }
    }
    return steps;
}

std::vector<script_step> load_script(const std::filesystem::path& file) {
    std::ifstream in(file);
    if (!in) throw script_error(file.string() + ": cannot be read");
    return parse_script(in, file.string());
}

}   // namespace pipescope::viewer
