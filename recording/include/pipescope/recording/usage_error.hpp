// A mistake in what the user asked for (an unknown option, a missing argument, a bad value): the
// `pipescope` command prints it on one line, then "see 'pipescope help CMD'", and exits 2.
#pragma once

#include <stdexcept>

namespace pipescope::recording {

struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

}   // namespace pipescope::recording
