// The typed policies (runtime/include/pipescope/policies.hpp): one type per policy folder, each
// naming a registered policy; options_for and typed_policy_of are inverses on a policy's own knobs;
// a knob given in the common options is refused with its owner named; and a loop run through a
// typed policy computes what its string-named twin computes.
#include <pipescope/pipescope.hpp>

#include <catch2/catch.hpp>

#include <set>
#include <string>
#include <variant>
#include <vector>

using namespace pipescope;

namespace {

template <std::size_t... I>
std::set<std::string> typed_names(std::index_sequence<I...>) {
    return {std::string(name_of(pipeline_policy(std::in_place_index<I>)))...};
}

const std::vector<stage_kind> three_stages = {stage_kind::serial_in_order, stage_kind::parallel,
                                              stage_kind::serial_in_order};

// A three-stage loop with a real parallel stage: the digit sums of 1..n, appended in order.
std::vector<int> digit_sums(scheduler& s, const pipeline_policy& p) {
    std::vector<int> out;
    unsigned next = 1;
    pipe_while(
        s, [&] { return next <= 3000; },
        [&](iteration& it) -> pipe_task {
            unsigned n = next++;
            co_await it.stage(1);
            int sum = 0;
            for (; n; n /= 10) sum += static_cast<int>(n % 10);
            co_await it.stage_wait(2);
            out.push_back(sum);
        },
        p, {.name = "digit sums"});
    return out;
}

}   // namespace

TEST_CASE("typed policies: one type per registered pipe_while policy", "[policy][types]") {
    std::set<std::string> registered;
    for (const pipeline_policy_info& p : pipeline_policies()) registered.insert(p.name);
    CHECK(typed_names(std::make_index_sequence<std::variant_size_v<pipeline_policy>>()) == registered);
}

TEST_CASE("typed policies: options_for sets the policy's knobs, typed_policy_of reads them back", "[policy][types]") {
    const pipeline_options b =
        options_for(policies::bind_to_stage{.stages = three_stages, .stage_threads = 3, .queue_size = 7},
                    {.name = "n", .stage_names = {"a", "b", "c"}});
    CHECK(b.policy == "bind-to-stage");
    CHECK(b.stage_threads == 3);
    CHECK(b.queue_size == 7);
    CHECK(b.declared_stages == three_stages);
    CHECK(b.name == "n");
    CHECK(b.stage_names.size() == 3);
    const auto back = std::get<policies::bind_to_stage>(typed_policy_of(b));
    CHECK(back.stage_threads == 3);
    CHECK(back.queue_size == 7);
    CHECK(back.stages == three_stages);

    const pipeline_options p = options_for(policies::piper{.throttle = 5, .lazy_enabling = false});
    CHECK(p.policy == "piper");
    CHECK(p.throttle == 5);
    CHECK_FALSE(p.lazy_enabling);
    CHECK(p.dependency_folding);
    const auto pb = std::get<policies::piper>(typed_policy_of(p));
    CHECK(pb.throttle == 5);
    CHECK_FALSE(pb.lazy_enabling);

    const pipeline_options t = options_for(policies::tbb{.stages = three_stages, .tokens = 9});
    CHECK(t.policy == "tbb");
    CHECK(t.throttle == 9);
    CHECK(std::get<policies::tbb>(typed_policy_of(t)).tokens == 9);
    CHECK(std::holds_alternative<policies::serial>(typed_policy_of({.policy = "serial"})));
    CHECK(std::holds_alternative<policies::piper_earliest>(typed_policy_of({.policy = "piper-earliest"})));
}

TEST_CASE("typed policies: a policy knob in the common options is refused, naming its owner", "[policy][types]") {
    CHECK_THROWS_WITH(options_for(policies::piper{}, {.stage_threads = 4}),
                      "options_for(piper): pipeline_options::stage_threads is set in the common options; give it in "
                      "policies::bind_to_stage instead");
    CHECK_THROWS_WITH(options_for(policies::tbb{}, {.throttle = 4}),
                      Catch::Matchers::Contains("pipeline_options::throttle") && Catch::Matchers::Contains("tbb (tokens)"));
    CHECK_THROWS_WITH(options_for(policies::serial{}, {.policy = "tbb"}),
                      Catch::Matchers::Contains("pipeline_options::policy"));
    CHECK_THROWS_WITH(typed_policy_of({.policy = "pipr"}),
                      Catch::Matchers::StartsWith("typed_policy_of: unknown policy 'pipr' (known: ") &&
                          Catch::Matchers::Contains("piper"));
}

TEST_CASE("typed policies: every typed policy computes the serial elision's result", "[policy][types]") {
    scheduler s({.workers = 2});
    const std::vector<int> expected = digit_sums(s, policies::serial{});
    REQUIRE(expected.size() == 3000);
    CHECK(expected[998] == 27);   // 999
    CHECK(digit_sums(s, policies::piper{.throttle = 3}) == expected);
    CHECK(digit_sums(s, policies::piper{.lazy_enabling = false, .dependency_folding = false}) == expected);
    CHECK(digit_sums(s, policies::piper_earliest{}) == expected);
    CHECK(digit_sums(s, policies::tbb{.stages = three_stages, .tokens = 4}) == expected);
    CHECK(digit_sums(s, policies::bind_to_stage{.stages = three_stages, .stage_threads = 2, .queue_size = 2}) == expected);
}
