// What a path that is not a regular file is, in words, for the readers' and writers' refusals
// ("/dev/zero: not a regular file (a character device)", "cannot write x: is a FIFO").
#pragma once

#include <sys/stat.h>

namespace pipescope::trace::detail {

inline const char* file_type_name(mode_t mode) {
    if (S_ISFIFO(mode)) return "a FIFO";
    if (S_ISCHR(mode)) return "a character device";
    if (S_ISBLK(mode)) return "a block device";
    if (S_ISDIR(mode)) return "a directory";
    if (S_ISSOCK(mode)) return "a socket";
    return "not a plain file";
}

}   // namespace pipescope::trace::detail
