#include "arg_parser.hpp"

#include <pipescope/recording/usage_error.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <exception>

namespace pipescope::cli {

std::optional<std::uint64_t> parse_whole_number(const std::string& text, std::uint64_t min, std::uint64_t max) {
    try {
        std::size_t used = 0;
        const unsigned long long v = std::stoull(text, &used);
        if (used == text.size() && text[0] != '-' && v >= min && v <= max) return v;
    } catch (const std::exception&) {   // no digits, or out of range
    }
    return std::nullopt;
}

std::uint64_t whole_number(const std::string& option, const std::string& text, const number_range& range,
                           const std::string& prefix) {
    if (const auto v = parse_whole_number(text, range.min, range.max)) return *v;
    throw recording::usage_error(prefix + option + " " + text + ": expected " + range.expected);
}

arg_parser& arg_parser::flag(names n, std::function<void()> set) {
    options_.push_back(
        {{n.begin(), n.end()}, [set = std::move(set)](const std::string&, const std::string&) { set(); }, false, {}});
    return *this;
}

arg_parser& arg_parser::option(names n, std::function<void(const std::string&)> take, std::string needs) {
    options_.push_back({{n.begin(), n.end()},
                        [take = std::move(take)](const std::string&, const std::string& value) { take(value); },
                        true,
                        std::move(needs)});
    return *this;
}

arg_parser& arg_parser::number(names n, number_range range, std::function<void(std::uint64_t)> take) {
    options_.push_back({{n.begin(), n.end()},
                        [prefix = style_.prefix, range = std::move(range),
                         take = std::move(take)](const std::string& name, const std::string& value) {
                            take(whole_number(name, value, range, prefix));
                        },
                        true,
                        "a value"});
    return *this;
}

arg_parser& arg_parser::positional(std::function<void(const std::string&)> take) {
    positional_ = std::move(take);
    return *this;
}

const arg_parser::declared* arg_parser::find(const std::string& arg) const {
    for (const declared& d : options_)
        if (std::find(d.names.begin(), d.names.end(), arg) != d.names.end()) return &d;
    return nullptr;
}

void arg_parser::parse(const std::vector<std::string>& args) const {
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        if (const declared* d = find(a)) {
            if (!d->takes_value) d->take(a, {});
            else if (i + 1 < args.size()) d->take(a, args[++i]);
            else fail(a + " needs " + d->needs);
        } else if (!a.empty() && a[0] == '-') unknown(a);
        else if (positional_) positional_(a);
        else unknown(a);
    }
}

void arg_parser::fail(const std::string& what) const { throw recording::usage_error(style_.prefix + what); }

void arg_parser::unknown(const std::string& arg) const { fail(fmt::format(fmt::runtime(style_.unknown), arg)); }

}   // namespace pipescope::cli
