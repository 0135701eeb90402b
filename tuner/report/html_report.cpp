#include "tuner/report/html_report.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <vector>

#include "src/core/device_ceiling.h"
#include "src/dispatch/kernel_selector.h"
#include "tuner/report/database_selector.h"
#include "tuner/report/kernel_fit.h"

namespace tgemm {

double arithmetic_intensity(const Problem& p) {
  const double a = double(p.m) * double(p.k) * element_bytes(p.types.a);
  const double b = double(p.k) * double(p.n) * element_bytes(p.types.b);
  const double c = double(p.m) * double(p.n) * element_bytes(p.types.c) * (p.beta_zero ? 1 : 2);
  return p.flops() / (a + b + c);
}

std::string short_label(const Problem& p) {
  return fmt::format("{} {} {}x{}x{}{}", p.types.name(), p.layout(), p.m, p.n, p.k,
                     p.beta_zero ? "" : " beta");
}

namespace {

std::string escaped(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

// A cell that shows at most `limit` characters and keeps the whole text as its tooltip.
std::string clipped(const std::string& text, size_t limit) {
  const std::string shown = text.size() > limit ? text.substr(0, limit - 3) + "..." : text;
  return fmt::format("<span title=\"{}\">{}</span>", escaped(text), escaped(shown));
}

std::string fixed(double v, int digits = 2) { return fmt::format("{:.{}f}", v, digits); }

// One colour per data type, shared by points, bars and roofs.
std::string type_colour(const std::string& type) {
  static const std::map<std::string, std::string> palette = {
      {"f32", "#1f77b4"},          {"tf32", "#9467bd"},        {"f32x3", "#17becf"},
      {"f16", "#d62728"},          {"f16_out_f32", "#ff7f0e"}, {"bf16", "#2ca02c"},
      {"bf16_out_f32", "#8c564b"}, {"f32_ffma", "#1f77b4"}};
  const auto it = palette.find(type);
  return it == palette.end() ? "#555555" : it->second;
}

// Everything measured on one problem on one device.
struct ProblemRows {
  Problem problem;
  const BestEntry* best = nullptr;
  std::vector<const TrialRecord*> ok;  // fastest first
  std::vector<const TrialRecord*> failed;
};

std::vector<ProblemRows> group_problems(const DatabaseSelector& source) {
  std::vector<ProblemRows> rows;
  std::map<std::string, size_t> index;
  for (const BestEntry& e : source.tuned()) {
    index[e.problem.key()] = rows.size();
    rows.push_back({e.problem, &e, {}, {}});
  }
  for (const TrialRecord& r : source.measured()) {
    auto [it, added] = index.try_emplace(r.problem.key(), rows.size());
    if (added) rows.push_back({r.problem, nullptr, {}, {}});
    auto& group = rows[it->second];
    (r.trial.status == TrialStatus::ok ? group.ok : group.failed).push_back(&r);
  }
  for (ProblemRows& g : rows)
    std::stable_sort(g.ok.begin(), g.ok.end(), [](const TrialRecord* a, const TrialRecord* b) {
      return a->trial.time_median_us < b->trial.time_median_us;
    });
  return rows;
}

double tflops_at(const Problem& p, double us) { return us > 0 ? p.flops() / us * 1e-6 : 0; }

// ---- the roofline ------------------------------------------------------------------------

// A log-log plot area: decades [x_lo, x_hi] x [y_lo, y_hi] mapped into the viewBox.
struct LogAxes {
  int x_lo, x_hi, y_lo, y_hi;
  static constexpr double kLeft = 64, kRight = 624, kTop = 16, kBottom = 360;
  double x(double v) const {
    return kLeft + (std::log10(v) - x_lo) / (x_hi - x_lo) * (kRight - kLeft);
  }
  double y(double v) const {
    return kBottom - (std::log10(v) - y_lo) / (y_hi - y_lo) * (kBottom - kTop);
  }
};

std::pair<int, int> decades(double lo, double hi) {
  int a = int(std::floor(std::log10(lo))), b = int(std::ceil(std::log10(hi)));
  if (b <= a) b = a + 1;
  return {a, b};
}

std::string decade_label(int e) {
  if (e >= 6) return fmt::format("1e{}", e);
  if (e >= 3) return fmt::format("{}k", int(std::pow(10, e - 3)));
  if (e >= 0) return fmt::format("{}", int(std::pow(10, e)));
  return fmt::format("{:.{}f}", std::pow(10, e), -e);
}

std::string axes_svg(const LogAxes& ax) {
  std::string out;
  for (int e = ax.x_lo; e <= ax.x_hi; ++e) {
    const double x = ax.x(std::pow(10, e));
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\"/>"
        "<text class=\"tick\" x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
        x, LogAxes::kTop, LogAxes::kBottom, LogAxes::kBottom + 16, decade_label(e));
  }
  for (int e = ax.y_lo; e <= ax.y_hi; ++e) {
    const double y = ax.y(std::pow(10, e));
    out += fmt::format(
        "<line class=\"grid\" x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\"/>"
        "<text class=\"tick\" x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
        LogAxes::kLeft, y, LogAxes::kRight, LogAxes::kLeft - 6, y + 4, decade_label(e));
  }
  out += fmt::format(
      "<rect class=\"frame\" x=\"{0}\" y=\"{1}\" width=\"{2}\" height=\"{3}\"/>"
      "<text class=\"axis\" x=\"{4}\" y=\"{5}\" text-anchor=\"middle\">arithmetic intensity "
      "(FLOP / minimum byte)</text><text class=\"axis\" transform=\"translate(16 {6}) "
      "rotate(-90)\" text-anchor=\"middle\">achieved TFLOP/s</text>\n",
      LogAxes::kLeft, LogAxes::kTop, LogAxes::kRight - LogAxes::kLeft,
      LogAxes::kBottom - LogAxes::kTop, (LogAxes::kLeft + LogAxes::kRight) / 2,
      LogAxes::kBottom + 36, (LogAxes::kTop + LogAxes::kBottom) / 2);
  return out;
}

// One polyline per compute roof: the bandwidth slope (when measured) up to its ridge, then flat.
std::string roofs_svg(const LogAxes& ax, const std::vector<DeviceCeiling>& ceilings) {
  double bandwidth = 0;
  for (const DeviceCeiling& c : ceilings)
    if (c.kind == kCopyBandwidthCeiling) bandwidth = c.value;
  const double x_lo = std::pow(10, ax.x_lo), x_hi = std::pow(10, ax.x_hi);
  const double y_lo = std::pow(10, ax.y_lo);
  std::string out;
  for (const DeviceCeiling& c : compute_ceilings(ceilings)) {
    const double peak = c.value * 1e-12;  // TFLOP/s
    std::string points;
    if (bandwidth > 0) {
      const double start = std::clamp(y_lo / (bandwidth * 1e-12), x_lo, x_hi);
      const double ridge = std::clamp(peak / (bandwidth * 1e-12), x_lo, x_hi);
      points = fmt::format("{:.1f},{:.1f} ", ax.x(start),
                           ax.y(std::min(peak, bandwidth * 1e-12 * start)));
      points += fmt::format("{:.1f},{:.1f} ", ax.x(ridge), ax.y(peak));
    } else {
      points = fmt::format("{:.1f},{:.1f} ", ax.x(x_lo), ax.y(peak));
    }
    points += fmt::format("{:.1f},{:.1f}", ax.x(x_hi), ax.y(peak));
    out += fmt::format(
        "<polyline class=\"roof\" data-kind=\"{}\" data-value=\"{:.9g}\" points=\"{}\" "
        "stroke=\"{}\"><title>{} roof: {} TFLOP/s ({})</title></polyline>\n",
        escaped(c.kind), c.value, points, type_colour(c.kind), escaped(c.kind), fixed(peak, 1),
        escaped(c.source));
  }
  return out;
}

struct Point {
  const ProblemRows* rows;
  double ai, tflops;
  bool cublas;
};

std::string point_svg(const LogAxes& ax, const Point& p) {
  const std::string type = p.rows->problem.types.name();
  const std::string colour = type_colour(type);
  const double x = ax.x(p.ai), y = ax.y(p.tflops);
  const std::string title =
      fmt::format("<title>{} {}: {} TFLOP/s at {} FLOP/B</title>", p.cublas ? "cuBLAS" : "tgemm",
                  escaped(short_label(p.rows->problem)), fixed(p.tflops), fixed(p.ai, 1));
  const std::string data = fmt::format("data-key=\"{}\" data-tflops=\"{}\"",
                                       escaped(p.rows->problem.key()), fixed(p.tflops));
  if (p.cublas)
    return fmt::format(
        "<rect class=\"pt pt-cublas\" {} x=\"{:.1f}\" y=\"{:.1f}\" width=\"8\" height=\"8\" "
        "stroke=\"{}\">{}</rect>\n",
        data, x - 4, y - 4, colour, title);
  return fmt::format(
      "<circle class=\"pt pt-tgemm\" {} cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4.5\" fill=\"{}\">{}"
      "</circle>\n",
      data, x, y, colour, title);
}

// The legend under the chart (HTML, so it wraps on a phone instead of overlapping the plot).
std::string roofline_legend(const std::vector<ProblemRows>& rows,
                            const std::vector<DeviceCeiling>& ceilings) {
  std::map<std::string, int> types;
  for (const ProblemRows& r : rows)
    if (r.best) ++types[r.problem.types.name()];
  std::string out = "<ul class=\"legend\">";
  for (const auto& [type, n] : types)
    out += fmt::format("<li><span class=\"swatch\" style=\"background:{}\"></span>{} ({})</li>",
                       type_colour(type), escaped(type), n);
  out +=
      "<li><svg class=\"key\" viewBox=\"0 0 12 12\"><circle cx=\"6\" cy=\"6\" r=\"5\" "
      "fill=\"#444\"/></svg>tgemm best</li><li><svg class=\"key\" viewBox=\"0 0 12 12\"><rect "
      "x=\"1.5\" y=\"1.5\" width=\"9\" height=\"9\" fill=\"none\" stroke=\"#444\" "
      "stroke-width=\"2\"/></svg>cuBLAS</li>";
  for (const DeviceCeiling& c : ceilings) {
    const bool copy = c.kind == kCopyBandwidthCeiling;
    out += fmt::format(
        "<li><span class=\"roofkey\" style=\"border-color:{}\"></span>{}: {} {} ({})</li>",
        copy ? "#000" : type_colour(c.kind), escaped(c.kind),
        copy ? fixed(c.value * 1e-9, 0) : fixed(c.value * 1e-12, 1), copy ? "GB/s" : "TFLOP/s",
        escaped(c.source));
  }
  return out + "</ul>\n";
}

std::string roofline_section(const std::vector<ProblemRows>& rows,
                             const std::vector<DeviceCeiling>& ceilings) {
  std::vector<Point> points;
  for (const ProblemRows& r : rows) {
    if (!r.best) continue;
    const double ai = arithmetic_intensity(r.problem);
    if (r.best->trial.tflops > 0) points.push_back({&r, ai, r.best->trial.tflops, false});
    const double cublas = tflops_at(r.problem, r.best->cublas_median_us);
    if (cublas > 0) points.push_back({&r, ai, cublas, true});
  }
  std::string out = "<section><h3>Roofline</h3>\n";
  if (ceilings.empty())
    out +=
        "<p class=\"note\">No measured ceilings are stored for this device (tgemm-tune measures "
        "them at the start of a GPU run); the chart shows the points without roofs.</p>\n";
  if (points.empty()) return out + "<p class=\"note\">No tuned problem to place.</p></section>\n";
  double x_min = 1e300, x_max = 0, y_min = 1e300, y_max = 0;
  for (const Point& p : points) {
    x_min = std::min(x_min, p.ai), x_max = std::max(x_max, p.ai);
    y_min = std::min(y_min, p.tflops), y_max = std::max(y_max, p.tflops);
  }
  for (const DeviceCeiling& c : compute_ceilings(ceilings))
    y_max = std::max(y_max, c.value * 1e-12);
  const auto [xa, xb] = decades(x_min, x_max);
  const auto [ya, yb] = decades(y_min, y_max);
  const LogAxes ax{xa, xb, ya, yb};
  out +=
      "<svg class=\"chart roofline\" viewBox=\"0 0 640 400\" role=\"img\" "
      "aria-label=\"roofline\">\n";
  out += axes_svg(ax) + roofs_svg(ax, ceilings);
  for (const Point& p : points) out += point_svg(ax, p);
  return out + "</svg>\n" + roofline_legend(rows, ceilings) + "</section>\n";
}

// ---- the tables --------------------------------------------------------------------------

std::string ratio_section(const std::vector<ProblemRows>& rows) {
  double top = 1.25;
  for (const ProblemRows& r : rows)
    if (r.best && r.best->cublas_median_us > 0)
      top = std::max(top, 1.05 * r.best->cublas_median_us / r.best->trial.time_median_us);
  std::string out = fmt::format(
      "<section><h3>tgemm / cuBLAS speed (cuBLAS time / tgemm time; the line marks "
      "1.0)</h3>\n<div class=\"bars\">\n");
  int shown = 0;
  for (const ProblemRows& r : rows) {
    if (!r.best || r.best->cublas_median_us <= 0) continue;
    const double ratio = r.best->cublas_median_us / r.best->trial.time_median_us;
    // Where a vendor call is the best, our own fastest kernel's ratio beside it.
    const double own_us = r.best->own_best_us();
    const std::string value =
        !is_vendor_call(r.best->config)
            ? fixed(ratio, 3)
            : fmt::format("{} (served by {}; ours {})", fixed(ratio, 3),
                          r.best->config.template_name,
                          own_us > 0 ? fixed(r.best->cublas_median_us / own_us, 3) : "-");
    out += fmt::format(
        "<div class=\"bar-row\"><span class=\"bar-label\" title=\"{}\">{}</span><span "
        "class=\"bar-track\"><span class=\"bar ratio-bar\" data-key=\"{}\" style=\"width:{:.1f}%;"
        "background:{}\"></span><span class=\"one\" style=\"left:{:.1f}%\"></span></span>"
        "<span class=\"bar-value\">{}</span></div>\n",
        escaped(r.problem.key()), escaped(short_label(r.problem)), escaped(r.problem.key()),
        100 * ratio / top, type_colour(r.problem.types.name()), 100 / top, escaped(value));
    ++shown;
  }
  if (!shown) out += "<p class=\"note\">No problem has a cuBLAS time.</p>\n";
  return out + "</div></section>\n";
}

// The shipped default for a problem (as an untuned GPU would launch it), when it was measured.
std::optional<std::pair<size_t, const TrialRecord*>> default_landing(const ProblemRows& r,
                                                                     const DeviceInfo& device) {
  const KernelChoice choice =
      KernelSelector({}, shipped_default_kernels(), device.arch, device.sm_count).choose(r.problem);
  if (choice.path != Selection::fallback_default) return std::nullopt;
  auto same = [&](const KernelConfig& c) {
    if (c.template_name != choice.config.template_name ||
        c.params.size() != choice.config.params.size())
      return false;
    for (const auto& [name, value] : choice.config.params)
      if (!c.has(name) || c.get(name) != value) return false;
    return true;
  };
  for (size_t i = 0; i < r.ok.size(); ++i)
    if (same(r.ok[i]->trial.config)) return std::pair{i, r.ok[i]};
  return std::nullopt;
}

// Where median and default sit between best (left) and worst (right), on a log time scale.
std::string spread_strip(double best, double median, double worst,
                         std::optional<double> default_us) {
  const double span = std::log(worst / best);
  auto at = [&](double us) { return span > 0 ? 100 * std::log(us / best) / span : 0.0; };
  std::string out = fmt::format(
      "<span class=\"strip\"><span class=\"mark med\" style=\"left:{:.1f}%\" title=\"median\">"
      "</span>",
      at(median));
  if (default_us)
    out += fmt::format(
        "<span class=\"mark dflt\" style=\"left:{:.1f}%\" title=\"shipped default\"></span>",
        at(*default_us));
  return out + "</span>";
}

std::string tuning_section(const std::vector<ProblemRows>& rows, const DeviceInfo& device) {
  std::string out =
      "<section><h3>How much tuning mattered (every ok trial)</h3>\n<div class=\"scroll\"><table>"
      "<tr><th>problem</th><th>ok trials</th><th>best us</th><th>median us</th><th>worst us</th>"
      "<th>worst / best</th><th>best &#8594; worst (&#9679; median, &#9670; default)</th>"
      "<th>shipped default</th></tr>\n";
  for (const ProblemRows& r : rows) {
    if (r.ok.empty()) continue;
    const double best = r.ok.front()->trial.time_median_us;
    const double worst = r.ok.back()->trial.time_median_us;
    const double median = r.ok[r.ok.size() / 2]->trial.time_median_us;
    const auto landing = default_landing(r, device);
    std::string where = "not measured";
    if (landing)
      where = fmt::format("#{} of {}, {} us ({}x best)", landing->first + 1, r.ok.size(),
                          fixed(landing->second->trial.time_median_us),
                          fixed(landing->second->trial.time_median_us / best, 2));
    out += fmt::format(
        "<tr class=\"spread-row\" data-key=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        escaped(r.problem.key()), clipped(short_label(r.problem), 40), r.ok.size(), fixed(best),
        fixed(median), fixed(worst), fixed(worst / best),
        spread_strip(best, median, worst,
                     landing ? std::optional(landing->second->trial.time_median_us) : std::nullopt),
        escaped(where));
  }
  return out + "</table></div></section>\n";
}

std::string config_rows(TuningDb& db, const ProblemRows& r, const DeviceInfo& device, int top) {
  const double best = r.ok.front()->trial.time_median_us;
  const double cublas = r.best ? r.best->cublas_median_us : 0;
  std::string out;
  for (size_t i = 0; i < r.ok.size() && i < size_t(top); ++i) {
    const TrialResult& t = r.ok[i]->trial;
    const auto f = fit_of(db, *r.ok[i], device);
    auto or_dash = [&](auto v) { return f ? fmt::format("{}", v) : std::string("-"); };
    out += fmt::format(
        "<tr class=\"cfg-row\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "<td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        i + 1, clipped(t.config.canonical_name(), 44), fixed(t.time_median_us),
        fixed(t.time_median_us / best, 3), cublas > 0 ? fixed(cublas / t.time_median_us, 3) : "-",
        fixed(t.tflops), or_dash(f ? f->registers : 0), or_dash(f ? f->smem_bytes : 0),
        or_dash(f ? f->threads : 0), or_dash(f ? f->occupancy.blocks_per_sm : 0),
        f ? escaped(f->occupancy.limited_by) : "-", f && f->waves > 0 ? fixed(f->waves) : "-");
  }
  return out;
}

std::string configs_section(TuningDb& db, const std::vector<ProblemRows>& rows,
                            const DeviceInfo& device, int top) {
  std::string out = "<section><h3>Top configs per problem</h3>\n";
  for (const ProblemRows& r : rows) {
    if (r.ok.empty()) continue;
    out += fmt::format(
        "<details><summary>{} <span class=\"dim\">({} ok, {} failed)</span></summary>"
        "<div class=\"scroll\"><table><tr><th>#</th><th>kernel</th><th>median us</th>"
        "<th>vs best</th><th>vs cuBLAS</th><th>TFLOP/s</th><th>regs</th><th>smem B</th>"
        "<th>threads</th><th>blocks/SM</th><th>limited by</th><th>waves</th></tr>\n{}"
        "</table></div></details>\n",
        escaped(short_label(r.problem)), r.ok.size(), r.failed.size(),
        config_rows(db, r, device, top));
  }
  return out + "</section>\n";
}

std::string failures_section(const std::vector<ProblemRows>& rows) {
  std::map<TrialStatus, std::vector<const TrialRecord*>> by_status;
  for (const ProblemRows& r : rows)
    for (const TrialRecord* t : r.failed) by_status[t->trial.status].push_back(t);
  std::string out = "<section><h3>Failures by status</h3>\n";
  if (by_status.empty()) return out + "<p class=\"note\">No failed trial.</p></section>\n";
  out +=
      "<div class=\"scroll\"><table><tr><th>status</th><th>trials</th><th>example problem</th>"
      "<th>example error</th></tr>\n";
  for (const auto& [status, trials] : by_status) {
    const TrialRecord& first = *trials.front();
    const std::string error = first.trial.error.substr(0, first.trial.error.find('\n'));
    out += fmt::format(
        "<tr class=\"fail-row\" data-status=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
        "</tr>\n",
        to_string(status), to_string(status), trials.size(),
        clipped(short_label(first.problem), 40), clipped(error, 90));
  }
  return out + "</table></div></section>\n";
}

std::string ceilings_table(const std::vector<DeviceCeiling>& ceilings) {
  if (ceilings.empty()) return "";
  std::string out =
      "<div class=\"scroll\"><table><tr><th>ceiling</th><th>value</th><th>source</th>"
      "<th>measured</th><th>when</th></tr>\n";
  for (const DeviceCeiling& c : ceilings) {
    const bool copy = c.kind == kCopyBandwidthCeiling;
    out += fmt::format(
        "<tr class=\"ceiling-row\" data-kind=\"{}\" data-value=\"{:.9g}\"><td>{}</td><td>{} {}"
        "</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
        escaped(c.kind), c.value, escaped(c.kind),
        copy ? fixed(c.value * 1e-9, 1) : fixed(c.value * 1e-12, 2), copy ? "GB/s" : "TFLOP/s",
        escaped(c.source), escaped(c.detail), escaped(c.measured_at));
  }
  return out + "</table></div>\n";
}

// ---- Nsight Compute profiles ------------------------------------------------------------

std::string metric_cell(const std::optional<double>& v, double scale, int digits) {
  return v ? fixed(*v * scale, digits) : "-";
}

// Both contenders' largest stall reasons as bars on one scale (warps stalled per issue).
std::string stall_bars(const KernelProfile& p, double top) {
  if (p.stalls.empty()) return "<span class=\"dim\">-</span>";
  std::string out = "<div class=\"stalls\">";
  for (const StallReason& s : p.stalls)
    out += fmt::format(
        "<div class=\"stall\" data-reason=\"{}\" data-value=\"{:.6g}\"><span class=\"stall-name\">"
        "{}</span><span class=\"stall-track\"><span class=\"stall-bar\" style=\"width:{:.1f}%"
        "\"></span></span><span class=\"stall-value\">{}</span></div>",
        escaped(s.name), s.value, escaped(s.name), top > 0 ? 100 * s.value / top : 0,
        fixed(s.value, 2));
  return out + "</div>";
}

std::string profile_table(const Problem* problem, const std::string& key, const KernelProfile* t,
                          const KernelProfile* c) {
  struct Row {
    const char* name;
    std::optional<double> KernelProfile::*field;
    double scale;
    int digits;
  };
  static const Row kRows[] = {
      {"ncu time (us)", &KernelProfile::duration_us, 1, 2},
      {"SM throughput (% of peak)", &KernelProfile::sm_throughput_pct, 1, 1},
      {"memory throughput (% of peak)", &KernelProfile::memory_throughput_pct, 1, 1},
      {"DRAM read (MB)", &KernelProfile::dram_read_bytes, 1e-6, 1},
      {"DRAM written (MB)", &KernelProfile::dram_write_bytes, 1e-6, 1},
      {"global load sectors (L1)", &KernelProfile::global_load_sectors, 1, 0},
      {"global load requests", &KernelProfile::global_load_requests, 1, 0},
      {"global store sectors", &KernelProfile::global_store_sectors, 1, 0},
      {"excess global sectors", &KernelProfile::global_excess_sectors, 1, 0},
      {"shared load bank conflicts", &KernelProfile::shared_load_bank_conflicts, 1, 0},
      {"shared store bank conflicts", &KernelProfile::shared_store_bank_conflicts, 1, 0},
      {"achieved occupancy (%)", &KernelProfile::achieved_occupancy_pct, 1, 1},
      {"FMA pipe (% of peak)", &KernelProfile::fma_pipe_pct, 1, 1},
      {"tensor pipe (% of peak)", &KernelProfile::tensor_pipe_pct, 1, 1},
      {"registers per thread", &KernelProfile::registers, 1, 0},
  };
  auto cell = [](const KernelProfile* p, const Row& r) {
    return p ? metric_cell(p->*(r.field), r.scale, r.digits) : std::string("-");
  };
  const KernelProfile* any = t ? t : c;
  std::string out = fmt::format(
      "<details open class=\"profile\" data-key=\"{}\"><summary>{} <span class=\"dim\">(ncu {}, "
      "{})</span></summary>\n<div class=\"scroll\"><table class=\"profile-table\"><tr><th>metric"
      "</th><th>tgemm</th><th>cuBLAS</th></tr>\n<tr><td>kernel</td><td class=\"kname\" "
      "title=\"{}\">{}</td><td class=\"kname\" title=\"{}\">{}</td></tr>\n",
      escaped(key), escaped(problem ? short_label(*problem) : key), escaped(any->ncu_version),
      escaped(any->profiled_at), t ? escaped(t->kernel_name) : "", t ? clipped(t->config, 40) : "-",
      c ? escaped(c->kernel_name) : "", c ? clipped(c->kernel_name, 40) : "-");
  for (const Row& r : kRows)
    out += fmt::format("<tr class=\"metric-row\"><td>{}</td><td>{}</td><td>{}</td></tr>\n", r.name,
                       cell(t, r), cell(c, r));
  double top = 0;
  for (const KernelProfile* p : {t, c})
    if (p)
      for (const StallReason& s : p->stalls) top = std::max(top, s.value);
  out += fmt::format(
      "<tr class=\"stall-row\"><td>top stalls<br><span class=\"dim\">(warps per issue)</span>"
      "</td><td>{}</td><td>{}</td></tr>\n",
      t ? stall_bars(*t, top) : "-", c ? stall_bars(*c, top) : "-");
  return out + "</table></div></details>\n";
}

std::string profiles_section(TuningDb& db, const DeviceInfo& device,
                             const std::vector<ProblemRows>& rows) {
  const std::vector<KernelProfile> profiles = db.profiles(device.name, device.arch);
  if (profiles.empty()) return "";
  std::string out =
      "<section><h3>Nsight Compute profiles: tgemm's best kernel against cuBLAS's</h3>\n";
  std::map<std::string, std::pair<const KernelProfile*, const KernelProfile*>> by_problem;
  std::vector<std::string> order;
  for (const KernelProfile& p : profiles) {
    if (!by_problem.count(p.problem_key)) order.push_back(p.problem_key);
    auto& pair = by_problem[p.problem_key];
    (p.contender == kTgemmContender ? pair.first : pair.second) = &p;
  }
  for (const std::string& key : order) {
    const Problem* problem = nullptr;
    for (const ProblemRows& r : rows)
      if (r.problem.key() == key) problem = &r.problem;
    out += profile_table(problem, key, by_problem[key].first, by_problem[key].second);
  }
  return out + "</section>\n";
}

std::string device_section(TuningDb& db, const DeviceInfo& device, const HtmlReportOptions& opt) {
  const DatabaseSelector source(db, device);
  const std::vector<ProblemRows> rows = group_problems(source);
  const std::vector<DeviceCeiling> ceilings = db.ceilings(device.name, device.arch);
  std::string out = fmt::format(
      "<article class=\"device\"><h2>{} <span class=\"dim\">({}, {} SMs)</span></h2>\n<p>{} "
      "problem(s) measured, {} tuned.</p>\n",
      escaped(device.name), escaped(device.arch), device.sm_count, rows.size(),
      source.tuned().size());
  out += ceilings_table(ceilings);
  out += roofline_section(rows, ceilings) + ratio_section(rows) + tuning_section(rows, device);
  out += profiles_section(db, device, rows);
  out += configs_section(db, rows, device, opt.top_configs) + failures_section(rows);
  return out + "</article>\n";
}

constexpr const char* kStyle = R"css(
:root { color-scheme: light; font-family: system-ui, sans-serif; }
body { margin: 0 auto; max-width: 1100px; padding: 0 12px 32px; color: #222; line-height: 1.4; }
h1 { font-size: 1.5rem; } h2 { font-size: 1.25rem; border-bottom: 1px solid #ccc; }
h3 { font-size: 1.05rem; margin-top: 1.5em; }
.dim, .note { color: #666; } .note { font-style: italic; } p.dim { overflow-wrap: anywhere; }
svg.chart { width: 100%; height: auto; max-width: 760px; display: block; }
svg .grid { stroke: #e4e4e4; stroke-width: 1; } svg .frame { fill: none; stroke: #888; }
svg .tick { font-size: 11px; fill: #444; } svg .axis { font-size: 12px; fill: #222; }
svg .roof { fill: none; stroke-width: 2; stroke-dasharray: 6 3; }
svg .pt-cublas { fill: #fff; stroke-width: 2; } svg .pt-tgemm { stroke: #fff; stroke-width: 1; }
.legend { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 4px 16px;
  font-size: 0.85rem; }
.legend li { display: flex; align-items: center; gap: 6px; }
.swatch { width: 12px; height: 12px; border-radius: 2px; display: inline-block; }
.roofkey { width: 18px; border-top: 2px dashed; display: inline-block; }
svg.key { width: 12px; height: 12px; }
.bars { display: grid; gap: 3px; }
.bar-row { display: grid; grid-template-columns: minmax(0, 16em) minmax(0, 1fr) 4em; gap: 8px;
  align-items: center; font-size: 0.85rem; }
.bar-label { overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.bar-track { position: relative; height: 14px; background: #f3f3f3; }
.bar { position: absolute; left: 0; top: 0; bottom: 0; }
.one { position: absolute; top: -2px; bottom: -2px; border-left: 2px solid #000; }
.bar-value { text-align: right; font-variant-numeric: tabular-nums; }
.scroll { overflow-x: auto; }
table { border-collapse: collapse; font-size: 0.85rem; font-variant-numeric: tabular-nums; }
th, td { padding: 3px 8px; border-bottom: 1px solid #eee; text-align: right;
  white-space: nowrap; }
th:first-child, td:first-child { text-align: left; }
.strip { position: relative; display: inline-block; width: 120px; height: 10px;
  background: linear-gradient(90deg, #2ca02c, #d62728); border-radius: 5px; }
.mark { position: absolute; top: -3px; width: 8px; height: 14px; margin-left: -4px;
  background: #000; border-radius: 4px; }
.mark.dflt { background: #fff; border: 2px solid #000; transform: rotate(45deg);
  width: 8px; height: 8px; top: -1px; border-radius: 0; }
details { margin: 4px 0; } summary { cursor: pointer; }
.profile-table td { vertical-align: top; } .kname { max-width: 22em; overflow: hidden;
  text-overflow: ellipsis; }
.stalls { display: grid; gap: 2px; min-width: 13em; }
.stall { display: grid; grid-template-columns: 8.5em minmax(3em, 1fr) 2.8em; gap: 4px;
  align-items: center; font-size: 0.75rem; }
.stall-name { overflow: hidden; text-overflow: ellipsis; text-align: left; }
.stall-track { position: relative; height: 8px; background: #f3f3f3; }
.stall-bar { position: absolute; left: 0; top: 0; bottom: 0; background: #9467bd; }
@media (max-width: 600px) {
  .bar-row { grid-template-columns: minmax(0, 1fr) 3.5em; }
  .bar-label { grid-column: 1 / -1; }
  body { padding: 0 6px 24px; }
  .profile-table th, .profile-table td { white-space: normal; padding: 2px 4px; }
  .kname { max-width: 7em; overflow-wrap: anywhere; }
  .stalls { min-width: 8.5em; }
  .stall { grid-template-columns: 4.8em minmax(1.5em, 1fr) 2.2em; font-size: 0.7rem; }
}
)css";

}  // namespace

std::string html_report(TuningDb& db, const HtmlReportOptions& options) {
  std::string body;
  for (const DeviceInfo& device : db.devices()) body += device_section(db, device, options);
  if (body.empty()) body = "<p class=\"note\">No device has trials in this database.</p>\n";
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<meta "
      "name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>tgemm "
      "report: {}</title>\n<style>{}</style></head>\n<body>\n<h1>tgemm tuning report</h1>\n"
      "<p class=\"dim\">{}</p>\n{}</body></html>\n",
      escaped(db.path()), kStyle, escaped(db.path()), body);
}

}  // namespace tgemm
