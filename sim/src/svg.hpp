// The SVG builder of both HTML reports (report_html.cpp, cluster_report.cpp): linear scales,
// nice ticks, axes, shapes and text, written as inline SVG.
#pragma once

#include "html_text.hpp"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace phasescale::sim::svg {

using html::escape;
using html::fixed;

struct Scale {
    double d0 = 0, d1 = 1;  // domain
    double r0 = 0, r1 = 1;  // range, in pixels
    double operator()(double v) const {
        return d1 == d0 ? r0 : r0 + (v - d0) / (d1 - d0) * (r1 - r0);
    }
};

inline double nice_step(double range, int target) {
    if (!(range > 0) || !std::isfinite(range)) return 1;
    const double raw = range / target, power = std::pow(10.0, std::floor(std::log10(raw)));
    const double f = raw / power;
    return (f < 1.5 ? 1 : f < 3.5 ? 2 : f < 7.5 ? 5 : 10) * power;
}

// The top of a nice axis that holds `x`.
inline double nice_ceiling(double x, int target = 5) {
    if (!(x > 0) || !std::isfinite(x)) return 1;
    const double step = nice_step(x, target);
    return std::ceil(x / step - 1e-9) * step;
}

inline std::vector<double> ticks(double lo, double hi, int target) {
    const double step = nice_step(hi - lo, target);
    std::vector<double> t;
    for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step)
        t.push_back(std::fabs(v) < step * 1e-9 ? 0 : v);
    return t;
}

inline int tick_decimals(double lo, double hi, int target) {
    const double step = nice_step(hi - lo, target);
    return std::max(0, -static_cast<int>(std::floor(std::log10(step) + 1e-9)));
}

inline std::string px(double v) {
    return fixed(v, 1);
}

// How a shape is drawn; set what differs from the defaults: Style().stroke("#555").width(2).
struct Style {
    std::string fill_colour = "none", stroke_colour = "none", dash_pattern, policy_name, class_name;
    double stroke_width = 1, alpha = 1;
    Style& fill(std::string c) {
        fill_colour = std::move(c);
        return *this;
    }
    Style& stroke(std::string c) {
        stroke_colour = std::move(c);
        return *this;
    }
    Style& width(double w) {
        stroke_width = w;
        return *this;
    }
    Style& opacity(double a) {
        alpha = a;
        return *this;
    }
    Style& dash(std::string d) {
        dash_pattern = std::move(d);
        return *this;
    }
    Style& policy(std::string p) {
        policy_name = std::move(p);
        return *this;
    }  // data-policy, for toggles
    Style& css(std::string c) {
        class_name = std::move(c);
        return *this;
    }
};

struct Axis {
    Scale scale;
    std::string label;
    int ticks = 6;
    // Tick value to text; by default as many decimals as the tick step needs.
    std::string (*format)(double value, int decimals) = nullptr;
};

inline std::string plain_tick(double v, int decimals) {
    return fixed(v, decimals);
}
inline std::string percent_tick(double v, int decimals) {
    return fixed(100 * v, std::max(0, decimals - 2)) + "%";
}

class Svg {
public:
    // `id` must be unique in the page (it names the plot area's clip path); `attributes` go on the
    // svg element as they are.
    Svg(std::string id, double width, double height, double left, double top, double right,
        double bottom, const std::string& title, const std::string& attributes = "")
        : id_(std::move(id)),
          width_(width),
          height_(height),
          left_(left),
          top_(top),
          right_(width - right),
          bottom_(height - bottom) {
        out_ << "<svg class=\"chart\" width=\"" << px(width) << "\" height=\"" << px(height)
             << "\" viewBox=\"0 0 " << px(width) << ' ' << px(height)
             << "\" role=\"img\" aria-label=\"" << escape(title) << '"' << attributes << ">\n"
             << "<defs><clipPath id=\"" << id_ << "\"><rect x=\"" << px(left_) << "\" y=\""
             << px(top_) << "\" width=\"" << px(right_ - left_) << "\" height=\""
             << px(bottom_ - top_) << "\"/></clipPath></defs>\n";
    }

    double left() const { return left_; }
    double right() const { return right_; }
    double top() const { return top_; }
    double bottom() const { return bottom_; }
    double width() const { return width_; }
    double height() const { return height_; }
    Scale x(double lo, double hi) const { return {lo, hi, left_, right_}; }
    Scale y(double lo, double hi) const { return {lo, hi, bottom_, top_}; }

    // Grid, ticks, tick labels and axis titles.
    void axes(const Axis& x, const Axis& y) {
        out_ << "<g class=\"axes\">\n";
        const auto tick_text = [](const Axis& a, double v) {
            const int d = tick_decimals(a.scale.d0, a.scale.d1, a.ticks);
            return a.format ? a.format(v, d) : plain_tick(v, d);
        };
        for (const double v : ticks(y.scale.d0, y.scale.d1, y.ticks)) {
            const double py = y.scale(v);
            line(left_, py, right_, py, Style().stroke("#e4e4e4"));
            text(left_ - 6, py + 4, tick_text(y, v), "end");
        }
        for (const double v :
             x.ticks > 0 ? ticks(x.scale.d0, x.scale.d1, x.ticks) : std::vector<double>{}) {
            const double p = x.scale(v);
            line(p, top_, p, bottom_, Style().stroke("#efefef"));
            line(p, bottom_, p, bottom_ + 4, Style().stroke("#555"));
            text(p, bottom_ + 16, tick_text(x, v), "middle");
        }
        line(left_, bottom_, right_, bottom_, Style().stroke("#555"));
        line(left_, top_, left_, bottom_, Style().stroke("#555"));
        text((left_ + right_) / 2, height_ - 6, x.label, "middle", "axis-title");
        out_ << "<text class=\"axis-title\" text-anchor=\"middle\" transform=\"translate(14 "
             << px((top_ + bottom_) / 2) << ") rotate(-90)\">" << escape(y.label) << "</text>\n";
        out_ << "</g>\n";
    }

    // Shapes drawn between begin_clip and end_clip stay inside the plot area.
    void begin_clip() { out_ << "<g clip-path=\"url(#" << id_ << ")\">\n"; }
    void end_clip() { out_ << "</g>\n"; }

    void rect(double x, double y, double w, double h, const Style& s,
              const std::string& title = "") {
        out_ << "<rect x=\"" << px(x) << "\" y=\"" << px(y) << "\" width=\"" << px(std::max(0.0, w))
             << "\" height=\"" << px(std::max(0.0, h)) << '"' << attributes(s);
        close("rect", title);
    }

    void line(double x1, double y1, double x2, double y2, const Style& s) {
        out_ << "<line x1=\"" << px(x1) << "\" y1=\"" << px(y1) << "\" x2=\"" << px(x2)
             << "\" y2=\"" << px(y2) << '"' << attributes(s) << "/>\n";
    }

    void polyline(const std::vector<std::pair<double, double>>& points, const Style& s) {
        if (points.empty()) return;
        out_ << "<polyline points=\"";
        for (std::size_t i = 0; i < points.size(); ++i)
            out_ << (i ? " " : "") << px(points[i].first) << ',' << px(points[i].second);
        out_ << '"' << attributes(s) << "/>\n";
    }

    void path(const std::string& d, const Style& s, const std::string& title = "") {
        if (d.empty()) return;
        out_ << "<path d=\"" << d << '"' << attributes(s);
        close("path", title);
    }

    void polygon(const std::vector<std::pair<double, double>>& points, const Style& s,
                 const std::string& title = "") {
        out_ << "<polygon points=\"";
        for (std::size_t i = 0; i < points.size(); ++i)
            out_ << (i ? " " : "") << px(points[i].first) << ',' << px(points[i].second);
        out_ << '"' << attributes(s);
        close("polygon", title);
    }

    void circle(double x, double y, double r, const Style& s, const std::string& title = "") {
        out_ << "<circle cx=\"" << px(x) << "\" cy=\"" << px(y) << "\" r=\"" << px(r) << '"'
             << attributes(s);
        close("circle", title);
    }

    void text(double x, double y, const std::string& s, const std::string& anchor = "start",
              const std::string& css_class = "", const std::string& fill = "") {
        out_ << "<text x=\"" << px(x) << "\" y=\"" << px(y) << "\" text-anchor=\"" << anchor << '"';
        if (!css_class.empty()) out_ << " class=\"" << css_class << '"';
        if (!fill.empty()) out_ << " fill=\"" << fill << '"';
        out_ << '>' << escape(s) << "</text>\n";
    }

    // Anything else, already well-formed.
    void raw(const std::string& markup) { out_ << markup; }

    std::string finish() {
        out_ << "</svg>\n";
        return out_.str();
    }

private:
    static std::string attributes(const Style& s) {
        std::string a = " fill=\"" + s.fill_colour + "\" stroke=\"" + s.stroke_colour + "\"";
        if (s.stroke_colour != "none") a += " stroke-width=\"" + fixed(s.stroke_width, 1) + "\"";
        if (s.alpha < 1) a += " opacity=\"" + fixed(s.alpha, 2) + "\"";
        if (!s.dash_pattern.empty()) a += " stroke-dasharray=\"" + s.dash_pattern + "\"";
        if (!s.policy_name.empty()) a += " data-policy=\"" + escape(s.policy_name) + "\"";
        if (!s.class_name.empty()) a += " class=\"" + s.class_name + "\"";
        return a;
    }
    // A title becomes the shape's tooltip.
    void close(const char* tag, const std::string& title) {
        if (title.empty()) {
            out_ << "/>\n";
        } else {
            out_ << "><title>" << escape(title) << "</title></" << tag << ">\n";
        }
    }

    std::string id_;
    double width_, height_, left_, top_, right_, bottom_;
    std::ostringstream out_;
};

}  // namespace phasescale::sim::svg
