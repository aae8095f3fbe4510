// The speedup-vs-P chart: its shapes, their SVG and their cairo rendering (scale_chart.hpp).
#include "scale_chart.hpp"

#include <pipescope/analysis/numbers.hpp>

#include <pipescope/trace/atomic_output.hpp>

#include <cairo.h>
#include <fmt/format.h>

#include <exception>
#include <memory>
#include <stdexcept>

namespace pipescope::cli {

namespace {

namespace numbers = pipescope::analysis::numbers;

// Distinct on white and for the common colour-vision deficiencies (Okabe and Ito's palette).
constexpr rgb policy_colours[] = {{0.00, 0.45, 0.70}, {0.84, 0.37, 0.00}, {0.00, 0.62, 0.45},
                                  {0.80, 0.47, 0.65}, {0.90, 0.62, 0.00}, {0.34, 0.71, 0.91}};
constexpr rgb ink{0.15, 0.15, 0.15}, grid_grey{0.88, 0.88, 0.88}, ideal_grey{0.55, 0.55, 0.55};

// "64", "0.5", "0.25": a power of two as a tick label.
std::string tick_label(double v) { return v >= 1 ? fmt::format("{:.0f}", v) : fmt::format("{:g}", v); }

chart_shape shape(chart_shape::kind what, std::string group, std::vector<chart_point> points, rgb colour, double width) {
    chart_shape s;
    s.what = what;
    s.group = std::move(group);
    s.points = std::move(points);
    s.colour = colour;
    s.width = width;
    return s;
}
chart_shape line(std::string group, chart_point a, chart_point b, rgb c, double width, bool dashed = false) {
    chart_shape s = shape(chart_shape::kind::line, std::move(group), {a, b}, c, width);
    s.dashed = dashed;
    return s;
}
chart_shape text(std::string group, chart_point at, std::string words, double size,
                 chart_shape::anchor align = chart_shape::anchor::start) {
    chart_shape s = shape(chart_shape::kind::text, std::move(group), {at}, ink, size);
    s.align = align;
    s.text = std::move(words);
    return s;
}

}   // namespace

chart chart_of(const analysis::scale_sweep& s, int width, int height) {
    chart c;
    c.width = width;
    c.height = height;
    c.title = fmt::format("{} (size {}): speedup over serial on virtual workers", s.workload, s.size);
    const double left = 64, right = width - 170.0, top = 62, bottom = height - 56.0;
    const analysis::scale_axes axes = analysis::axes_of(s);
    auto at = [&](double p, double speedup) -> chart_point {
        return {left + axes.at_x(p) * (right - left), bottom - axes.at_y(speedup) * (bottom - top)};
    };
    c.shapes.push_back(text("label", {left, 24}, c.title, 15));
    for (double p : axes.x_ticks()) {
        c.shapes.push_back(line("grid", at(p, axes.y_lo), at(p, axes.y_hi), grid_grey, 1));
        c.shapes.push_back(text("label", {at(p, axes.y_lo).x, bottom + 18}, tick_label(p), 12, chart_shape::anchor::middle));
    }
    for (double v : axes.y_ticks()) {
        c.shapes.push_back(line("grid", at(axes.x_lo, v), at(axes.x_hi, v), grid_grey, 1));
        c.shapes.push_back(text("label", {left - 8, at(axes.x_lo, v).y + 4}, tick_label(v), 12, chart_shape::anchor::end));
    }
    c.shapes.push_back(line("axis", {left, bottom}, {right, bottom}, ink, 1.5));
    c.shapes.push_back(line("axis", {left, top}, {left, bottom}, ink, 1.5));
    c.shapes.push_back(
        text("label", {(left + right) / 2, bottom + 42}, "virtual workers P (log2)", 13, chart_shape::anchor::middle));
    c.shapes.push_back(text("label", {8, top - 14}, "speedup (log2)", 13));
    // The ideal speedup, P: the diagonal (axes_of makes the speedup axis cover it).
    c.shapes.push_back(line("ideal", at(axes.x_lo, axes.x_lo), at(axes.x_hi, axes.x_hi), ideal_grey, 1.5, true));

    const std::vector<std::string> policies = s.policies();
    double legend_y = top + 8;
    for (std::size_t k = 0; k < policies.size(); ++k) {
        const rgb colour = policy_colours[k % std::size(policy_colours)];
        chart_shape poly = shape(chart_shape::kind::polyline, "policy", {}, colour, 2.5);
        poly.policy = policies[k];
        for (const analysis::scale_row& r : s.rows)
            if (r.policy == policies[k] && r.speedup > 0)
                poly.points.push_back(at(static_cast<double>(r.workers), r.speedup));
        for (const chart_point& p : poly.points) {
            c.shapes.push_back(shape(chart_shape::kind::circle, "marker", {p}, colour, 3.5));
            c.shapes.back().policy = policies[k];
        }
        c.shapes.push_back(std::move(poly));
        c.shapes.push_back(line("legend", {right + 16, legend_y}, {right + 44, legend_y}, colour, 2.5));
        c.shapes.push_back(text("label", {right + 52, legend_y + 4}, policies[k], 13));
        legend_y += 22;
    }
    c.shapes.push_back(line("legend", {right + 16, legend_y}, {right + 44, legend_y}, ideal_grey, 1.5, true));
    c.shapes.push_back(text("label", {right + 52, legend_y + 4}, "ideal (P)", 13));
    legend_y += 22;
    c.shapes.push_back(
        text("label", {right + 16, legend_y + 4}, fmt::format("serial {}", numbers::duration(s.serial_ns)), 12));
    return c;
}

namespace {

std::string svg_colour(rgb c) {
    auto byte = [](double v) { return static_cast<int>(v * 255 + 0.5); };
    return fmt::format("#{:02x}{:02x}{:02x}", byte(c.r), byte(c.g), byte(c.b));
}

std::string xml_escape(const std::string& s) {
    std::string out;
    for (char ch : s) {
        switch (ch) {
            case '&': out += "&amp;"; break;
            case '<': out += "&lt;"; break;
            case '>': out += "&gt;"; break;
            case '"': out += "&quot;"; break;
            default: out += ch;
        }
    }
    return out;
}

std::string svg_shape(const chart_shape& s) {
    const std::string dash = s.dashed ? " stroke-dasharray=\"6 4\"" : "";
    const std::string policy = s.policy.empty() ? "" : fmt::format(" data-policy=\"{}\"", xml_escape(s.policy));
    switch (s.what) {
        case chart_shape::kind::line:
            return fmt::format("<line class=\"{}\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"{}\" "
                               "stroke-width=\"{}\"{}/>",
                               s.group, s.points[0].x, s.points[0].y, s.points[1].x, s.points[1].y, svg_colour(s.colour),
                               s.width, dash);
        case chart_shape::kind::polyline: {
            std::string pts;
            for (const chart_point& p : s.points) pts += fmt::format("{}{:.1f},{:.1f}", pts.empty() ? "" : " ", p.x, p.y);
            return fmt::format("<polyline class=\"{}\"{} points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"{}\" "
                               "stroke-linejoin=\"round\"{}/>",
                               s.group, policy, pts, svg_colour(s.colour), s.width, dash);
        }
        case chart_shape::kind::circle:
            return fmt::format("<circle class=\"{}\"{} cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"{}\" fill=\"{}\"/>", s.group, policy,
                               s.points[0].x, s.points[0].y, s.width, svg_colour(s.colour));
        case chart_shape::kind::text: {
            const char* anchor = s.align == chart_shape::anchor::start    ? "start"
                                 : s.align == chart_shape::anchor::middle ? "middle"
                                                                          : "end";
            return fmt::format("<text class=\"{}\" x=\"{:.1f}\" y=\"{:.1f}\" font-size=\"{}\" text-anchor=\"{}\" "
                               "fill=\"{}\">{}</text>",
                               s.group, s.points[0].x, s.points[0].y, s.width, anchor, svg_colour(s.colour),
                               xml_escape(s.text));
        }
    }
    return {};
}

void draw(cairo_t* cr, const chart& c) {
    cairo_set_source_rgb(cr, 1, 1, 1);
    cairo_paint(cr);
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_line_join(cr, CAIRO_LINE_JOIN_ROUND);
    for (const chart_shape& s : c.shapes) {
        cairo_set_source_rgb(cr, s.colour.r, s.colour.g, s.colour.b);
        const double dash[] = {6, 4};
        cairo_set_dash(cr, dash, s.dashed ? 2 : 0, 0);
        switch (s.what) {
            case chart_shape::kind::line:
            case chart_shape::kind::polyline:
                for (std::size_t i = 0; i < s.points.size(); ++i)
                    (i ? cairo_line_to : cairo_move_to)(cr, s.points[i].x, s.points[i].y);
                cairo_set_line_width(cr, s.width);
                cairo_stroke(cr);
                break;
            case chart_shape::kind::circle:
                cairo_new_path(cr);
                cairo_arc(cr, s.points[0].x, s.points[0].y, s.width, 0, 6.283185307179586);
                cairo_fill(cr);
                break;
            case chart_shape::kind::text: {
                cairo_set_font_size(cr, s.width);
                cairo_text_extents_t e;
                cairo_text_extents(cr, s.text.c_str(), &e);
                const double shift = s.align == chart_shape::anchor::start    ? 0
                                     : s.align == chart_shape::anchor::middle ? e.x_advance / 2
                                                                              : e.x_advance;
                cairo_move_to(cr, s.points[0].x - shift, s.points[0].y);
                cairo_show_text(cr, s.text.c_str());
                cairo_new_path(cr);
                break;
            }
        }
    }
}

}   // namespace

void write_svg(const chart& c, const std::filesystem::path& path) {
    std::string out = fmt::format("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
                                  "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" "
                                  "viewBox=\"0 0 {0} {1}\" font-family=\"sans-serif\">\n"
                                  "<title>{2}</title>\n<rect width=\"{0}\" height=\"{1}\" fill=\"#ffffff\"/>\n",
                                  c.width, c.height, xml_escape(c.title));
    for (const chart_shape& s : c.shapes) out += svg_shape(s) + "\n";
    out += "</svg>\n";
    pipescope::trace::write_file_atomically(path, out);
}

void write_png(const chart& c, const std::filesystem::path& path) {
    const std::unique_ptr<cairo_surface_t, decltype(&cairo_surface_destroy)> surface(
        cairo_image_surface_create(CAIRO_FORMAT_RGB24, c.width, c.height), &cairo_surface_destroy);
    const std::unique_ptr<cairo_t, decltype(&cairo_destroy)> cr(cairo_create(surface.get()), &cairo_destroy);
    draw(cr.get(), c);
    cairo_surface_flush(surface.get());
    if (cairo_status(cr.get()) != CAIRO_STATUS_SUCCESS)
        throw std::runtime_error(
            fmt::format("cannot draw {}: {}", path.string(), cairo_status_to_string(cairo_status(cr.get()))));
    // Through an atomic_output: the PNG is whole or absent, and a write error names the OS reason.
    pipescope::trace::atomic_output file(path);
    std::exception_ptr write_error;
    struct closure_state {
        pipescope::trace::atomic_output& file;
        std::exception_ptr& error;
    } state{file, write_error};
    const cairo_write_func_t write = [](void* closure, const unsigned char* data, unsigned int length) {
        auto& s = *static_cast<closure_state*>(closure);
        try {
            s.file.write(data, length);
            return CAIRO_STATUS_SUCCESS;
        } catch (...) {
            s.error = std::current_exception();
            return CAIRO_STATUS_WRITE_ERROR;
        }
    };
    const cairo_status_t st = cairo_surface_write_to_png_stream(surface.get(), write, &state);
    if (write_error) std::rethrow_exception(write_error);
    if (st != CAIRO_STATUS_SUCCESS)
        throw std::runtime_error(fmt::format("cannot write {}: {}", path.string(), cairo_status_to_string(st)));
    file.commit();
}

}   // namespace pipescope::cli
