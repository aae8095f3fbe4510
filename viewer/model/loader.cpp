#include "loader.hpp"

namespace fs = std::filesystem;

namespace pipescope::viewer {

loader::loader(load_fn load) : load_(std::move(load)) {}

loader::~loader() {
    std::lock_guard lk(mu_);
    for (auto& j : jobs_)
        if (j.th.joinable()) j.th.join();
}

load_result loader::load_now(const fs::path& p) {
    load_result r;
    r.path = p;
    try {
        r.file = load_file(p);
    } catch (const std::exception& e) {
        r.error = e.what();
    } catch (...) {
        r.error = "unknown error";
    }
    if (!r.file && r.error.empty()) r.error = "could not be loaded";
    if (!r.error.empty() && r.error.find(p.filename().string()) == std::string::npos) r.error = p.string() + ": " + r.error;
    return r;
}

void loader::start(const fs::path& p, bool user_opened) {
    job j;
    j.path = p;
    std::error_code ec;
    j.bytes = fs::file_size(p, ec);
    j.t0 = std::chrono::steady_clock::now();
    j.out = std::make_shared<job::outcome>();
    j.th = std::thread([load = load_, p, user_opened, out = j.out, wake = on_finished_] {
        load_result r;
        try {
            r = load(p);
        } catch (const std::exception& e) {   // load_now never throws; a test's function might
            r.path = p;
            r.error = p.string() + ": " + e.what();
        }
        r.user_opened = user_opened;
        out->result = std::move(r);
        out->done.store(true, std::memory_order_release);
        if (wake) wake();
    });
    std::lock_guard lk(mu_);
    jobs_.push_back(std::move(j));
}

std::vector<load_result> loader::take() {
    std::vector<job> finished;
    {
        std::lock_guard lk(mu_);
        while (!jobs_.empty() && jobs_.front().out->done.load(std::memory_order_acquire)) {
            finished.push_back(std::move(jobs_.front()));
            jobs_.pop_front();
        }
    }
    std::vector<load_result> out;
    out.reserve(finished.size());
    for (auto& j : finished) {
        j.th.join();
        out.push_back(std::move(j.out->result));
    }
    return out;
}

std::vector<loader::pending> loader::in_progress() const {
    std::lock_guard lk(mu_);
    std::vector<pending> v;
    const auto now = std::chrono::steady_clock::now();
    for (const auto& j : jobs_)
        if (!j.out->done.load(std::memory_order_acquire))
            v.push_back({j.path.filename().string(), j.bytes, std::chrono::duration<double>(now - j.t0).count()});
    return v;
}

bool loader::busy() const {
    std::lock_guard lk(mu_);
    return !jobs_.empty();
}

}   // namespace pipescope::viewer
