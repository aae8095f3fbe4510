#include "file_state.hpp"

#include <nlohmann/json.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <system_error>

#include <sys/stat.h>
#include <unistd.h>

namespace fs = std::filesystem;
using json = nlohmann::json;

namespace pipescope::viewer {

namespace {

constexpr const char* state_format = "pipescope-file-state/1";

// FNV-1a, 64 bits: a stable name for a state file (std::hash may differ between builds).
std::uint64_t fnv1a(const std::string& s) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (const unsigned char c : s) h = (h ^ c) * 0x100000001b3ull;
    return h;
}

json track_list(const std::vector<std::uint32_t>& tracks, const std::vector<std::string>& names) {
    json a = json::array();
    for (const std::uint32_t t : tracks) a.push_back({{"track", t}, {"name", t < names.size() ? names[t] : ""}});
    return a;
}

// The entries of a track list that still name the same track.
std::vector<std::uint32_t> tracks_of(const json& a, const std::vector<std::string>& names) {
    std::vector<std::uint32_t> r;
    for (const json& e : a) {
        const auto t = e.at("track").get<std::uint32_t>();
        if (t < names.size() && e.at("name").get<std::string>() == names[t] && !contains(r, t)) r.push_back(t);
    }
    return r;
}

}   // namespace

bool contains(const std::vector<std::uint32_t>& list, std::uint32_t v) {
    return std::find(list.begin(), list.end(), v) != list.end();
}

bool toggle_in(std::vector<std::uint32_t>& list, std::uint32_t v) {
    const auto it = std::find(list.begin(), list.end(), v);
    if (it != list.end()) {
        list.erase(it);
        return false;
    }
    list.push_back(v);
    return true;
}

std::optional<file_identity> identify_file(const fs::path& p) {
    std::error_code ec;
    file_identity id;
    const fs::path canon = fs::weakly_canonical(fs::absolute(p, ec), ec);
    if (ec) return std::nullopt;
    id.path = canon.string();
    struct stat st {};
    if (::stat(canon.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
    id.size = static_cast<std::uint64_t>(st.st_size);
    id.mtime_ns = static_cast<std::int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec;   // Unix time
    return id;
}

fs::path state_path(const fs::path& dir, const file_identity& id) {
    const std::uint64_t h = fnv1a(fmt::format("{}\n{}\n{}", id.path, id.size, id.mtime_ns));
    return dir / "files" / fmt::format("{:016x}.json", h);
}

std::string state_to_json(const file_identity& id, const file_arrangement& a, const std::vector<std::string>& names) {
    json bookmarks = json::array();
    for (const bookmark& b : a.bookmarks) bookmarks.push_back({{"run", b.run}, {"ts", b.ts}, {"note", b.note}});
    const json j = {{"format", state_format},
                    {"file", {{"path", id.path}, {"size", id.size}, {"mtime_ns", id.mtime_ns}}},
                    {"tracks",
                     {{"pinned", track_list(a.pinned, names)},
                      {"hidden", track_list(a.hidden, names)},
                      {"collapsed_runs", a.collapsed_runs},
                      {"filter", a.filter}}},
                    {"bookmarks", std::move(bookmarks)}};
    return j.dump(2) + "\n";
}

file_arrangement state_from_json(const std::string& text, const file_identity& id, const std::vector<std::string>& names) {
    try {
        const json j = json::parse(text);
        if (!j.is_object() || j.value("format", "") != state_format)
            throw std::runtime_error(fmt::format("not a {} file", state_format));
        const json& f = j.at("file");
        if (f.at("path").get<std::string>() != id.path || f.at("size").get<std::uint64_t>() != id.size ||
            f.at("mtime_ns").get<std::int64_t>() != id.mtime_ns)
            throw std::runtime_error("the state of another file (or of an older version of it)");
        file_arrangement a;
        const json& t = j.at("tracks");
        a.pinned = tracks_of(t.at("pinned"), names);
        a.hidden = tracks_of(t.at("hidden"), names);
        a.collapsed_runs = t.at("collapsed_runs").get<std::vector<std::uint32_t>>();
        a.filter = t.at("filter").get<std::string>();
        for (const json& b : j.at("bookmarks"))
            a.bookmarks.push_back(
                {b.at("run").get<std::uint32_t>(), b.at("ts").get<std::uint64_t>(), b.at("note").get<std::string>()});
        return a;
    } catch (const json::exception& e) {   // not JSON, a field missing or of the wrong type
        throw std::runtime_error(e.what());
    }
}

void write_atomically(const fs::path& path, const std::string& text) {
    std::error_code ec;
    fs::create_directories(path.parent_path(), ec);
    const fs::path tmp = path.string() + fmt::format(".{}.tmp", static_cast<long>(::getpid()));
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << text;
        out.flush();
        if (!out) {
            fs::remove(tmp, ec);
            throw std::runtime_error(fmt::format("cannot write {}", tmp.string()));
        }
    }
    fs::rename(tmp, path, ec);
    if (ec) {
        std::error_code ec2;
        fs::remove(tmp, ec2);
        throw std::runtime_error(fmt::format("cannot rename {} to {}: {}", tmp.string(), path.string(), ec.message()));
    }
}

file_arrangement file_state_store::attach(const fs::path& trace, bool keep, const std::vector<std::string>& names,
                                          std::string& warning) {
    warning.clear();
    slot s;
    s.names = names;
    if (keep && !dir_.empty()) s.id = identify_file(trace);
    if (s.id) {
        const fs::path p = state_path(dir_, *s.id);
        std::ifstream in(p, std::ios::binary);
        if (in) {
            const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
            try {
                s.saved = state_from_json(text, *s.id, names);
            } catch (const std::exception& e) {
                warning = fmt::format("{}: ignored the saved track arrangement and bookmarks ({}): {}",
                                      trace.filename().string(), p.string(), e.what());
            }
        }
    }
    slots_.push_back(std::move(s));
    return slots_.back().saved;
}

std::vector<std::string> file_state_store::save_changed(const std::vector<file_arrangement>& now) {
    std::vector<std::string> failures;
    for (std::size_t i = 0; i < slots_.size() && i < now.size(); ++i) {
        slot& s = slots_[i];
        if (!s.id || now[i] == s.saved) continue;
        s.saved = now[i];   // also on failure: a full disk is reported once, not every frame
        try {
            write_atomically(state_path(dir_, *s.id), state_to_json(*s.id, now[i], s.names));
            ++writes_;
        } catch (const std::exception& e) {
            failures.push_back(e.what());
        }
    }
    return failures;
}

}   // namespace pipescope::viewer
