// The background loader hands results out in the order the loads were started, whatever order they
// finish in (the document's run order, and so the compare baseline, depends on it).
#include <catch2/catch.hpp>

#include <model/loader.hpp>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

using namespace pipescope::viewer;
namespace fs = std::filesystem;

namespace {

// A load function whose loads finish in reverse order of their number: load k waits until every
// load numbered above k has finished. "bad" paths fail as a real unreadable file would.
struct reverse_gate {
    int n;
    std::mutex mu;
    std::condition_variable cv;
    std::vector<bool> finished;
    std::vector<int> finish_order;

    explicit reverse_gate(int count) : n(count), finished(static_cast<std::size_t>(count), false) {}

    load_result load(const fs::path& p) {
        const int k = std::stoi(p.stem().string().substr(p.stem().string().find('-') + 1));
        std::unique_lock lk(mu);
        cv.wait(lk, [&] {
            for (int j = k + 1; j < n; ++j)
                if (!finished[static_cast<std::size_t>(j)]) return false;
            return true;
        });
        finished[static_cast<std::size_t>(k)] = true;
        finish_order.push_back(k);
        cv.notify_all();
        load_result r;
        r.path = p;
        if (p.filename().string().rfind("bad", 0) == 0) r.error = p.string() + ": not a Perfetto trace";
        return r;
    }
};

std::vector<load_result> take_all(loader& l, std::size_t count) {
    std::vector<load_result> got;
    while (got.size() < count) {
        for (auto& r : l.take()) got.push_back(std::move(r));
        if (got.size() < count) std::this_thread::yield();
    }
    return got;
}

}   // namespace

TEST_CASE("loads that finish in reverse order are handed out in start order", "[viewer][loader]") {
    reverse_gate gate(4);
    loader l([&](const fs::path& p) { return gate.load(p); });
    const std::vector<fs::path> paths = {"run-0.pftrace", "run-1.pftrace", "bad-2.pftrace", "run-3.pftrace"};
    for (const auto& p : paths) l.start(p);
    const auto got = take_all(l, paths.size());
    CHECK(gate.finish_order == std::vector<int>{3, 2, 1, 0});
    REQUIRE(got.size() == paths.size());
    for (std::size_t i = 0; i < paths.size(); ++i) CHECK(got[i].path == paths[i]);
    CHECK(got[2].error.find("bad-2.pftrace") != std::string::npos);   // a failure keeps its place too
    CHECK_FALSE(l.busy());
    CHECK(l.take().empty());
}

TEST_CASE("a finished load waits for the one started before it", "[viewer][loader]") {
    std::mutex mu;
    std::condition_variable cv;
    bool release_first = false, second_done = false;
    loader l([&](const fs::path& p) {
        std::unique_lock lk(mu);
        if (p == "first.pftrace") {
            cv.wait(lk, [&] { return release_first; });
        } else {
            second_done = true;
            cv.notify_all();
        }
        load_result r;
        r.path = p;
        return r;
    });
    l.start("first.pftrace");
    l.start("second.pftrace");
    {
        std::unique_lock lk(mu);
        cv.wait(lk, [&] { return second_done; });
    }
    // The second load function has returned its result once the loader marks it done (just after).
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (l.in_progress().size() > 1 && std::chrono::steady_clock::now() < give_up) std::this_thread::yield();
    CHECK(l.take().empty());   // the second has finished, but the first has not
    CHECK(l.busy());
    CHECK(l.in_progress().size() == 1);
    {
        std::lock_guard lk(mu);
        release_first = true;
    }
    cv.notify_all();
    const auto got = take_all(l, 2);
    CHECK(got[0].path == "first.pftrace");
    CHECK(got[1].path == "second.pftrace");
}

TEST_CASE("real traces load into the document in the order given", "[viewer][loader]") {
    const fs::path dir = fs::path(PIPESCOPE_SOURCE_DIR) / "traces";
    std::vector<fs::path> paths;
    for (const auto& e : fs::directory_iterator(dir))
        if (e.path().extension() == ".pftrace") paths.push_back(e.path());
    std::sort(paths.begin(), paths.end(), [](const fs::path& a, const fs::path& b) {
        return fs::file_size(a) > fs::file_size(b);   // the biggest first: it finishes last
    });
    REQUIRE(paths.size() >= 2);
    loader l;
    for (const auto& p : paths) l.start(p);
    const auto got = take_all(l, paths.size());
    for (std::size_t i = 0; i < paths.size(); ++i) {
        CHECK(got[i].path == paths[i]);
        CHECK(got[i].file != nullptr);
    }
}
