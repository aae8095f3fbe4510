// A planted offender for ctest layering.rooms.selftest: a file of a low room that includes the
// recording library above it. The check must find it, or the test that runs it could pass by accident.
#include <pipescope/recording/recording.hpp>
