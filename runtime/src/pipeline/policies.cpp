// The typed policies (policies.hpp) to and from the flat pipeline_options the engines read.
#include <pipescope/policies.hpp>

#include <stdexcept>
#include <string>
#include <type_traits>

namespace pipescope {

namespace {

template <class... F>
struct overloaded : F... {
    using F::operator()...;
};
// Spelled out for compilers without deduction for aggregates (clang before 17: clang-tidy 14).
template <class... F>
overloaded(F...) -> overloaded<F...>;

// A knob of one policy set in `common`, where options_for would silently drop or overwrite it.
void refuse_policy_knobs(std::string_view policy, const pipeline_options& common) {
    const pipeline_options defaults;
    auto refuse = [&](const char* knob, const char* owner) {
        throw std::invalid_argument("options_for(" + std::string(policy) + "): pipeline_options::" + knob +
                                    " is set in the common options; give it in " + owner + " instead");
    };
    if (common.policy != defaults.policy) refuse("policy", "the policy's type");
    if (common.throttle != defaults.throttle) refuse("throttle", "policies::piper, piper_earliest or tbb (tokens)");
    if (common.lazy_enabling != defaults.lazy_enabling) refuse("lazy_enabling", "policies::piper or piper_earliest");
    if (common.dependency_folding != defaults.dependency_folding)
        refuse("dependency_folding", "policies::piper or piper_earliest");
    if (!common.declared_stages.empty()) refuse("declared_stages", "policies::tbb or bind_to_stage (stages)");
    if (common.stage_threads != defaults.stage_threads) refuse("stage_threads", "policies::bind_to_stage");
    if (common.queue_size != defaults.queue_size) refuse("queue_size", "policies::bind_to_stage");
}

template <class Piper>
void set_piper_knobs(pipeline_options& o, const Piper& p) {
    o.throttle = p.throttle;
    o.lazy_enabling = p.lazy_enabling;
    o.dependency_folding = p.dependency_folding;
}

template <class Piper>
Piper piper_knobs_of(const pipeline_options& o) {
    return {.throttle = o.throttle, .lazy_enabling = o.lazy_enabling, .dependency_folding = o.dependency_folding};
}

}   // namespace

std::string_view name_of(const pipeline_policy& p) noexcept {
    return std::visit(overloaded{[](const policies::piper&) { return std::string_view("piper"); },
                                 [](const policies::piper_earliest&) { return std::string_view("piper-earliest"); },
                                 [](const policies::serial&) { return std::string_view("serial"); },
                                 [](const policies::tbb&) { return std::string_view("tbb"); },
                                 [](const policies::bind_to_stage&) { return std::string_view("bind-to-stage"); }},
                      p);
}

pipeline_options options_for(const pipeline_policy& p, pipeline_options common) {
    refuse_policy_knobs(name_of(p), common);
    common.policy = std::string(name_of(p));
    std::visit(overloaded{[&](const policies::piper& k) { set_piper_knobs(common, k); },
                          [&](const policies::piper_earliest& k) { set_piper_knobs(common, k); },
                          [](const policies::serial&) {},
                          [&](const policies::tbb& k) {
                              common.declared_stages = k.stages;
                              common.throttle = k.tokens;
                          },
                          [&](const policies::bind_to_stage& k) {
                              common.declared_stages = k.stages;
                              common.stage_threads = k.stage_threads;
                              common.queue_size = k.queue_size;
                          }},
               p);
    return common;
}

pipeline_policy typed_policy_of(const pipeline_options& o) {
    if (o.policy == "piper") return piper_knobs_of<policies::piper>(o);
    if (o.policy == "piper-earliest") return piper_knobs_of<policies::piper_earliest>(o);
    if (o.policy == "serial") return policies::serial{};
    if (o.policy == "tbb") return policies::tbb{.stages = o.declared_stages, .tokens = o.throttle};
    if (o.policy == "bind-to-stage")
        return policies::bind_to_stage{.stages = o.declared_stages,
                                       .stage_threads = o.stage_threads,
                                       .queue_size = o.queue_size};
    std::string known;
    for (const pipeline_policy_info& p : pipeline_policies()) known += (known.empty() ? "" : ", ") + p.name;
    throw std::invalid_argument("typed_policy_of: unknown policy '" + o.policy + "' (known: " + known + ")");
}

}   // namespace pipescope
