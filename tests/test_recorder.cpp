// The tracer's recording layer: per-worker chunked buffers, bounded memory, counted drops.
#include <pipescope/trace/drain_thread.hpp>
#include <pipescope/trace/recorder.hpp>
#include <pipescope/trace/trace_model.hpp>

#include <catch2/catch.hpp>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <map>
#include <stdexcept>
#include <thread>
#include <vector>

#include <unistd.h>

using namespace pipescope::trace;

namespace {

// Collects what a drain hands over, checking per-writer order and accounting for drops:
// every writer records a = 0, 1, 2, ...; a gap must be exactly covered by a `dropped` record.
struct collector {
    std::map<unsigned, std::uint64_t> next;   // next expected sequence number per writer
    std::map<unsigned, std::uint64_t> pending_drop;
    std::uint64_t events = 0, dropped = 0, errors = 0;

    void operator()(unsigned w, const event_record* r, std::size_t n) {
        for (std::size_t k = 0; k < n; ++k) {
            if (r[k].kind == event_kind::dropped) {
                pending_drop[w] += r[k].a;
                dropped += r[k].a;
                continue;
            }
            ++events;
            const std::uint64_t expected = next[w] + pending_drop[w];
            if (r[k].a != expected || r[k].kind != event_kind::node_begin) ++errors;
            pending_drop[w] = 0;
            next[w] = r[k].a + 1;
        }
    }
};

// Polls `done` for up to a minute (a loaded machine may start a thread late; nothing here times it).
template <class F>
void wait_until(F done) {
    for (int i = 0; i < 60000 && !done(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    REQUIRE(done());
}

// Starts `writers` threads, each recording node_begin with a = 0 .. per_writer - 1 into its own
// buffer (what collector checks); `running`, if given, counts those not done yet.
std::vector<std::thread> start_writers(recorder& rec, unsigned writers, std::uint64_t per_writer,
                                       std::atomic<int>* running = nullptr) {
    if (running) running->store(static_cast<int>(writers));
    std::vector<std::thread> ts;
    for (unsigned w = 0; w < writers; ++w)
        ts.emplace_back([&rec, w, per_writer, running] {
            for (std::uint64_t i = 0; i < per_writer; ++i) rec.buffer(w).record(event_kind::node_begin, i);
            if (running) running->fetch_sub(1);
        });
    return ts;
}

}   // namespace

TEST_CASE("recorder: events arrive in order, chunk by chunk, while the writer records", "[tracer]") {
    recorder rec(1, 1u << 20, 256);
    collector seen;
    auto sink = [&](unsigned w, const event_record* r, std::size_t n) { seen(w, r, n); };
    for (std::uint64_t i = 0; i < 100000; ++i) {
        rec.buffer(0).record(event_kind::node_begin, i, 7, 1);
        if (i % 5000 == 0) rec.drain(sink);
    }
    rec.flush(sink);
    CHECK(seen.events == 100000);
    CHECK(seen.errors == 0);
    CHECK(seen.dropped == 0);
    CHECK(rec.dropped_total() == 0);
}

TEST_CASE("recorder: memory is bounded and every lost event is counted where it was lost", "[tracer]") {
    // Two chunks of 100 events for one writer, nobody draining: 200 fit, the rest are dropped.
    recorder rec(1, 0, 100);
    REQUIRE(rec.chunks_in_pool() == 2);
    for (std::uint64_t i = 0; i < 1000; ++i) rec.buffer(0).record(event_kind::node_begin, i);
    collector seen;
    auto sink = [&](unsigned w, const event_record* r, std::size_t n) { seen(w, r, n); };
    rec.drain(sink);   // frees the first chunk: recording can go on
    for (std::uint64_t i = 1000; i < 1050; ++i) rec.buffer(0).record(event_kind::node_begin, i);
    rec.flush(sink);
    // The first chunk (0..99) was full and queued; the second (100..199) filled and queued on the
    // refill that found no free chunk; 200..999 were dropped; the marker precedes event 1000.
    CHECK(seen.errors == 0);
    CHECK(seen.events == 200 + 50);
    CHECK(seen.dropped == 800);
    CHECK(rec.dropped_total() == 800);
}

TEST_CASE("recorder: several writers and a concurrent consumer lose nothing silently", "[tracer][stress]") {
    constexpr unsigned writers = 4;
    constexpr std::uint64_t per_writer = 200000;
    recorder rec(writers, 256u << 10, 512);   // small pool: drops are likely under load
    collector seen;
    auto sink = [&](unsigned w, const event_record* r, std::size_t n) { seen(w, r, n); };
    std::atomic<int> running{0};
    std::vector<std::thread> ts = start_writers(rec, writers, per_writer, &running);
    while (running.load() > 0) rec.drain(sink);
    for (auto& t : ts) t.join();
    rec.flush(sink);
    CHECK(seen.errors == 0);
    CHECK(seen.events + rec.dropped_total() == writers * per_writer);
    CHECK(seen.dropped <= rec.dropped_total());   // drops at a buffer's very end have no marker
}

TEST_CASE("recorder: a snapshot while writers record holds each one's events so far and takes none away",
          "[tracer][stress]") {
    // The watchdog's view of a hung run: writers keep recording while the snapshot is written.
    constexpr unsigned writers = 2;
    constexpr std::uint64_t per_writer = 100000;
    recorder rec(writers, 2 * writers * per_writer * sizeof(event_record), 256);   // room for all
    std::atomic<std::uint64_t> recorded[writers] = {};
    std::vector<std::thread> ts;
    for (unsigned w = 0; w < writers; ++w)
        ts.emplace_back([&, w] {
            for (std::uint64_t i = 0; i < per_writer; ++i) {
                rec.buffer(w).record(event_kind::node_begin, i);
                recorded[w].store(i + 1, std::memory_order_release);
            }
        });
    std::uint64_t last[writers] = {};
    int snapshots = 0;
    for (bool done = false; !done; ++snapshots) {
        done = std::all_of(std::begin(recorded), std::end(recorded), [](const auto& r) { return r.load() == per_writer; });
        std::uint64_t before[writers];
        for (unsigned w = 0; w < writers; ++w) before[w] = recorded[w].load(std::memory_order_acquire);
        collector seen;   // each writer's events from 0 on, in order, with no gap
        const std::size_t n = rec.snapshot([&](unsigned w, const event_record* r, std::size_t k) { seen(w, r, k); });
        REQUIRE(seen.errors == 0);
        REQUIRE(seen.dropped == 0);
        REQUIRE(n == seen.events);
        for (unsigned w = 0; w < writers; ++w) {
            REQUIRE(seen.next[w] >= before[w]);   // what was recorded before the snapshot is in it
            REQUIRE(seen.next[w] >= last[w]);     // and no later snapshot loses it
            last[w] = seen.next[w];
        }
    }
    for (auto& t : ts) t.join();
    CHECK(snapshots >= 1);
    collector all;   // the snapshots took nothing: everything is still there, once
    rec.flush([&](unsigned w, const event_record* r, std::size_t k) { all(w, r, k); });
    CHECK(all.errors == 0);
    CHECK(all.events == writers * per_writer);
    CHECK(rec.dropped_total() == 0);
}

TEST_CASE("recorder: a lazy consumer waits until the backlog it asked for is full", "[tracer]") {
    recorder rec(1, 0, 16);   // 2 chunks of 16 events: the writer holds one, one is free
    REQUIRE(rec.chunks_in_pool() == 2);
    // Nothing full yet: the wait times out and says so.
    CHECK_FALSE(rec.wait_for_backlog(1, std::chrono::milliseconds(1)));
    for (std::uint64_t i = 0; i < 17; ++i) rec.buffer(0).record(event_kind::node_begin, i);   // fills chunk 1
    CHECK(rec.wait_for_backlog(1, std::chrono::milliseconds(0)));
    CHECK_FALSE(rec.wait_for_backlog(2, std::chrono::milliseconds(1)));

    // A writer on another thread wakes a consumer that sleeps, at the chunk that makes the backlog.
    recorder lazy(1, 64 * 16 * sizeof(event_record), 16);
    REQUIRE(lazy.chunks_in_pool() == 64);
    std::atomic<bool> woke{false};
    std::thread consumer([&] { woke = lazy.wait_for_backlog(32, std::chrono::seconds(60)); });
    for (std::uint64_t i = 0; i < 32 * 16 + 1; ++i) lazy.buffer(0).record(event_kind::node_begin, i);
    consumer.join();   // returns long before the minute: the crossing woke it
    CHECK(woke.load());
    collector seen;
    lazy.flush([&](unsigned w, const event_record* r, std::size_t n) { seen(w, r, n); });
    CHECK(seen.events == 32 * 16 + 1);
    CHECK(seen.errors == 0);
}

TEST_CASE("recorder: wake_consumer ends a lazy consumer's wait without a backlog", "[tracer]") {
    recorder rec(1, 1u << 20, 64);
    std::atomic<int> result{-1};
    std::thread consumer([&] { result = rec.wait_for_backlog(rec.chunks_in_pool(), std::chrono::seconds(60)) ? 1 : 0; });
    // Whether the wake comes before or during the wait, the wait returns (a wake is not lost).
    rec.wake_consumer();
    consumer.join();
    CHECK(result.load() == 0);
}

TEST_CASE("drain_thread: drains in bursts while writers record, and loses nothing silently", "[tracer][stress]") {
    constexpr unsigned writers = 2;
    constexpr std::uint64_t per_writer = 300000;
    recorder rec(writers, 128 * 256 * sizeof(event_record), 256);   // 128 chunks: bursts at 64 full
    collector seen;
    drain_thread drainer(rec, [&](unsigned w, const event_record* r, std::size_t n) { seen(w, r, n); });
    std::vector<std::thread> ts = start_writers(rec, writers, per_writer);
    for (auto& t : ts) t.join();
    // 600 000 events fill 2343 chunks, more than the pool: the drain thread is woken at least once
    // (and events it could not make room for in time were dropped, and counted).
    wait_until([&] { return drainer.bursts() >= 1; });
    drainer.stop();
    rec.flush([&](unsigned w, const event_record* r, std::size_t n) { seen(w, r, n); });
    CHECK(seen.errors == 0);
    CHECK(seen.events + rec.dropped_total() == writers * per_writer);
    CHECK(seen.dropped <= rec.dropped_total());
    CHECK(drainer.bursts() >= 1);
}

TEST_CASE("drain_thread: stop() hands over what the sink threw", "[tracer]") {
    recorder rec(1, 4 * 16 * sizeof(event_record), 16);
    std::atomic<bool> called{false};
    drain_thread drainer(rec, [&](unsigned, const event_record*, std::size_t) {
        called = true;
        throw std::runtime_error("disk full");
    });
    for (std::uint64_t i = 0; i < 4 * 16; ++i) rec.buffer(0).record(event_kind::node_begin, i);   // 3 full: a burst
    wait_until([&] { return called.load(); });
    CHECK_THROWS_WITH(drainer.stop(), "disk full");
    CHECK_NOTHROW(drainer.stop());   // once
}

TEST_CASE("recorder: drain_recorded passes partly filled chunks, each record once and in order", "[tracer]") {
    recorder rec(1, 1u << 20, 16);
    collector seen;
    auto sink = [&](unsigned w, const event_record* r, std::size_t n) { seen(w, r, n); };
    for (std::uint64_t i = 0; i < 5; ++i) rec.buffer(0).record(event_kind::node_begin, i);
    CHECK(rec.drain_recorded(sink) == 5);   // the chunk is not full: drain() would pass nothing
    CHECK(seen.events == 5);
    CHECK(rec.drain_recorded(sink) == 0);   // nothing new
    // The rest of that chunk fills it (once passed partly), two more chunks and part of a fourth.
    for (std::uint64_t i = 5; i < 60; ++i) rec.buffer(0).record(event_kind::node_begin, i);
    CHECK(rec.drain(sink) == 16 - 5 + 16 + 16);   // the full chunks, the first without its passed part
    CHECK(rec.drain_recorded(sink) == 60 - 48);
    for (std::uint64_t i = 60; i < 70; ++i) rec.buffer(0).record(event_kind::node_begin, i);
    CHECK(rec.snapshot([](unsigned, const event_record*, std::size_t) {}) == 70 - 60);   // not what was passed
    CHECK(rec.flush(sink) == 70 - 60);
    CHECK(seen.events == 70);
    CHECK(seen.errors == 0);   // each record once, in order
}

TEST_CASE("recorder: drain_recorded while writers record passes each writer's records once, in order", "[tracer][stress]") {
    constexpr unsigned writers = 2;
    constexpr std::uint64_t per_writer = 200000;
    recorder rec(writers, 64 * 256 * sizeof(event_record), 256);
    collector seen;
    auto sink = [&](unsigned w, const event_record* r, std::size_t n) { seen(w, r, n); };
    std::atomic<int> running{0};
    std::vector<std::thread> ts = start_writers(rec, writers, per_writer, &running);
    std::size_t passes = 0;
    while (running.load() > 0) {
        rec.drain_recorded(sink);
        ++passes;
    }
    for (auto& t : ts) t.join();
    rec.flush(sink);
    CHECK(passes >= 1);
    CHECK(seen.errors == 0);
    CHECK(seen.events + rec.dropped_total() == writers * per_writer);
    CHECK(seen.dropped <= rec.dropped_total());
}

TEST_CASE("drain_thread: what was recorded reaches the sink within the staleness, with no backlog", "[tracer]") {
    // A pool far from half full never wakes the lazy consumer; the staleness does. Before, these
    // events stayed in memory until the run ended, and a process killed then lost them all.
    recorder rec(1, 64u << 20, 4096);
    std::atomic<std::uint64_t> passed{0};
    drain_thread drainer(
        rec, [&](unsigned, const event_record*, std::size_t n) { passed.fetch_add(n); }, std::chrono::milliseconds(20));
    for (std::uint64_t i = 0; i < 100; ++i) rec.buffer(0).record(event_kind::node_begin, i);
    wait_until([&] { return passed.load() == 100; });
    CHECK(drainer.catch_ups() >= 1);
    CHECK(drainer.bursts() == 0);
    drainer.stop();
    CHECK(rec.flush([&](unsigned, const event_record*, std::size_t n) { passed.fetch_add(n); }) == 0);
    CHECK(passed.load() == 100);
}

namespace {

std::size_t resident_bytes() {   // the process's resident memory now (/proc/self/statm)
    std::FILE* f = std::fopen("/proc/self/statm", "r");
    REQUIRE(f);
    unsigned long size = 0, resident = 0;
    const int n = std::fscanf(f, "%lu %lu", &size, &resident);
    std::fclose(f);
    REQUIRE(n == 2);
    return resident * static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
}

}   // namespace

TEST_CASE("recorder: the budget is reserved, not touched: memory grows with what is recorded", "[tracer]") {
    const std::size_t before = resident_bytes();
    recorder rec(2, std::size_t{1} << 30);   // 1 GiB, 8192 chunks of 128 KiB
    CHECK(rec.chunks_in_pool() == 8192);
    CHECK(rec.chunks_allocated() == 0);
    std::uint64_t passed = 0;
    drain_thread drainer(
        rec, [&](unsigned, const event_record*, std::size_t n) { passed += n; }, std::chrono::milliseconds(10));
    for (std::uint64_t i = 0; i < 200000; ++i) rec.buffer(i % 2).record(event_kind::node_begin, i);
    drainer.stop();
    rec.flush([&](unsigned, const event_record*, std::size_t n) { passed += n; });
    CHECK(passed == 200000);
    // 200 000 events are 6.1 MiB: at most that many chunks were ever needed (fewer if drained ones
    // were reused), and the process grew by about that much, not by the budget (a zero-filled pool
    // was 1 GiB resident before the first event).
    CHECK(rec.chunks_allocated() <= 200000 / 4096 + 2);
    const std::size_t grown = resident_bytes() - std::min(before, resident_bytes());
    CHECK(grown < (std::size_t{64} << 20));
}

TEST_CASE("recorder: a budget above the machine's memory is refused with the figure", "[tracer]") {
    CHECK(budget_problem(1).empty());
    const std::uint64_t memory = physical_memory_bytes();
    REQUIRE(memory > 0);
    const std::size_t above = static_cast<std::size_t>(memory >> 20) + 1;
    const std::string why = budget_problem(above);
    const std::string gib = fmt::format("{:.1f}", static_cast<double>(memory) / (1 << 30));
    CHECK(why == " is more than this machine's " + gib + " GiB of memory");
    CHECK(budget_problem(static_cast<std::size_t>(memory >> 20)).empty());
}

TEST_CASE("clock: ticks convert to steady_clock nanoseconds, monotonically", "[tracer]") {
    const clock_sample a = clock_sample::take();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const clock_sample b = clock_sample::take();
    tick_converter conv(a, b);
    CHECK(conv.to_ns(a.ticks) == a.ns);
    const std::uint64_t mid = conv.to_ns(a.ticks + (b.ticks - a.ticks) / 2);
    CHECK(mid > a.ns);
    CHECK(mid < b.ns);
    CHECK(b.ns - a.ns >= 20'000'000);
}
