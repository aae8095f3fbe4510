// The stage-graph packet queue (runtime/include/pipescope/graph/queue.hpp): exact single-threaded
// semantics, ordered publication with out-of-order commits, and a multi-threaded stress.
#include <pipescope/graph/queue.hpp>

#include <catch2/catch.hpp>

#include <algorithm>
#include <atomic>
#include <deque>
#include <memory>
#include <mutex>
#include <cstdint>
#include <limits>
#include <map>
#include <random>
#include <thread>
#include <vector>

using namespace pipescope::graph;

namespace {

queue_config ints(std::size_t n, std::size_t capacity, bool ordered = false, std::size_t producers = 1) {
    return {.name = "q",
            .element_size = sizeof(int),
            .packet_elements = n,
            .capacity_packets = capacity,
            .ordered = ordered,
            .producers = producers};
}

// Reserves `packets`, writes first, first+1, ... and commits `elements` of them (all by default).
push_window push_values(packet_queue& q, std::size_t packets, int first, std::size_t elements = SIZE_MAX) {
    push_window w = q.try_reserve_push(packets);
    REQUIRE(w);
    for (std::size_t i = 0; i < w.capacity(); ++i) w.at<int>(i) = first + static_cast<int>(i);
    if (elements != SIZE_MAX) q.commit_push(w, elements);
    return w;
}

std::vector<int> values(const pop_window& w) {
    std::vector<int> v;
    for (std::size_t i = 0; i < w.size(); ++i) v.push_back(w.at<int>(i));
    return v;
}

std::vector<int> peeked(const pop_window& w) {
    std::vector<int> v;
    for (std::size_t j = 0; j < w.peek_size(); ++j) v.push_back(w.peek<int>(j));
    return v;
}

std::vector<int> iota(int from, int to) {
    std::vector<int> v;
    for (int i = from; i < to; ++i) v.push_back(i);
    return v;
}

}   // namespace

TEST_CASE("queue: a configuration with a zero size is refused, naming the field", "[graph][queue]") {
    CHECK_THROWS_WITH(packet_queue(ints(0, 4)), "packet_queue 'q': packet_elements is 0");
    CHECK_THROWS_WITH(packet_queue(ints(4, 0)), "packet_queue 'q': capacity_packets is 0");
    CHECK_THROWS_WITH(packet_queue(ints(4, 4, false, 0)), Catch::Contains("producers is 0"));
    queue_config c = ints(4, 4);
    c.element_size = 0;
    CHECK_THROWS_WITH(packet_queue(c), "packet_queue 'q': element_size is 0");
    c = ints(4, 4);
    c.element_size = SIZE_MAX / 2;
    CHECK_THROWS_WITH(packet_queue(c), Catch::Contains("overflows"));
}

TEST_CASE("queue: reserve/commit windows, capacity in packets, stats", "[graph][queue]") {
    packet_queue q(ints(4, 3));
    const auto space0 = q.space_version();

    push_window a = push_values(q, 2, 0);
    CHECK(a.packets() == 2);
    CHECK(a.capacity() == 8);
    CHECK(q.try_reserve_push(2).status() == reserve_status::full);   // 1 packet left
    CHECK(q.try_reserve_pop(1).status() == reserve_status::empty);   // reserved is not committed
    CHECK(q.stats().packets_in_use == 2);
    CHECK(q.stats().elements_queued == 0);

    const auto data0 = q.data_version();
    CHECK(q.commit_push(a));
    CHECK_FALSE(a);   // the window is emptied by its commit
    CHECK(q.data_version() > data0);
    queue_stats s = q.stats();
    CHECK(s.elements_queued == 8);
    CHECK(s.elements_pushed == 8);
    CHECK(s.packets_pushed == 2);
    CHECK(s.bytes_in_use == 2 * 4 * sizeof(int));

    pop_window r1 = q.try_reserve_pop(1);
    REQUIRE(r1);
    CHECK(values(r1) == iota(0, 4));
    pop_window r2 = q.try_reserve_pop(1);
    REQUIRE(r2);
    CHECK(values(r2) == iota(4, 8));
    CHECK(q.try_reserve_pop(1).status() == reserve_status::empty);

    // Space comes back at commit_pop, not at reserve.
    CHECK(q.try_reserve_push(3).status() == reserve_status::full);
    CHECK(q.space_version() == space0);
    q.commit_pop(r1);
    q.commit_pop(r2);
    CHECK(q.space_version() > space0);
    CHECK(q.try_reserve_push(3));   // abandoned reservation: fine on an unordered queue until close

    s = q.stats();
    CHECK(s.elements_popped == 8);
    CHECK(s.packets_popped == 2);
    CHECK(s.peak_packets_in_use == 3);
    CHECK(s.peak_elements_queued == 8);
    CHECK(s.peak_bytes_in_use == 3 * 4 * sizeof(int));
}

TEST_CASE("queue: a short commit packs into partial packets, close drains then ends the stream", "[graph][queue]") {
    packet_queue q(ints(4, 4, false, 2));
    push_values(q, 3, 100, 5);   // 4 + 1 elements; the third packet goes straight back
    CHECK(q.stats().packets_in_use == 2);
    CHECK(q.stats().elements_queued == 5);

    CHECK(q.try_reserve_pop(3).status() == reserve_status::empty);   // only 2 packets, stream still open
    q.close();
    CHECK_FALSE(q.closed());   // one of two producers
    CHECK(q.try_reserve_pop(3).status() == reserve_status::empty);
    q.close();
    CHECK(q.closed());
    CHECK_FALSE(q.end_of_stream());

    pop_window r = q.try_reserve_pop(3);   // end of stream: what is left
    REQUIRE(r);
    CHECK(r.packets() == 2);
    CHECK(r.packet_size(0) == 4);
    CHECK(r.packet_size(1) == 1);
    CHECK(values(r) == iota(100, 105));
    CHECK(q.end_of_stream());
    CHECK(q.try_reserve_pop(1).status() == reserve_status::end_of_stream);
    q.commit_pop(r);
    CHECK(q.stats().packets_in_use == 0);
    CHECK(q.try_reserve_pop(1).status() == reserve_status::end_of_stream);
}

// A parallel stage finishes when its input is drained (engine.cpp, try_finish_parallel): the end of
// the stream alone is not enough while a consumer still holds a window it may give back.
TEST_CASE("queue: drained means ended and no pop reservation open, which end_of_stream does not wait for",
          "[graph][queue]") {
    packet_queue q(ints(2, 4));
    push_values(q, 1, 10, 2);
    q.close();
    CHECK_FALSE(q.drained());   // a packet is still published
    pop_window w = q.try_reserve_pop(1);
    REQUIRE(w);
    CHECK(q.end_of_stream());   // every element handed out...
    CHECK_FALSE(q.drained());   // ...but the window is open
    q.cancel_pop(w);            // and it can come back
    CHECK_FALSE(q.end_of_stream());
    CHECK_FALSE(q.drained());
    pop_window again = q.try_reserve_pop(1);
    REQUIRE(again);
    CHECK(values(again) == std::vector<int>{10, 11});
    q.commit_pop(again);
    CHECK(q.drained());
    CHECK(q.end_of_stream());
}

TEST_CASE("queue: a commit of zero elements publishes nothing and frees its packets", "[graph][queue]") {
    packet_queue q(ints(2, 2));
    push_values(q, 2, 0, 0);
    CHECK(q.stats().packets_in_use == 0);
    CHECK(q.stats().packets_pushed == 0);
    CHECK(q.try_reserve_pop(1).status() == reserve_status::empty);
}

TEST_CASE("queue: peek reads past the window without consuming", "[graph][queue]") {
    packet_queue q(ints(2, 4));
    push_values(q, 3, 0, 6);   // packets {0,1} {2,3} {4,5}

    CHECK(q.try_reserve_pop(1, 5).status() == reserve_status::empty);   // 4 elements after the window
    pop_window a = q.try_reserve_pop(1, 3);
    REQUIRE(a);
    CHECK(values(a) == iota(0, 2));
    CHECK(a.peek_size() == 3);
    CHECK(peeked(a) == iota(2, 5));
    CHECK_THROWS_WITH(a.peek<int>(3), Catch::Contains("reserved with peek 3"));

    // The peeked packets are still there for the next consumer...
    pop_window b = q.try_reserve_pop(2);
    REQUIRE(b);
    CHECK(values(b) == iota(2, 6));
    // ...but are not released before the window that peeks at them commits.
    const auto space0 = q.space_version();
    q.commit_pop(b);
    CHECK(q.space_version() == space0);
    CHECK(q.stats().packets_in_use == 3);
    CHECK(a.peek<int>(2) == 4);
    q.commit_pop(a);   // frees a's packet and b's two
    CHECK(q.space_version() > space0);
    CHECK(q.stats().packets_in_use == 0);
    CHECK(q.stats().elements_popped == 6);
}

TEST_CASE("queue: a peek that cannot be satisfied is cut short only when waiting cannot help", "[graph][queue]") {
    SECTION("at end of stream") {
        packet_queue q(ints(2, 4));
        push_values(q, 2, 0, 3);   // {0,1} {2}
        CHECK(q.try_reserve_pop(1, 2).status() == reserve_status::empty);
        q.close();
        pop_window r = q.try_reserve_pop(1, 2);
        REQUIRE(r);
        CHECK(r.peek_size() == 1);
        CHECK(r.peek<int>(0) == 2);
        CHECK_THROWS_WITH(r.peek<int>(1), Catch::Contains("only 1 of the 2 requested peek elements exist"));
    }
    SECTION("when the queue is full of short packets and nothing is reserved") {
        packet_queue q(ints(4, 2));
        push_values(q, 1, 10, 1);
        CHECK(q.try_reserve_pop(1, 4).status() == reserve_status::empty);   // a packet is still free
        push_window open = push_values(q, 1, 20);
        CHECK(q.try_reserve_pop(1, 4).status() == reserve_status::empty);   // the producer may still commit
        q.commit_push(open, 1);
        pop_window r = q.try_reserve_pop(1, 4);   // 2 packets of 1 element: 4 more can never arrive
        REQUIRE(r);
        CHECK(values(r) == std::vector<int>{10});
        CHECK(peeked(r) == std::vector<int>{20});
    }
}

TEST_CASE("queue: an ordered queue publishes in reservation order whatever the commit order", "[graph][queue]") {
    packet_queue q(ints(2, 4, /*ordered=*/true));
    push_window a = push_values(q, 1, 0);
    push_window b = push_values(q, 1, 10);
    push_window c = push_values(q, 2, 20);
    CHECK(a.ticket() == 0);
    CHECK(b.ticket() == 1);
    CHECK(c.ticket() == 2);

    const auto data0 = q.data_version();
    CHECK_FALSE(q.commit_push(c));   // recorded, waits for tickets 0 and 1 — without blocking
    CHECK_FALSE(q.commit_push(b, 1));
    CHECK(q.data_version() == data0);
    CHECK(q.try_reserve_pop(1).status() == reserve_status::empty);
    CHECK(q.stats().elements_queued == 0);

    CHECK(q.commit_push(a));   // publishes a, then b and c
    CHECK(q.data_version() > data0);
    pop_window r = q.try_reserve_pop(4);
    REQUIRE(r);
    CHECK(values(r) == std::vector<int>{0, 1, 10, 20, 21, 22, 23});
}

TEST_CASE("queue: an unordered queue publishes at commit", "[graph][queue]") {
    packet_queue q(ints(2, 4));
    push_window a = push_values(q, 1, 0);
    push_window b = push_values(q, 1, 10);
    CHECK(q.commit_push(b));
    pop_window r = q.try_reserve_pop(1);
    REQUIRE(r);
    CHECK(values(r) == iota(10, 12));
    q.commit_push(a);
    q.commit_pop(r);
    r = q.try_reserve_pop(1);
    REQUIRE(r);
    CHECK(values(r) == iota(0, 2));
}

TEST_CASE("queue: the signal hook runs after the change, outside the lock", "[graph][queue]") {
    std::vector<std::string> seen;
    queue_config c = ints(2, 2);
    c.on_signal = [&](const packet_queue& q, queue_signal s) {
        // Calling back into the queue would deadlock if the hook ran under its lock.
        auto& self = const_cast<packet_queue&>(q);
        if (s == queue_signal::data) {
            pop_window r = self.try_reserve_pop(1);
            seen.push_back(r ? "data:" + std::to_string(r.at<int>(0)) : "data:eos");
            if (r) self.commit_pop(r);
        } else {
            seen.push_back("space:" + std::to_string(q.stats().packets_in_use));
        }
    };
    packet_queue q(c);
    push_values(q, 1, 7, 2);
    q.close();
    CHECK(seen == std::vector<std::string>{"data:7", "space:0", "data:eos"});
}

TEST_CASE("queue: bad use gets an exception that says what is wrong", "[graph][queue]") {
    packet_queue q(ints(4, 2, false, 1));
    packet_queue other(queue_config{.name = "other", .element_size = 4, .packet_elements = 4, .capacity_packets = 2});

    push_window never;
    CHECK_THROWS_WITH(q.commit_push(never), Catch::Contains("commit_push: the window holds no reservation"));
    pop_window none;
    CHECK_THROWS_WITH(q.commit_pop(none), Catch::Contains("commit_pop: the window holds no reservation"));
    pop_window failed = q.try_reserve_pop(1);
    CHECK_THROWS_WITH(q.commit_pop(failed), Catch::Contains("the reserve failed"));

    CHECK_THROWS_WITH(q.try_reserve_push(0), "packet_queue 'q': try_reserve_push(0): reserve at least one packet");
    CHECK_THROWS_WITH(q.try_reserve_push(3), Catch::Contains("more than the capacity of 2 packets"));
    CHECK_THROWS_WITH(q.try_reserve_pop(0), Catch::Contains("try_reserve_pop(0)"));
    CHECK_THROWS_WITH(q.try_reserve_pop(1, 5),
                      Catch::Contains("needs 1 + ceil(5 / 4) packets, more than the capacity of 2"));
    // The packet count of a peek must not wrap around: SIZE_MAX elements are too many, not zero packets.
    CHECK_THROWS_WITH(q.try_reserve_pop(1, std::numeric_limits<std::size_t>::max()),
                      Catch::Contains("more than the capacity of 2"));

    push_window w = q.try_reserve_push(1);
    CHECK_THROWS_WITH(w.at<int>(4), Catch::Contains("element(4): the window holds only 4 elements"));
    CHECK_THROWS_WITH(w.at<std::int64_t>(0), Catch::Contains("element type of 8 bytes, but elements are 4 bytes"));
    CHECK_THROWS_WITH(q.commit_push(w, 5), Catch::Contains("commit_push(5 elements): the window holds only 4"));
    CHECK_THROWS_WITH(other.commit_push(w), "packet_queue 'other': commit_push: the window was reserved from queue 'q'");
    push_window copy = w;
    q.commit_push(w, 2);
    CHECK_THROWS_WITH(q.commit_push(copy), Catch::Contains("ticket 0 is not an open reservation"));

    pop_window r = q.try_reserve_pop(1);
    REQUIRE(r);
    CHECK_THROWS_WITH(r.at<int>(2), Catch::Contains("holds only 2 elements (use peek() to read past it)"));
    CHECK_THROWS_WITH(r.peek<int>(0), Catch::Contains("reserved with peek 0"));
    pop_window rcopy = r;
    q.commit_pop(r);
    CHECK_THROWS_WITH(q.commit_pop(rcopy), Catch::Contains("commit_pop: ticket 0 is not an open reservation"));

    push_window open = q.try_reserve_push(1);
    CHECK_THROWS_WITH(q.close(), Catch::Contains("closed with 1 push reservation(s) not committed"));
    q.commit_push(open);
    q.close();
    CHECK_THROWS_WITH(q.close(), "packet_queue 'q': close: all 1 producers already closed");
    CHECK_THROWS_WITH(q.try_reserve_push(1), Catch::Contains("try_reserve_push after every producer closed"));
}

// Producers commit windows of random sizes (sometimes short, sometimes empty); consumers take random
// windows with random peeks. Each element carries (push ticket, index). Afterwards: every committed
// element arrived exactly once; in pop-ticket order, the stream is in push-ticket order when the
// queue is ordered; every peeked element equals the element that later came at that position of the
// stream (a packet overwritten while peeked at would differ); the fill never exceeded the capacity.
namespace {
void stress(bool ordered) {
    constexpr int producers = 3, consumers = 3, windows_per_producer = 1500;
    constexpr std::size_t n = 4, capacity = 6;
    packet_queue q(ints(n, capacity, ordered, producers));

    struct committed {
        std::uint32_t ticket, count;
    };
    struct taken {
        std::uint64_t ticket;
        std::vector<int> data, peek;
    };
    std::vector<std::vector<committed>> pushed(producers);
    std::vector<std::vector<taken>> popped(consumers);
    auto encode = [](std::uint64_t ticket, std::size_t i) { return static_cast<int>(ticket * 16 + i); };

    std::atomic<int> violations{0};
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p)
        threads.emplace_back([&, p] {
            std::mt19937 rng(static_cast<unsigned>(p + 1));
            for (int k = 0; k < windows_per_producer; ++k) {
                const std::size_t packets = 1 + rng() % 3;
                push_window w;
                while (!(w = q.try_reserve_push(packets))) std::this_thread::yield();
                const std::size_t count = rng() % 8 == 0 ? rng() % w.capacity() : w.capacity();
                for (std::size_t i = 0; i < count; ++i) w.at<int>(i) = encode(w.ticket(), i);
                pushed[p].push_back({static_cast<std::uint32_t>(w.ticket()), static_cast<std::uint32_t>(count)});
                q.commit_push(w, count);
            }
            q.close();
        });
    for (int c = 0; c < consumers; ++c)
        threads.emplace_back([&, c] {
            std::mt19937 rng(static_cast<unsigned>(100 + c));
            for (;;) {
                const std::size_t packets = 1 + rng() % 2, peek = rng() % 2 ? rng() % 9 : 0;
                pop_window r = q.try_reserve_pop(packets, peek);
                if (r.status() == reserve_status::end_of_stream) return;
                if (!r) {
                    std::this_thread::yield();
                    continue;
                }
                if (r.peek_size() > peek || q.stats().packets_in_use > capacity) ++violations;   // Catch is not thread-safe
                popped[c].push_back({r.ticket(), values(r), peeked(r)});
                q.commit_pop(r);
            }
        });
    for (auto& t : threads) t.join();
    CHECK(violations == 0);

    // Expected stream: all committed elements, in push-ticket order.
    std::map<std::uint32_t, std::uint32_t> by_ticket;
    for (const auto& list : pushed)
        for (const committed& w : list) CHECK(by_ticket.emplace(w.ticket, w.count).second);
    std::vector<int> expected;
    for (auto [ticket, count] : by_ticket)
        for (std::size_t i = 0; i < count; ++i) expected.push_back(encode(ticket, i));

    std::vector<taken> all;
    for (auto& list : popped) all.insert(all.end(), list.begin(), list.end());
    std::sort(all.begin(), all.end(), [](const taken& a, const taken& b) { return a.ticket < b.ticket; });
    std::vector<int> stream;
    for (const taken& t : all) stream.insert(stream.end(), t.data.begin(), t.data.end());

    std::size_t pos = 0, bad_peeks = 0;
    for (const taken& t : all) {
        pos += t.data.size();
        for (std::size_t j = 0; j < t.peek.size(); ++j)
            if (pos + j >= stream.size() || stream[pos + j] != t.peek[j]) ++bad_peeks;
    }
    CHECK(bad_peeks == 0);

    if (ordered) {
        CHECK(stream == expected);
    } else {
        std::vector<int> sorted = stream;
        std::sort(sorted.begin(), sorted.end());
        CHECK(sorted == expected);   // expected is sorted: tickets ascend, indices below 16
    }
    const queue_stats s = q.stats();
    CHECK(s.peak_packets_in_use <= capacity);
    CHECK(s.peak_packets_in_use >= 1);
    CHECK(s.packets_in_use == 0);
    CHECK(s.elements_queued == 0);
    CHECK(s.elements_pushed == expected.size());
    CHECK(s.elements_popped == expected.size());
    CHECK(q.end_of_stream());
}
}   // namespace

TEST_CASE("queue: stress, unordered: every element arrives exactly once, peeks see the stream", "[graph][queue][stress]") {
    stress(false);
}

TEST_CASE("queue: stress, ordered: consumers see the elements in ticket order", "[graph][queue][stress]") { stress(true); }

// ---------------------------------------------------------------------------------------------------
// The allocation-free containers under the queue (runtime/include/pipescope/detail/packet_list.hpp).

TEST_CASE("queue internals: a packet list keeps two packets inline and grows past them, copies and moves",
          "[graph][queue]") {
    using detail::packet_list;
    using detail::packet_ref;
    std::byte mem[8];
    auto ref = [&](int i) { return packet_ref{mem + i, static_cast<std::uint32_t>(i)}; };
    packet_list a;
    CHECK(a.empty());
    for (int i = 0; i < 7; ++i) a.push_back(ref(i));   // past the inline two: on the heap
    REQUIRE(a.size() == 7);
    for (int i = 0; i < 7; ++i) CHECK(a[static_cast<std::size_t>(i)].count == static_cast<std::uint32_t>(i));
    packet_list b = a;   // a copy is independent
    b.push_back(ref(7));
    CHECK(a.size() == 7);
    CHECK(b.size() == 8);
    packet_list c = std::move(b);   // a move takes the heap block and leaves an empty list
    CHECK(c.size() == 8);
    CHECK(c[7].data == mem + 7);
    CHECK(b.empty());
    b.push_back(ref(1));   // the moved-from list is usable again (inline)
    CHECK(b.size() == 1);
    packet_list small;
    small.push_back(ref(3));
    c = small;   // copy-assign over a heap list
    CHECK(c.size() == 1);
    CHECK(c[0].count == 3);
    packet_list d = std::move(small);   // an inline move copies the packets
    CHECK(d.size() == 1);
    CHECK(d[0].data == mem + 3);
    c.clear();
    CHECK(c.empty());
}

TEST_CASE("queue internals: a ring is a FIFO at both ends across wrap-arounds and growth", "[graph][queue]") {
    detail::ring<int> r;
    std::deque<int> model;
    std::mt19937 rng(7);
    for (int step = 0; step < 20000; ++step) {
        const unsigned op = rng() % 8;
        if (op < 3) {
            r.push_back(step);
            model.push_back(step);
        } else if (op < 4) {
            r.push_front(-step);
            model.push_front(-step);
        } else if (op < 7 && !model.empty()) {
            REQUIRE(r.front() == model.front());
            r.pop_front();
            model.pop_front();
        } else if (!model.empty()) {
            REQUIRE(r.back() == model.back());
            r.pop_back();
            model.pop_back();
        }
        REQUIRE(r.size() == model.size());
        if (!model.empty() && step % 97 == 0)
            for (std::size_t i = 0; i < model.size(); ++i) REQUIRE(r[i] == model[i]);
    }
}

// Producers that give reservations back (cancel_push) and consumers that put windows back
// (cancel_pop, one consumer stage at a time as the engine does under its stage lock), on two queues
// that share a footprint meter: every element arrives once, and the meter returns to zero with peaks
// no larger than the capacities allow.
TEST_CASE("queue: stress, cancelled reservations and a shared footprint meter", "[graph][queue][stress]") {
    constexpr int producers = 2, windows_per_producer = 3000;
    constexpr std::size_t n = 4, capacity = 5;
    footprint_meter meter;
    std::vector<std::unique_ptr<packet_queue>> queues;
    for (int k = 0; k < 2; ++k) {
        queue_config c = ints(n, capacity, k == 1, producers);
        c.footprint = &meter;
        queues.push_back(std::make_unique<packet_queue>(std::move(c)));
    }
    std::vector<std::thread> threads;
    std::vector<std::vector<int>> received(2);
    std::atomic<long> sent_sum{0};
    for (int k = 0; k < 2; ++k) {
        packet_queue& q = *queues[static_cast<std::size_t>(k)];
        for (int p = 0; p < producers; ++p)
            threads.emplace_back([&q, &sent_sum, k, p] {
                std::mt19937 rng(static_cast<unsigned>(10 * k + p + 1));
                for (int w = 0; w < windows_per_producer;) {
                    push_window win = q.try_reserve_push(1 + rng() % 3);
                    if (!win) {
                        std::this_thread::yield();
                        continue;
                    }
                    if (rng() % 5 == 0) {   // a tentative reservation, given back
                        q.cancel_push(win);
                        continue;
                    }
                    const std::size_t count = 1 + rng() % win.capacity();
                    for (std::size_t i = 0; i < count; ++i) {
                        const int v = (p * windows_per_producer + w) * 16 + static_cast<int>(i);
                        win.at<int>(i) = v;
                        sent_sum += v;
                    }
                    q.commit_push(win, count);
                    ++w;
                }
                q.close();
            });
        // The consumer side: two threads that take turns under one lock, as a stage's instances do.
        auto stage_lock = std::make_shared<std::mutex>();
        auto out_lock = std::make_shared<std::mutex>();
        for (int c = 0; c < 2; ++c)
            threads.emplace_back([&q, &received, k, c, stage_lock, out_lock] {
                std::mt19937 rng(static_cast<unsigned>(100 + 10 * k + c));
                for (;;) {
                    pop_window r;
                    {
                        std::lock_guard lk(*stage_lock);
                        r = q.try_reserve_pop(1 + rng() % 2, 0);
                        if (r.status() == reserve_status::end_of_stream) return;
                        if (r && rng() % 4 == 0) {   // tentative: put it back before anyone reserves after it
                            q.cancel_pop(r);
                            continue;
                        }
                    }
                    if (!r) {
                        std::this_thread::yield();
                        continue;
                    }
                    std::vector<int> v = values(r);
                    q.commit_pop(r);
                    std::lock_guard lk(*out_lock);
                    received[static_cast<std::size_t>(k)].insert(received[static_cast<std::size_t>(k)].end(), v.begin(),
                                                                 v.end());
                }
            });
    }
    for (auto& t : threads) t.join();
    long got = 0;
    for (int k = 0; k < 2; ++k) {
        std::vector<int> v = received[static_cast<std::size_t>(k)];
        std::sort(v.begin(), v.end());
        CHECK(std::adjacent_find(v.begin(), v.end()) == v.end());   // nothing twice
        for (int x : v) got += x;
        const queue_stats s = queues[static_cast<std::size_t>(k)]->stats();
        CHECK(s.packets_in_use == 0);
        CHECK(s.elements_popped == v.size());
        CHECK(queues[static_cast<std::size_t>(k)]->end_of_stream());
    }
    CHECK(got == sent_sum.load());
    CHECK(meter.packets() == 0);
    CHECK(meter.bytes() == 0);
    CHECK(meter.peak_packets() >= 1);
    CHECK(meter.peak_packets() <= static_cast<std::int64_t>(2 * capacity));
    CHECK(meter.peak_bytes() <= static_cast<std::int64_t>(2 * capacity * n * sizeof(int)));
}

// The versions and hints are written under the lock with plain stores, and not at all when the
// value did not change (issue 17: a store takes the line from every poller). What must still hold:
// a producer or consumer that waits only for a version to move (no timeout, no other polling, as a
// scheduler parked on the queue does) is always woken — a move that was skipped hangs this test —
// and the hints a poller reads without the lock stay within bounds, the versions and the published
// count never go back, and at the end every hint equals the state.
TEST_CASE("queue: stress, waiting on versions and polling hints without the lock", "[graph][queue][stress]") {
    constexpr int producers = 2, consumers = 2, windows_per_producer = 4000;
    constexpr std::size_t n = 2, capacity = 3;
    packet_queue q(ints(n, capacity, false, producers));
    std::atomic<long> sent{0}, received{0};
    std::atomic<int> violations{0};
    std::atomic<bool> done{false};
    std::vector<std::thread> threads;
    for (int p = 0; p < producers; ++p)
        threads.emplace_back([&, p] {
            std::mt19937 rng(static_cast<unsigned>(p + 7));
            for (int k = 0; k < windows_per_producer; ++k) {
                push_window w;
                for (;;) {
                    const std::uint64_t seen = q.space_version();   // read before the try
                    if ((w = q.try_reserve_push(1 + rng() % 2))) break;
                    while (q.space_version() == seen) std::this_thread::yield();
                }
                const std::size_t count = rng() % 6 == 0 ? 0 : 1 + rng() % w.capacity();
                for (std::size_t i = 0; i < count; ++i) {
                    w.at<int>(i) = k;
                    sent += k;
                }
                q.commit_push(w, count);
            }
            q.close();
        });
    for (int c = 0; c < consumers; ++c)
        threads.emplace_back([&] {
            for (;;) {
                const std::uint64_t seen = q.data_version();   // read before the try
                pop_window r = q.try_reserve_pop(1);
                if (r.status() == reserve_status::end_of_stream) return;
                if (!r) {
                    while (q.data_version() == seen) std::this_thread::yield();
                    continue;
                }
                for (std::size_t i = 0; i < r.size(); ++i) received += r.at<int>(i);
                q.commit_pop(r);
            }
        });
    std::thread poller([&] {
        std::uint64_t data = 0, space = 0, published = 0;
        while (!done.load()) {
            const std::uint64_t d = q.data_version(), s = q.space_version(), pub = q.published_packets_hint();
            if (d < data || s < space || pub < published) ++violations;   // Catch is not thread-safe
            data = d;
            space = s;
            published = pub;
            if (q.ready_packets_hint() > capacity || q.free_packets_hint() > capacity ||
                q.packets_in_use_hint() > capacity || q.waiting_commits_hint() != 0)
                ++violations;
        }
    });
    for (auto& t : threads) t.join();
    done = true;
    poller.join();
    CHECK(violations == 0);
    CHECK(received.load() == sent.load());
    const queue_stats s = q.stats();
    CHECK(q.ready_packets_hint() == 0);
    CHECK(q.free_packets_hint() == capacity);
    CHECK(q.packets_in_use_hint() == 0);
    CHECK(q.published_packets_hint() == s.packets_pushed);
    CHECK(q.closed());
    CHECK(q.end_of_stream());
}
