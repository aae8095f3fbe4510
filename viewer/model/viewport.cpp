#include "viewport.hpp"

#include <pipescope/analysis/numbers.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace pipescope::viewer {

void viewport::zoom_at(double px, double factor) {
    const double t = to_ns(px);
    npp = std::clamp(npp * factor, min_npp, max_npp);
    t0 = t - px * npp;
}

void viewport::resize(double w) {
    if (w <= 0 || w == width) return;
    if (width > 0) npp *= width / w;
    width = w;
}

void viewport::frame(double a, double b, double margin) {
    if (b < a) std::swap(a, b);
    const double span = b - a;
    const double usable = std::max(1.0, width * (1 - 2 * margin));
    if (span <= 0) {
        npp = std::clamp(npp, min_npp, std::max(min_npp, 10.0));
        t0 = a - width * 0.5 * npp;
        return;
    }
    // Not limited by max_npp: that is the last clamp()'s, against the document as it was then (a file
    // opened since may be much longer); the view's next clamp() sets it for the document as it is.
    npp = std::max(span / usable, min_npp);
    t0 = a - (width - span / npp) * 0.5 * npp;
}

void viewport::clamp(double lo, double hi) {
    const double span = std::max(1.0, hi - lo);
    max_npp = std::max(min_npp, span * 1.5 / std::max(1.0, width));
    npp = std::clamp(npp, min_npp, max_npp);
    const double w = width * npp;
    // At least a tenth of the view shows the document.
    t0 = std::clamp(t0, lo - 0.9 * w, hi - 0.1 * w);
}

double nice_step(double npp, double min_px) {
    const double raw = std::max(npp * min_px, 1e-9);
    const double p = std::pow(10.0, std::floor(std::log10(raw)));
    for (double m : {1.0, 2.0, 5.0, 10.0})
        if (m * p >= raw) return m * p;
    return 10 * p;
}

time_unit unit_for(double ns) {
    ns = std::fabs(ns);
    if (ns >= 1e9) return {1e9, "s"};
    if (ns >= 1e6) return {1e6, "ms"};
    if (ns >= 1e3) return {1e3, "\xC2\xB5s"};   // µs
    return {1, "ns"};
}

namespace {
std::string trim_number(double v, int decimals) {
    std::string s = fmt::format("{:.{}f}", v, std::max(0, decimals));
    if (s.find('.') != std::string::npos) {
        while (!s.empty() && s.back() == '0') s.pop_back();
        if (!s.empty() && s.back() == '.') s.pop_back();
    }
    if (s == "-0") s = "0";
    return s;
}
}   // namespace

std::string format_duration(double ns, int max_decimals) { return analysis::numbers::duration(ns, max_decimals); }

std::string format_tick(double t, double step) {
    const time_unit u = unit_for(step);
    const double s = step / u.scale;   // 1, 2, 5, 10, 20, 50, 100, 200, 500
    const int decimals = s >= 1 ? 0 : static_cast<int>(std::ceil(-std::log10(s) - 1e-9));
    return trim_number(t / u.scale, decimals) + " " + u.name;
}

}   // namespace pipescope::viewer
