// How pipe_while and graph::run find their policies by name. Both worlds register a policy the same
// way: a policy is one folder, pipeline/policies/FOLDER/ or graph/policies/FOLDER/, one of whose
// files defines `extern const policy_entry FOLDER_policy{...}` (name, one-line summary, how to run
// it, order; policies/piper/piper.cpp and policies/gramps/gramps.cpp are the models). No list is
// edited: CMake finds the folders when it configures (cmake/PipescopePolicies.cmake) and generates
// the translation unit that declares every entry and lists it with its folder. An entry type needs
// `name`, `summary` and `order`; the rest is its world's.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace pipescope::detail {

// One policy folder and the entry it defines (the generated registry's rows).
template <class Entry>
struct policy_folder {
    const char* folder;
    const Entry* entry;
};

template <class Entry>
class policy_registry {
public:
    // `unknown` starts the error for a name that is not listed, e.g. "pipe_while: unknown policy".
    // The entries are kept in their `order` (the generated list is in folder-name order, which says
    // nothing about which policy a listing should show first); two entries of one name are a bug in
    // a policy folder, reported when the registry is first used.
    policy_registry(std::string_view unknown, std::span<const policy_folder<Entry>> folders) : unknown_(unknown) {
        for (const policy_folder<Entry>& f : folders) entries_.push_back(f.entry);
        std::stable_sort(entries_.begin(), entries_.end(),
                         [](const Entry* a, const Entry* b) { return a->order < b->order; });
        for (std::size_t i = 0; i < entries_.size(); ++i)
            for (std::size_t j = 0; j < i; ++j)
                if (std::string_view(entries_[i]->name) == entries_[j]->name)
                    throw std::logic_error(std::string(unknown_) + ": two policy folders define '" + entries_[i]->name +
                                           "'");
    }

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
    std::vector<const Entry*> entries_;
};

}   // namespace pipescope::detail
