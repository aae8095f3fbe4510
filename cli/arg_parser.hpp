// The one argument parser of the `pipescope` commands. A command declares its options, flags and
// what a positional argument does, then hands over its arguments; the parser reads them left to
// right and throws recording::usage_error for what it cannot take ("--port needs a value",
// "unknown option --bogus"), which main prints with the command's usage line and exit status 2.
//
// The commands grew their messages one at a time and tests pin them byte for byte, so the wording
// is the command's: a prefix ("lesson: "), and how an unknown option is named.
//
//     pipescope::cli::arg_parser p({.prefix = "perfetto: "});
//     p.flag("--no-browser", [&] { a.open_browser = false; });
//     p.option("--ui", [&](const std::string& v) { a.ui = v; });
//     p.number("--port", {1, 65535, "a whole number between 1 and 65535"}, [&](std::uint64_t n) { a.port = n; });
//     p.positional([&](const std::string& v) { a.trace = v; });
//     p.parse(args);
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

namespace pipescope::cli {

// A whole number in [min, max], as std::stoull reads it (all of the text, no minus sign).
std::optional<std::uint64_t> parse_whole_number(const std::string& text, std::uint64_t min, std::uint64_t max);

// What a number option accepts, and what its error says it expected.
struct number_range {
    std::uint64_t min, max;
    std::string expected;   // "--workers 0: expected <this>"
};

// `text` as a number in `range`, else a usage error "<prefix><option> <text>: expected <range.expected>".
std::uint64_t whole_number(const std::string& option, const std::string& text, const number_range& range,
                           const std::string& prefix = {});

struct arg_style {
    std::string prefix;                          // begins the parser's messages: "lesson: "
    std::string unknown = "unknown option {}";   // an undeclared "-x" ({} is the argument)
};

class arg_parser {
public:
    using names = std::initializer_list<const char*>;   // "-o", "--output": one option, two spellings

    explicit arg_parser(arg_style style = {}) : style_(std::move(style)) {}

    // An option without a value.
    arg_parser& flag(names n, std::function<void()> set);
    // An option with the next argument as its value, whatever it looks like ("--ui --x" gives the
    // UI "--x"). Missing: "<prefix><option> needs <needs>". Repeated (--param k=v): called each time.
    arg_parser& option(names n, std::function<void(const std::string&)> take, std::string needs = "a value");
    // An option whose value is a whole number in `range` (the error carries the prefix).
    arg_parser& number(names n, number_range range, std::function<void(std::uint64_t)> take);
    // Every argument that is not an option ("" included). Without one, a positional argument is
    // refused as an unknown option is.
    arg_parser& positional(std::function<void(const std::string&)> take);

    void parse(const std::vector<std::string>& args) const;

    // Throws the usage error "<prefix><what>".
    [[noreturn]] void fail(const std::string& what) const;

private:
    struct declared {
        std::vector<std::string> names;
        std::function<void(const std::string& name, const std::string& value)> take;   // a flag's value: ""
        bool takes_value;
        std::string needs;
    };
    const declared* find(const std::string& arg) const;
    [[noreturn]] void unknown(const std::string& arg) const;

    arg_style style_;
    std::vector<declared> options_;
    std::function<void(const std::string&)> positional_;
};

}   // namespace pipescope::cli
