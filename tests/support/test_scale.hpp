// How many random cases to run: fewer under sanitizers (PIPESCOPE_TEST_SCALE=small), where every
// case is ten times slower. Seeds stay the same, so a failing seed reproduces in either mode.
#pragma once

#include <cstdlib>
#include <cstring>

namespace pipescope::testing {

inline int scaled(int normal, int small) {
    const char* s = std::getenv("PIPESCOPE_TEST_SCALE");
    return (s && std::strcmp(s, "small") == 0) ? small : normal;
}

}   // namespace pipescope::testing
