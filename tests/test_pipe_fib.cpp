#include <pipescope/workloads/pipe_fib.hpp>

#include <catch2/catch.hpp>

using namespace pipescope;
using namespace pipescope::workloads;

TEST_CASE("pipe-fib: the serial program knows its Fibonacci numbers", "[pipe-fib]") {
    CHECK(fib_to_decimal(pipe_fib_serial(1)) == "1");
    CHECK(fib_to_decimal(pipe_fib_serial(2)) == "1");
    CHECK(fib_to_decimal(pipe_fib_serial(10)) == "55");
    CHECK(fib_to_decimal(pipe_fib_serial(90)) == "2880067194370816120");
    CHECK(fib_to_decimal(pipe_fib_serial(100)) == "354224848179261915075");
    CHECK_THROWS_WITH(pipe_fib_serial(0), Catch::Contains("n must be at least 1"));
}

TEST_CASE("pipe-fib: the pipeline equals the serial program for every grain and policy", "[pipe-fib]") {
    for (unsigned p : {1u, 2u, 3u}) {
        scheduler s({p});
        for (unsigned bits : {1u, 3u, 64u, 256u}) {
            for (unsigned n : {3u, 4u, 50u, 777u, 3000u}) {
                for (int variant = 0; variant < 4; ++variant) {
                    pipeline_options o;
                    o.lazy_enabling = variant & 1;
                    o.dependency_folding = variant & 2;
                    o.throttle = (variant == 3) ? 1 : 0;
                    CAPTURE(p, bits, n, variant);
                    REQUIRE(pipe_fib_pipeline(s, n, bits, o) == pipe_fib_serial(n));
                }
            }
        }
    }
}

TEST_CASE("pipe-fib: oversubscribed workers preempted inside claim windows still give the serial result",
          "[pipe-fib][stress]") {
    // More workers than cores: the OS preempts workers between reading a slot and claiming it, the
    // window in which a slot can be reused by iteration i+K (a bug once, found by TSan this way).
    scheduler s({6});
    const fib_bits expected = pipe_fib_serial(1500);
    for (int rep = 0; rep < 30; ++rep) {
        pipeline_options o;
        o.lazy_enabling = rep % 2 == 0;
        o.dependency_folding = rep % 3 == 0;
        o.throttle = 3 + rep % 5;
        CAPTURE(rep);
        REQUIRE(pipe_fib_pipeline(s, 1500, 1 + rep % 4, o) == expected);
    }
}
