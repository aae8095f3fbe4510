// How pipe_while and graph::run find their policies by name. Both worlds register a policy the same
// way: its file defines one entry (name, one-line summary, how to run it: pipeline/piper.cpp and
// graph/policies/gramps.cpp are the models), the world's header declares it, and the world's
// registry lists it, one line (pipeline/pipe_while.cpp, graph/run_graph.cpp). An entry type needs
// `name` and `summary`; the rest is its world's.
#pragma once

#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>

namespace pipescope::detail {

template <class Entry>
class policy_registry {
public:
    // `unknown` starts the error for a name that is not listed, e.g. "pipe_while: unknown policy".
    template <std::size_t N>
    constexpr policy_registry(std::string_view unknown, const Entry* const (&entries)[N]) noexcept
        : unknown_(unknown), entries_(entries) {}

    auto begin() const noexcept { return entries_.begin(); }
    auto end() const noexcept { return entries_.end(); }

    // The entry called `name`; an unknown name throws std::invalid_argument listing the known ones.
    const Entry& find(std::string_view name) const {
        for (const Entry* e : entries_)
            if (name == e->name) return *e;
        std::string known;
        for (const Entry* e : entries_) known += (known.empty() ? "" : ", ") + std::string(e->name);
        throw std::invalid_argument(std::string(unknown_) + " '" + std::string(name) + "' (known: " + known + ")");
    }

private:
    std::string_view unknown_;
    std::span<const Entry* const> entries_;
};

}   // namespace pipescope::detail
