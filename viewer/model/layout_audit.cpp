#include "layout_audit.hpp"

#include <utility>

namespace pipescope::viewer {

void layout_audit::check(std::string where, std::string text, double need, double have) {
    labels_.push_back({std::move(where), std::move(text), need, have});
}

std::vector<label_fit> layout_audit::clipped() const {
    std::vector<label_fit> out;
    for (const label_fit& l : labels_)
        if (l.clipped()) out.push_back(l);
    return out;
}

}   // namespace pipescope::viewer
