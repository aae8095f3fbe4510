// A stop request forwarded to an engine's cancel(), for pipe_while and graph::run alike: both take a
// std::stop_token in their options, and both engines stop by cancel(), called on the requesting
// thread.
//
//     Engine engine(...);
//     const std::stop_callback on_cancel(options.cancel, detail::cancel_engine{&engine});
//
// Declare the callback after the engine, so that it is destroyed before: ~stop_callback waits for a
// callback running on another thread, so the engine outlives every cancel(). A token that can never
// stop registers nothing.
#pragma once

#include <stop_token>

namespace pipescope::detail {

template <class Engine>
struct cancel_engine {
    Engine* engine;
    void operator()() const noexcept { engine->cancel(); }
};
// Spelled out for compilers without deduction for aggregates (clang before 17: clang-tidy 14).
template <class Engine>
cancel_engine(Engine*) -> cancel_engine<Engine>;

}   // namespace pipescope::detail
