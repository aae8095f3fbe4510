// Fitting a label into the width it is given: elided with "…" at its end, as Perfetto and Tracy
// elide slice names and titles (the view shows the full text in a tooltip). Pure C++.
#pragma once

#include "ruler.hpp"   // text_width_fn

#include <string>
#include <string_view>

namespace pipescope::viewer {

// The ellipsis that replaces the cut end (U+2026, in the viewer's fonts).
inline constexpr std::string_view ellipsis = "\xE2\x80\xA6";

// `text` if it is at most `max_width` wide; else its longest prefix (cut between UTF-8 code points,
// trailing spaces dropped) followed by "…" that is; "" when not even "…" fits.
std::string elide_to_width(std::string_view text, double max_width, const text_width_fn& width);

}   // namespace pipescope::viewer
