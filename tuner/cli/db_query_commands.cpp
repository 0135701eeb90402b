#include "tuner/cli/db_query_commands.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "src/core/vendor_call.h"
#include "tuner/cli/db_exit_codes.h"
#include "tuner/cli/db_formatting.h"
#include "tuner/output/output_file.h"
#include "tuner/report/explain.h"
#include "tuner/report/text_columns.h"

namespace tgemm::cli::db_tool {

namespace {

// Our own fastest kernel's vs cuBLAS beside a best that may be a vendor call.
std::string ours_vs_cublas(const BestEntry& e) {
  return vs_cublas(e.cublas_median_us, e.own_best_us());
}

// RFC 4180: quote a field holding a separator, quote or line break; double inner quotes.
std::string csv_field(const std::optional<std::string>& cell) {
  if (!cell) return "";
  const std::string& s = *cell;
  if (s.find_first_of(",\"\r\n") == std::string::npos &&
      (s.empty() || (s.front() != ' ' && s.back() != ' ')))
    return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + '"';
}

std::string to_csv(const TextTable& table) {
  std::string out;
  auto add_row = [&out](const auto& cells) {
    for (size_t c = 0; c < cells.size(); ++c) {
      if (c) out += ',';
      out += csv_field(cells[c]);
    }
    out += '\n';
  };
  std::vector<std::optional<std::string>> header(table.columns.begin(), table.columns.end());
  add_row(header);
  for (const auto& row : table.rows) add_row(row);
  return out;
}

}  // namespace

int run_list(TuningDb& db) {
  const auto entries = db.best_entries();
  // Pairs whose trials all failed have no best row but are worth knowing about.
  std::map<std::tuple<std::string, std::string, std::string>, int> untuned;
  for (const auto& t : db.trials()) untuned[{t.problem.key(), t.device_name, t.arch}]++;
  for (const auto& e : entries) untuned.erase({e.problem.key(), e.device_name, e.arch});

  if (entries.empty() && untuned.empty()) {
    fmt::print("no tuned problems in '{}'\n", db.path());
    return 0;
  }
  TextColumns table({"problem", "device", "arch", "best kernel", "median us", "TFLOP/s",
                     "cuBLAS us", "vs cuBLAS", "ours vs cuBLAS", "trials"},
                    {false, false, false, false, true, true, true, true, true, true});
  for (const auto& e : entries) {
    table.add({e.problem.key(), e.device_name, e.arch, e.config.canonical_name(),
               fixed(e.trial.time_median_us), fixed(e.trial.tflops),
               e.cublas_median_us > 0 ? fixed(e.cublas_median_us) : "-",
               vs_cublas(e.cublas_median_us, e.trial.time_median_us), ours_vs_cublas(e),
               std::to_string(e.trial_count)});
  }
  for (const auto& [pair, count] : untuned) {
    const auto& [key, device, arch] = pair;
    table.add({key, device, arch, "(no ok trial)", "-", "-", "-", "-", "-", std::to_string(count)});
  }
  table.print();
  return 0;
}

int run_best(TuningDb& db, const ShapeArgs& args) {
  const Shape shape = parse_shape(args);
  int shown = 0;
  for (const auto& e : db.best_entries("", args.device)) {
    if (!shape.matches(e.problem)) continue;
    if (shown++) fmt::print("\n");
    const auto& t = e.trial;
    fmt::print("problem:       {}\n", e.problem.key());
    fmt::print("device:        {} ({})\n", e.device_name, e.arch);
    fmt::print("kernel:        {}\n", e.config.canonical_name());
    if (is_vendor_call(e.config))
      fmt::print("vendor call:   {}, with {}\n", describe_vendor_call(e.config), e.template_hash);
    else
      fmt::print("template:      {} (source hash {})\n", e.config.template_name, e.template_hash);
    fmt::print("parameters:    {}\n", e.config.params_text());
    fmt::print("time:          {} us median (min {}, max {}, {} runs)\n", fixed(t.time_median_us),
               fixed(t.time_min_us), fixed(t.time_max_us), t.runs);
    fmt::print("TFLOP/s:       {}\n", fixed(t.tflops));
    if (e.cublas_median_us > 0)
      fmt::print("cuBLAS:        {} us (vs cuBLAS {}: cuBLAS time / best time)\n",
                 fixed(e.cublas_median_us), vs_cublas(e.cublas_median_us, t.time_median_us));
    else
      fmt::print("cuBLAS:        not measured\n");
    fmt::print("max rel error: {:.3g}\n", t.max_rel_error);
    // f32x3: both against the FP64 reference on the same inputs (FP32-accurate means "no
    // worse than SGEMM").
    if (e.cublas_rel_error)
      fmt::print("error vs FP64: tgemm {:.3g}, cuBLAS SGEMM {:.3g}\n", t.max_rel_error,
                 *e.cublas_rel_error);
    if (is_vendor_call(e.config)) {
      if (e.tgemm_best)
        fmt::print("ours:          {}, {} us median (vs cuBLAS {})\n",
                   e.tgemm_best->config.canonical_name(), fixed(e.tgemm_best->time_median_us),
                   ours_vs_cublas(e));
      else
        fmt::print("ours:          no kernel of ours ran correctly\n");
    }
    fmt::print("trials:        {}\n", e.trial_count);
  }
  if (shown == 0) {
    fmt::print(stderr, "tgemm-db: nothing tuned for {}{} in '{}'\n", shape.describe(),
               on_device(args.device), db.path());
    return kExitNotTuned;
  }
  return 0;
}

int run_show(TuningDb& db, const ShapeArgs& args) {
  const Shape shape = parse_shape(args);
  // trials() orders by problem and device, then ok trials by median time, then failures.
  std::vector<TrialRecord> matching;
  for (auto& t : db.trials("", args.device))
    if (shape.matches(t.problem)) matching.push_back(std::move(t));
  if (matching.empty()) {
    fmt::print(stderr, "tgemm-db: no trials recorded for {}{} in '{}'\n", shape.describe(),
               on_device(args.device), db.path());
    return kExitNotTuned;
  }
  size_t i = 0;
  while (i < matching.size()) {
    const auto& head = matching[i];
    size_t end = i;
    while (end < matching.size() && matching[end].problem.key() == head.problem.key() &&
           matching[end].device_name == head.device_name && matching[end].arch == head.arch)
      ++end;
    if (i) fmt::print("\n");
    fmt::print("{} on {} ({}): {} trials\n", head.problem.key(), head.device_name, head.arch,
               end - i);
    TextColumns table({"#", "kernel", "status", "median us", "min us", "max us", "TFLOP/s",
                       "max rel err", "error"},
                      {true, false, false, true, true, true, true, true, false});
    for (size_t j = i; j < end; ++j) {
      const auto& t = matching[j].trial;
      const bool ok = t.status == TrialStatus::ok;
      table.add({std::to_string(j - i + 1), t.config.canonical_name(), to_string(t.status),
                 ok ? fixed(t.time_median_us) : "-", ok ? fixed(t.time_min_us) : "-",
                 ok ? fixed(t.time_max_us) : "-", ok ? fixed(t.tflops) : "-",
                 ok || t.max_rel_error > 0 ? scientific(t.max_rel_error, 2) : "-",
                 first_line(t.error)});
    }
    table.print();
    i = end;
  }
  return 0;
}

int run_explain(TuningDb& db, const ShapeArgs& args) {
  const Shape shape = parse_shape(args);
  const auto problem =
      Problem::packed(shape.types, shape.op_a, shape.op_b, shape.m, shape.n, shape.k);
  const auto devices = db.devices();
  if (!args.device.empty() && std::none_of(devices.begin(), devices.end(),
                                           [&](const auto& d) { return d.name == args.device; })) {
    fmt::print(stderr, "tgemm-db: no device '{}' in '{}'\n", args.device, db.path());
    return kExitNotTuned;
  }
  fmt::print("{}", explain_problem(db, problem, args.device));
  return 0;
}

int run_export(TuningDb& db, const std::string& format, const std::string& output) {
  const std::string text =
      format == "csv" ? to_csv(db.trial_table()) : db.trial_table_json() + "\n";
  if (output.empty() || output == "-") {
    fmt::print("{}", text);
    return 0;
  }
  write_output_file(output, text, Overwrite::regular_file, "export file");
  return 0;
}

// The measured roofs of every device (tgemm-tune stores them once per device).
int run_ceilings(TuningDb& db, const std::string& device) {
  const auto ceilings = db.ceilings(device);
  if (ceilings.empty()) {
    fmt::print("no device ceilings stored{} in '{}' (tgemm-tune measures them on a GPU run)\n",
               on_device(device), db.path());
    return 0;
  }
  TextColumns table({"device", "arch", "ceiling", "value", "unit", "source", "measured", "when"},
                    {false, false, false, true, false, false, false, false});
  for (const auto& c : ceilings) {
    const bool copy = c.kind == kCopyBandwidthCeiling;
    table.add({c.device_name, c.arch, c.kind, fixed(c.value * (copy ? 1e-9 : 1e-12)),
               copy ? "GB/s" : "TFLOP/s", c.source, c.detail, c.measured_at});
  }
  table.print();
  return 0;
}

}  // namespace tgemm::cli::db_tool
