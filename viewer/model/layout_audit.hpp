// What the views laid out this frame, label by label: the width a label needs and the width its
// cell gives it. The state dump lists the labels that do not fit (`layout.clipped`), which is how
// the tests check that no text is cut off at a window size and UI scale without reading pixels.
// Pure C++.
#pragma once

#include <string>
#include <vector>

namespace pipescope::viewer {

struct label_fit {
    std::string where;   // "timeline toolbar", "timeline run header", "dag legend", ...
    std::string text;
    double need = 0;                                     // px the label takes
    double have = 0;                                     // px its cell gives it
    bool clipped() const { return need > have + 0.5; }   // half a pixel: rounding of positions
};

class layout_audit {
public:
    void clear() { labels_.clear(); }
    void check(std::string where, std::string text, double need, double have);
    const std::vector<label_fit>& labels() const { return labels_; }
    std::vector<label_fit> clipped() const;

private:
    std::vector<label_fit> labels_;
};

}   // namespace pipescope::viewer
