// Which files a document holds, to notice when they change (closed, opened, replaced) and drop
// what was computed from the old ones (search matches, an area's aggregates). A file's address may
// be reused by the next file loaded, so its path and event count are part of its key.
#pragma once

#include "document.hpp"

#include <string>
#include <vector>

namespace pipescope::viewer {

class file_set {
public:
    // True if `d` holds the files taken last; no allocation (called every frame).
    bool same_as(const document& d) const {
        if (keys_.size() != d.files.size()) return false;
        for (std::size_t i = 0; i < keys_.size(); ++i) {
            const loaded_file& f = *d.files[i];
            if (keys_[i].file != &f || keys_[i].events != f.model.events || keys_[i].path != f.path.native()) return false;
        }
        return true;
    }
    void take(const document& d) {
        keys_.clear();
        for (const auto& f : d.files) keys_.push_back({f.get(), f->path.native(), f->model.events});
    }

private:
    struct key {
        const loaded_file* file;
        std::filesystem::path::string_type path;
        std::uint64_t events;
    };
    std::vector<key> keys_;
};

}   // namespace pipescope::viewer
