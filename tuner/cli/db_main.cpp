// tgemm-db: answers questions about a tuning database without ever writing it: the tuned
// problems, the best config of one shape, every trial of a shape, or all trials as CSV/JSON.
// What changes a database (merge, prune, vacuum, refresh) writes a new file and leaves the input
// as is.
// The one exception, `profile`, stores Nsight Compute profiles of the best kernels.
#include <fmt/format.h>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "db/tuning_db.h"
#include "src/core/error.h"
#include "src/core/printable.h"
#include "src/core/vendor_call.h"
#include "src/templates/build_versions.h"
#include "src/templates/template_registry.h"
#include "tuner/cli/checked_exit.h"
#include "tuner/cli/option_checks.h"
#include "tuner/compile/code_refresh.h"
#include "tuner/output/output_file.h"
#include "tuner/profile/ncu_profiler.h"
#include "tuner/report/explain.h"
#include "tuner/report/html_report.h"
#include "tuner/report/selection_replay.h"
#include "tuner/report/text_columns.h"

namespace {

using tgemm::fail;
using tgemm::TextColumns;

constexpr int kExitError = 1;
constexpr int kExitNotTuned = 3;  // a valid question with no answer in the database

// The shape options that `best` and `show` share.
struct ShapeArgs {
  std::string m, n, k;  // as given: a number past int64's range must not be clamped into it
  std::string dtype = "f32";
  std::string out;
  std::string layout = "NN";
  std::string device;
};

struct Shape {
  tgemm::GemmTypes types;
  tgemm::Op op_a, op_b;
  int64_t m, n, k;

  bool matches(const tgemm::Problem& p) const {
    return p.types == types && p.op_a == op_a && p.op_b == op_b && p.m == m && p.n == n && p.k == k;
  }
  std::string describe() const {
    return fmt::format("{} {}{} m={} n={} k={}", types.name(), tgemm::to_string(op_a),
                       tgemm::to_string(op_b), m, n, k);
  }
};

void add_shape_options(CLI::App* cmd, ShapeArgs& args) {
  cmd->add_option("--m", args.m, "rows of C")->required();
  cmd->add_option("--n", args.n, "columns of C")->required();
  cmd->add_option("--k", args.k, "inner dimension")->required();
  cmd->add_option("--dtype", args.dtype, "f32, tf32, f32x3, f16 or bf16 (as in shape files)")
      ->capture_default_str();
  cmd->add_option("--out", args.out, "C's type when it differs from the inputs' (f32)");
  cmd->add_option("--layout", args.layout, "op(A) op(B): NN, NT, TN or TT")->capture_default_str();
  cmd->add_option("--device", args.device,
                  "GPU name as stored, e.g. \"NVIDIA H200\" (default: all)");
}

Shape parse_shape(const ShapeArgs& args) {
  int64_t sizes[3] = {};
  const std::pair<const char*, const std::string*> given[] = {
      {"--m", &args.m}, {"--n", &args.n}, {"--k", &args.k}};
  for (int i = 0; i < 3; ++i) {
    const std::string& text = *given[i].second;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), sizes[i]);
    if (text.empty() || ec != std::errc() || end != text.data() + text.size() || sizes[i] < 1 ||
        sizes[i] > INT32_MAX)
      fail("{} must be from 1 to {} (the kernels index it with a 32-bit int), got {}",
           given[i].first, INT32_MAX, text);
  }
  Shape shape{tgemm::gemm_types(args.dtype, args.out),
              tgemm::Op::N,
              tgemm::Op::N,
              sizes[0],
              sizes[1],
              sizes[2]};
  tgemm::parse_layout(args.layout, &shape.op_a, &shape.op_b);
  return shape;
}

std::string on_device(const std::string& device) {
  return device.empty() ? "" : fmt::format(" on device '{}'", device);
}

// A figure as printed; "-" for one that is not finite (a wrong result's error of infinity): a
// table never shows nan or inf.
std::string fixed(double value, int digits = 2) {
  return std::isfinite(value) ? fmt::format("{:.{}f}", value, digits) : "-";
}
std::string scientific(double value, int digits) {
  return std::isfinite(value) ? fmt::format("{:.{}e}", value, digits) : "-";
}

// cuBLAS time / tgemm time: above 1 means tgemm is faster.
std::string vs_cublas(double cublas_us, double tgemm_us) {
  return cublas_us > 0 && tgemm_us > 0 ? fixed(cublas_us / tgemm_us, 3) : "-";
}

// Errors can hold a whole NVRTC log; a table row gets the first line.
std::string first_line(const std::string& text, size_t limit = 120) {
  std::string line = text.substr(0, text.find('\n'));
  if (line.size() > limit) line = line.substr(0, limit - 3) + "...";
  return line;
}

// Our own fastest kernel's vs cuBLAS beside a best that may be a vendor call.
std::string ours_vs_cublas(const tgemm::BestEntry& e) {
  return vs_cublas(e.cublas_median_us, e.own_best_us());
}

int run_list(tgemm::TuningDb& db) {
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

int run_best(tgemm::TuningDb& db, const ShapeArgs& args) {
  const Shape shape = parse_shape(args);
  int shown = 0;
  for (const auto& e : db.best_entries("", args.device)) {
    if (!shape.matches(e.problem)) continue;
    if (shown++) fmt::print("\n");
    const auto& t = e.trial;
    fmt::print("problem:       {}\n", e.problem.key());
    fmt::print("device:        {} ({})\n", e.device_name, e.arch);
    fmt::print("kernel:        {}\n", e.config.canonical_name());
    if (tgemm::is_vendor_call(e.config))
      fmt::print("vendor call:   {}, with {}\n", tgemm::describe_vendor_call(e.config),
                 e.template_hash);
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
    if (tgemm::is_vendor_call(e.config)) {
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

int run_show(tgemm::TuningDb& db, const ShapeArgs& args) {
  const Shape shape = parse_shape(args);
  // trials() orders by problem and device, then ok trials by median time, then failures.
  std::vector<tgemm::TrialRecord> matching;
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
      const bool ok = t.status == tgemm::TrialStatus::ok;
      table.add({std::to_string(j - i + 1), t.config.canonical_name(), tgemm::to_string(t.status),
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

int run_explain(tgemm::TuningDb& db, const ShapeArgs& args) {
  const Shape shape = parse_shape(args);
  const auto problem =
      tgemm::Problem::packed(shape.types, shape.op_a, shape.op_b, shape.m, shape.n, shape.k);
  const auto devices = db.devices();
  if (!args.device.empty() && std::none_of(devices.begin(), devices.end(),
                                           [&](const auto& d) { return d.name == args.device; })) {
    fmt::print(stderr, "tgemm-db: no device '{}' in '{}'\n", args.device, db.path());
    return kExitNotTuned;
  }
  fmt::print("{}", tgemm::explain_problem(db, problem, args.device));
  return 0;
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

std::string to_csv(const tgemm::TextTable& table) {
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

int run_export(tgemm::TuningDb& db, const std::string& format, const std::string& output) {
  const std::string text =
      format == "csv" ? to_csv(db.trial_table()) : db.trial_table_json() + "\n";
  if (output.empty() || output == "-") {
    fmt::print("{}", text);
    return 0;
  }
  tgemm::write_output_file(output, text, tgemm::Overwrite::regular_file, "export file");
  return 0;
}

// Which kernel libtgemm would pick from `db` for each problem tuned in `truth`, and its time
// there against the best; the geometric mean summarises how well untuned shapes are served.
int run_replay(tgemm::TuningDb& db, const std::string& truth_path, bool leave_one_out) {
  if (leave_one_out == !truth_path.empty())
    fail("replay takes either --against FILE or --leave-one-out");
  std::optional<tgemm::TuningDb> other;
  if (!leave_one_out) other.emplace(truth_path, tgemm::TuningDb::Mode::read_only);
  tgemm::TuningDb& truth = other ? *other : db;
  const auto rows = tgemm::replay_selection(db, truth, leave_one_out);
  if (rows.empty()) fail("'{}' has no tuned problem to replay", truth.path());
  fmt::print("{:<34} {:<8} {:>10} {:>10} {:>8}  {}\n", "problem", "path", "best us", "chosen us",
             "ratio", "chosen kernel");
  double log_sum = 0;
  int measured = 0;
  for (const auto& r : rows) {
    const bool known = r.chosen_us > 0;
    fmt::print("{:<34} {:<8} {:>10.1f} {:>10} {:>8}  {}\n", r.problem_key, tgemm::to_string(r.path),
               r.best_us, known ? fmt::format("{:.1f}", r.chosen_us) : "-",
               known ? fmt::format("{:.3f}", r.best_us / r.chosen_us) : "-",
               r.chosen.empty() ? "cuBLAS" : r.chosen);
    if (known) {
      log_sum += std::log(r.best_us / r.chosen_us);
      ++measured;
    }
  }
  fmt::print(
      "geometric mean of best / chosen: {:.3f} over {} problem(s); {} chosen kernel(s) were "
      "never measured in {}\n",
      measured ? std::exp(log_sum / measured) : 0.0, measured, rows.size() - measured,
      truth.path());
  return 0;
}

// The measured roofs of every device (tgemm-tune stores them once per device).
int run_ceilings(tgemm::TuningDb& db, const std::string& device) {
  const auto ceilings = db.ceilings(device);
  if (ceilings.empty()) {
    fmt::print("no device ceilings stored{} in '{}' (tgemm-tune measures them on a GPU run)\n",
               on_device(device), db.path());
    return 0;
  }
  TextColumns table({"device", "arch", "ceiling", "value", "unit", "source", "measured", "when"},
                    {false, false, false, true, false, false, false, false});
  for (const auto& c : ceilings) {
    const bool copy = c.kind == tgemm::kCopyBandwidthCeiling;
    table.add({c.device_name, c.arch, c.kind, fixed(c.value * (copy ? 1e-9 : 1e-12)),
               copy ? "GB/s" : "TFLOP/s", c.source, c.detail, c.measured_at});
  }
  table.print();
  return 0;
}

// The HTML report, written whole to a scratch file and renamed, so OUT is never half written.
int run_report(tgemm::TuningDb& db, const std::string& out_path, int top) {
  const std::string html = tgemm::html_report(db, {top});
  tgemm::write_output_file(out_path, html, tgemm::Overwrite::regular_file, "report file");
  fmt::print("wrote '{}' ({} bytes)\n", out_path, html.size());
  return 0;
}

// The best entries and trials of `judged` that this build would not serve: another template
// source or NVRTC, or a driver older than the one last seen on that device. `shown` names the
// database in messages.
void print_stale(tgemm::TuningDb& judged, const std::string& shown) {
  const tgemm::BuildsByDevice builds(judged.devices(), [](const tgemm::DeviceInfo& d) {
    return tgemm::this_build(d.driver_version);
  });
  TextColumns table({"device", "problem", "kernel", "why it is stale"},
                    {false, false, false, false});
  for (const tgemm::BestEntry& e : judged.best_entries())
    if (auto why = builds.stale_reason(e.device_name, e.arch, e.config.template_name,
                                       e.template_hash, e.measured_with))
      table.add({e.device_name, e.problem.key(), e.config.canonical_name(), *why});
  int64_t stale_trials = 0, trials = 0;
  for (const tgemm::TrialRecord& t : judged.trials()) {
    ++trials;
    if (builds.stale_reason(t.device_name, t.arch, t.trial.config.template_name, t.template_hash,
                            t.measured_with))
      ++stale_trials;
  }
  if (table.empty())
    fmt::print("no stale best entries in '{}'\n", shown);
  else
    table.print();
  fmt::print(
      "{} of {} trial(s) stale; the dispatcher does not serve stale entries and tgemm-tune "
      "measures them again\n",
      stale_trials, trials);
}

// Refreshing by code with this build: its registered families, its NVRTC, each stored
// device's driver.
tgemm::RefreshOptions this_builds_refresh() {
  tgemm::RefreshOptions options;
  options.family = [](const std::string& name) { return tgemm::find_template(name); };
  options.current = [](const tgemm::DeviceInfo& d) { return tgemm::this_build(d.driver_version); };
  options.jobs = int(std::max(1u, std::thread::hardware_concurrency()));
  return options;
}

// What refresh_by_code left stale for want of a build, if anything, as a sentence.
std::string not_built_note(const tgemm::RefreshCounts& counts) {
  if (counts.not_built == 0) return "";
  return fmt::format(" ({} trial(s) could not be rebuilt to compare, e.g. {})", counts.not_built,
                     counts.example_not_built);
}

// By default a trial whose template text changed is stale only where its config now builds to
// other machine code: judged on a scratch copy refreshed by code (the input is only read).
// by_text: as the library judges, without compiling.
int run_stale(tgemm::TuningDb& db, bool by_text) {
  if (by_text) {
    print_stale(db, db.path());
    return 0;
  }
  const tgemm::ScratchDir scratch(std::filesystem::temp_directory_path().string(), "stale check");
  db.copy_to(scratch.file("refreshed.db"));
  tgemm::TuningDb copy(scratch.file("refreshed.db"), tgemm::TuningDb::Mode::read_write);
  const tgemm::RefreshCounts counts = tgemm::refresh_by_code(copy, this_builds_refresh());
  print_stale(copy, db.path());
  if (counts.rekeyed > 0)
    fmt::print(
        "{} trial(s) whose template text changed still build to the same machine code: not "
        "stale, but the dispatcher serves them only once `tgemm-db refresh OUT` has re-keyed "
        "them\n",
        counts.rekeyed);
  if (counts.not_built > 0) fmt::print("stale without a code check{}\n", not_built_note(counts));
  return 0;
}

// Builds a new database at OUT (`build` fills the scratch file) and links it to OUT only when
// complete and intact: OUT is never overwritten, never half written, never a damaged copy.
void write_new_database(const std::string& what, const std::string& out_path,
                        const std::function<void(const std::string& scratch)>& build) {
  tgemm::OutputFile out(out_path, tgemm::Overwrite::never, what);
  try {
    build(out.scratch_path());
    const std::string problems =
        tgemm::TuningDb(out.scratch_path(), tgemm::TuningDb::Mode::read_write).integrity_problems();
    if (!problems.empty())
      fail("it fails the integrity check (is an input damaged?): {}", problems);
  } catch (const tgemm::Error& e) {
    // The scratch file is the new OUT to be: named so, since the user never sees the scratch.
    std::string why = e.what();
    for (size_t at; (at = why.find(out.scratch_path())) != std::string::npos;)
      why.replace(at, out.scratch_path().size(), out_path);
    fail("{} '{}' was not written: {}", what, out_path, why);
  }
  out.commit();
}

// The database copied to `scratch`, after a full check: a damaged input is not copied.
void copy_intact(tgemm::TuningDb& db, const std::string& scratch) {
  if (const std::string problems = db.integrity_problems(); !problems.empty())
    fail("'{}' is damaged, so no copy of it is written: {}", db.path(), problems);
  db.copy_to(scratch);
}

// A new file OUT: a copy of the database in which the trials whose template text changed but
// whose config builds to the same machine code are re-keyed to this build (served again). The
// input is never written.
int run_refresh(tgemm::TuningDb& db, const std::string& out_path) {
  tgemm::RefreshCounts counts;
  write_new_database("refreshed database", out_path, [&](const std::string& scratch) {
    copy_intact(db, scratch);
    tgemm::TuningDb out(scratch, tgemm::TuningDb::Mode::read_write);
    counts = tgemm::refresh_by_code(out, this_builds_refresh());
  });
  fmt::print(
      "wrote '{}': {} trial(s) re-keyed to this build's templates (same machine code), {} left "
      "stale as their code changed, {} already measured again by tgemm-tune{}\n",
      out_path, counts.rekeyed, counts.changed, counts.superseded, not_built_note(counts));
  return 0;
}

// A new file OUT: a copy of the database, pruned (prune) or only compacted (vacuum). The input
// is never written.
int run_compact(tgemm::TuningDb& db, const std::string& out_path, bool prune, bool stale) {
  tgemm::PruneCounts counts;
  write_new_database(prune ? "pruned database" : "compacted database", out_path,
                     [&](const std::string& scratch) {
                       copy_intact(db, scratch);
                       tgemm::TuningDb out(scratch, tgemm::TuningDb::Mode::read_write);
                       tgemm::PruneOptions options;
                       options.failed = options.unused_cubins = prune;
                       if (stale)
                         options.stale = [](const tgemm::DeviceInfo& d) {
                           return tgemm::this_build(d.driver_version);
                         };
                       counts = out.prune(options);
                     });
  namespace fs = std::filesystem;
  fmt::print(
      "wrote '{}' ({} bytes, from {} bytes): dropped {} failed trial(s), {} failed binaries, {} "
      "cubin(s) no best uses, {} stale trial(s), {} unused kernel(s)\n",
      out_path, fs::file_size(out_path), fs::file_size(db.path()), counts.failed_trials,
      counts.failed_binaries, counts.cubins, counts.stale_trials, counts.kernels);
  return 0;
}

// Every IN merged into a new OUT (only read).
int run_merge(const std::string& out_path, const std::vector<std::string>& in_paths) {
  int64_t duplicates = 0;
  write_new_database("merged database", out_path, [&](const std::string& scratch) {
    tgemm::TuningDb out(scratch, tgemm::TuningDb::Mode::read_write);
    for (const std::string& in : in_paths) {
      const tgemm::MergeCounts c = out.merge_from(in);
      duplicates += c.duplicate_trials;
      fmt::print(
          "merged '{}': {} run(s), {} device(s), {} problem(s), {} kernel(s), {} binaries, {} "
          "trial(s) new; {} trial(s) already there ({} replaced by a faster ok one)\n",
          in, c.runs, c.devices, c.problems, c.kernels, c.binaries, c.trials, c.duplicate_trials,
          c.replaced_trials);
      if (c.bests_not_kept > 0)
        fmt::print(stderr,
                   "tgemm-db: merge: {} best row(s) not kept from '{}': their trial is not an ok "
                   "one with a positive finite time, or is another problem's or device's; the "
                   "bests come from the trials\n",
                   c.bests_not_kept, tgemm::printable(in));
    }
  });
  fmt::print(
      "wrote '{}' from {} database(s); {} duplicate trial(s) (the same problem, kernel and "
      "device in two inputs: the faster ok one kept, else the first)\n",
      out_path, in_paths.size(), duplicates);
  return 0;
}

// ---- profiles ------------------------------------------------------------------------------

struct ProfileArgs {
  std::string m, n, k;  // empty: not given
  std::string dtype = "f32", out, layout = "NN";
  bool all = false;
  std::string ncu;
  int warmup = 3;
};

std::string executable_dir() {
  std::error_code ec;
  auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? std::string(".") : exe.parent_path().string();
}

// The shape to profile, or nullopt for --all; bad combinations are named.
std::optional<Shape> profile_shape(const ProfileArgs& args) {
  const bool any = !args.m.empty() || !args.n.empty() || !args.k.empty();
  if (args.all && any) fail("profile takes either --all or --m --n --k, not both");
  if (args.all) return std::nullopt;
  if (args.m.empty() || args.n.empty() || args.k.empty())
    fail("profile needs --m, --n and --k (or --all)");
  ShapeArgs shape{args.m, args.n, args.k, args.dtype, args.out, args.layout, ""};
  return parse_shape(shape);
}

std::string metric(const std::optional<double>& v, double scale = 1, int digits = 1) {
  return v ? fixed(*v * scale, digits) : "-";
}

std::string top_stalls(const tgemm::KernelProfile& p, size_t count) {
  std::string out;
  for (size_t i = 0; i < p.stalls.size() && i < count; ++i)
    out += fmt::format("{}{} {:.2f}", i ? ", " : "", p.stalls[i].name, p.stalls[i].value);
  return out.empty() ? "-" : out;
}

std::string profiled_kernel(const tgemm::KernelProfile& p) {
  return p.contender == tgemm::kTgemmContender ? p.config : first_line(p.kernel_name, 60);
}

int run_profile(const std::string& db_path, const ProfileArgs& args, const std::string& ncu) {
  const std::optional<Shape> shape = profile_shape(args);
  const std::string target = executable_dir() + "/tgemm-profile-target";
  if (::access(target.c_str(), X_OK) != 0)
    fail("'{}' is missing: it is built beside tgemm-db and is what ncu profiles", target);
  int target_exit = 0;
  const auto [device_name, arch] = tgemm::target_device(target, &target_exit);
  tgemm::TuningDb db(db_path, tgemm::TuningDb::Mode::read_write);
  std::vector<tgemm::BestEntry> chosen;
  for (auto& e : db.best_entries("", device_name, arch)) {
    if (shape && !shape->matches(e.problem)) continue;
    // A vendor best has no kernel of ours to profile: cuBLAS's own is profiled beside ours.
    if (tgemm::is_vendor_call(e.config)) {
      fmt::print("{}: its best is the vendor call {}; not profiled\n", e.problem.key(),
                 tgemm::describe_vendor_call(e.config));
      continue;
    }
    chosen.push_back(std::move(e));
  }
  if (chosen.empty()) {
    fmt::print(stderr, "tgemm-db: nothing tuned{} on {} ({}) in '{}' to profile\n",
               shape ? " for " + shape->describe() : "", device_name, arch, db.path());
    return kExitNotTuned;
  }
  tgemm::DeviceInfo device;
  for (const auto& d : db.devices())
    if (d.name == device_name && d.arch == arch) device = d;
  const std::string version = tgemm::ncu_version(ncu);
  const tgemm::ScratchDir scratch(std::filesystem::temp_directory_path().string(),
                                  "the profiles' scratch files");
  fmt::print("profiling {} problem(s) on {} ({}) with {} (ncu {})\n", chosen.size(), device_name,
             arch, ncu, version);
  for (const auto& e : chosen) {
    const auto start = std::chrono::steady_clock::now();
    const auto binary = db.find_binary_for(e.config, e.template_hash, e.problem, e.arch, "");
    if (!binary || binary->compiled.entry.empty())
      fail("'{}' has no cubin of {} for {} to profile", db.path(), e.config.canonical_name(),
           e.problem.key());
    tgemm::NcuRun run{ncu,
                      target,
                      db_path,
                      e.problem.key(),
                      tgemm::kTgemmContender,
                      "^" + binary->compiled.entry + "$",
                      args.warmup,
                      scratch.path()};
    std::vector<tgemm::KernelProfile> profiles;
    profiles.push_back(tgemm::profile_with_ncu(run));
    profiles.back().config = e.config.canonical_name();
    run.contender = tgemm::kCublasContender;
    run.kernel_regex.clear();
    profiles.push_back(tgemm::profile_with_ncu(run));
    for (auto& p : profiles) {
      p.contender = &p == &profiles.front() ? tgemm::kTgemmContender : tgemm::kCublasContender;
      p.ncu_version = version;
    }
    db.store_profiles(db.upsert_problem(e.problem), db.upsert_device(device), profiles);
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    fmt::print("{}: tgemm {} {} us, cuBLAS {} {} us ({:.1f} s)\n", e.problem.key(),
               profiles[0].config, metric(profiles[0].duration_us, 1, 2),
               first_line(profiles[1].kernel_name, 60), metric(profiles[1].duration_us, 1, 2),
               seconds);
  }
  return 0;
}

int run_profiles(tgemm::TuningDb& db, const std::string& device) {
  const auto profiles = db.profiles(device);
  if (profiles.empty()) {
    fmt::print("no kernel profiles stored{} in '{}' (tgemm-db profile makes them with ncu)\n",
               on_device(device), db.path());
    return 0;
  }
  TextColumns table({"problem", "device", "who", "kernel", "ncu us", "SM %", "DRAM rd MB",
                     "DRAM wr MB", "gld sectors", "excess", "smem conflicts", "occupancy %",
                     "FMA %", "tensor %", "regs", "top stalls (warps per issue)"},
                    {false, false, false, false, true, true, true, true, true, true, true, true,
                     true, true, true, false});
  for (const auto& p : profiles) {
    std::optional<double> conflicts;
    if (p.shared_load_bank_conflicts || p.shared_store_bank_conflicts)
      conflicts =
          p.shared_load_bank_conflicts.value_or(0) + p.shared_store_bank_conflicts.value_or(0);
    table.add({p.problem_key, p.device_name, p.contender, profiled_kernel(p),
               metric(p.duration_us, 1, 2), metric(p.sm_throughput_pct),
               metric(p.dram_read_bytes, 1e-6), metric(p.dram_write_bytes, 1e-6),
               metric(p.global_load_sectors, 1, 0), metric(p.global_excess_sectors, 1, 0),
               metric(conflicts, 1, 0), metric(p.achieved_occupancy_pct), metric(p.fma_pipe_pct),
               metric(p.tensor_pipe_pct), metric(p.registers, 1, 0), top_stalls(p, 3)});
  }
  table.print();
  return 0;
}

}  // namespace

static int run_main(int argc, char** argv) {
  CLI::App app{
      "tgemm-db: query a tgemm tuning database (opened read-only, never modified, except by "
      "profile)"};
  app.require_subcommand(1);
  app.fallthrough();  // so --db may also follow the subcommand
  std::string db_path = "tgemm.db";
  app.add_option("--db", db_path, "the tuning database file")->capture_default_str();

  auto* list = app.add_subcommand("list", "every tuned problem and device with its best kernel");
  ShapeArgs best_args, show_args, explain_args;
  auto* best = app.add_subcommand("best", "the best config for one shape (exit 3 when untuned)");
  add_shape_options(best, best_args);
  auto* show = app.add_subcommand("show", "every trial of one shape, fastest first");
  add_shape_options(show, show_args);
  auto* explain = app.add_subcommand(
      "explain",
      "how the dispatcher serves one shape (tuned, from which nearest tuned shape, a default, "
      "or cuBLAS) and, where it was tuned, why its best won");
  add_shape_options(explain, explain_args);
  std::string format, output;
  auto* exporter = app.add_subcommand("export", "every trial with its problem, kernel and device");
  exporter->add_option("--format", format, "csv or json")->required();
  exporter->add_option("--output,-o", output, "file to write (default: standard output)");
  std::string truth_path;
  bool leave_one_out = false;
  auto* replay = app.add_subcommand(
      "replay",
      "the kernels libtgemm would pick from --db for the problems tuned in --against "
      "(or in --db, each left out in turn), timed there against their best");
  replay->add_option("--against", truth_path, "a database tuned on the problems to replay");
  replay->add_flag("--leave-one-out", leave_one_out,
                   "replay --db's own problems, each as if it had not been tuned");
  std::string merge_out;
  std::vector<std::string> merge_in;
  auto* merge = app.add_subcommand(
      "merge",
      "merge tuning databases (e.g. the shards of tgemm-tune --shard) into a new file OUT; "
      "the inputs are only read");
  merge->add_option("OUT", merge_out, "the merged database to create (must not exist)")->required();
  merge->add_option("IN", merge_in, "the databases to merge, one or more")->required();

  std::string report_out, ceilings_device;
  int report_top = 5;
  auto* report = app.add_subcommand(
      "report",
      "one self-contained HTML page per database: roofline, tgemm/cuBLAS ratios, tuning spread, "
      "top configs and failures per device");
  report->add_option("--out", report_out, "the HTML file to write")->required();
  report->add_option("--top", report_top, "configs listed per problem (1 to 100)")
      ->capture_default_str();
  auto* ceilings = app.add_subcommand(
      "ceilings", "the measured copy bandwidth and peak rates stored per device");
  ceilings->add_option("--device", ceilings_device, "GPU name as stored (default: all)");

  bool stale_by_text = false;
  auto* stale = app.add_subcommand(
      "stale",
      "best entries and trials whose kernels this build runs differently (machine code, NVRTC "
      "or driver changed); a template whose text changed is rebuilt with NVRTC to compare its "
      "code, so a comment edit leaves nothing stale");
  stale->add_flag("--by-text", stale_by_text,
                  "judge by the template text alone, as the dispatcher does (fast, no "
                  "compiling): any edit of a template makes its trials stale");
  std::string refresh_out;
  auto* refresh = app.add_subcommand(
      "refresh",
      "write a copy OUT in which the trials whose template text changed but whose machine code "
      "did not (rebuilt with NVRTC to compare) belong to this build, so the dispatcher serves "
      "them again; the input is only read");
  refresh->add_option("OUT", refresh_out, "the refreshed database to create (must not exist)")
      ->required();
  std::string prune_out, vacuum_out;
  bool prune_stale = false;
  auto* prune = app.add_subcommand(
      "prune",
      "write a smaller copy OUT: without failed trials and binaries and the cubins no best uses "
      "(--stale: without stale trials too); bests, problems and cuBLAS times stay");
  prune->add_option("OUT", prune_out, "the pruned database to create (must not exist)")->required();
  prune->add_flag("--stale", prune_stale,
                  "also drop the stale trials, judged by text (`tgemm-db stale --by-text`); "
                  "`tgemm-db refresh` first keeps those whose machine code did not change");
  auto* vacuum = app.add_subcommand("vacuum", "write a compacted copy OUT, dropping nothing");
  vacuum->add_option("OUT", vacuum_out, "the compacted database to create (must not exist)")
      ->required();
  ProfileArgs profile_args;
  auto* profile = app.add_subcommand(
      "profile",
      "Nsight Compute (ncu) metrics of the best kernel and of cuBLAS's on chosen problems of this "
      "GPU, stored in the database (the one subcommand that writes it)");
  profile->add_option("--m", profile_args.m, "rows of C");
  profile->add_option("--n", profile_args.n, "columns of C");
  profile->add_option("--k", profile_args.k, "inner dimension");
  profile->add_option("--dtype", profile_args.dtype, "f32, tf32, f32x3, f16 or bf16")
      ->capture_default_str();
  profile->add_option("--out", profile_args.out, "C's type when it differs from the inputs'");
  profile->add_option("--layout", profile_args.layout, "op(A) op(B): NN, NT, TN or TT")
      ->capture_default_str();
  profile->add_flag("--all", profile_args.all, "every problem tuned on this GPU");
  profile->add_option("--ncu", profile_args.ncu,
                      "Nsight Compute's ncu (default: PATH, then "
                      "/opt/nvidia/nsight-compute/*/ncu)");
  profile->add_option("--warmup", profile_args.warmup, "calls before the profiled one (0 to 100)")
      ->capture_default_str();
  std::string profiles_device;
  auto* profiles = app.add_subcommand("profiles", "the stored kernel profiles as a table");
  profiles->add_option("--device", profiles_device, "GPU name as stored (default: all)");

  if (int exit_code = tgemm::cli::parse(app, argc, argv); exit_code >= 0) return exit_code;
  // Warnings (rows skipped as unreadable) go to stderr: stdout is the answer, a table, CSV or
  // JSON that another program may read.
  spdlog::set_default_logger(spdlog::stderr_color_st("tgemm-db"));

  try {
    // Check the arguments before touching the database, so a typo is named as such.
    if (*best) parse_shape(best_args);
    if (*show) parse_shape(show_args);
    if (*explain) parse_shape(explain_args);
    if (*exporter && format != "csv" && format != "json")
      fail("unknown export format '{}' (expected csv or json)", format);

    if (*report && (report_top < 1 || report_top > 100))
      fail("--top must be from 1 to 100, got {}", report_top);
    if (*report && report_out.empty()) fail("--out needs a file name");
    if (*merge) return run_merge(merge_out, merge_in);
    if (*profile) {
      profile_shape(profile_args);
      if (profile_args.warmup < 0 || profile_args.warmup > 100)
        fail("--warmup must be from 0 to 100, got {}", profile_args.warmup);
      const char* path_variable = std::getenv("PATH");
      const std::string ncu = tgemm::find_ncu(profile_args.ncu, path_variable ? path_variable : "");
      if (ncu.empty())
        fail(
            "Nsight Compute's ncu was not found (not on PATH, not in "
            "/opt/nvidia/nsight-compute/<version>/, not in /usr/local/cuda/bin); install it or "
            "pass --ncu PATH. Nothing was profiled or written");
      if (!std::filesystem::is_regular_file(db_path))
        fail("tuning database '{}' does not exist (tgemm-tune makes it)", db_path);
      return run_profile(db_path, profile_args, ncu);
    }
    tgemm::TuningDb db(db_path, tgemm::TuningDb::Mode::read_only);
    if (*list) return run_list(db);
    if (*best) return run_best(db, best_args);
    if (*show) return run_show(db, show_args);
    if (*explain) return run_explain(db, explain_args);
    if (*replay) return run_replay(db, truth_path, leave_one_out);
    if (*report) return run_report(db, report_out, report_top);
    if (*ceilings) return run_ceilings(db, ceilings_device);
    if (*stale) return run_stale(db, stale_by_text);
    if (*refresh) return run_refresh(db, refresh_out);
    if (*prune) return run_compact(db, prune_out, true, prune_stale);
    if (*vacuum) return run_compact(db, vacuum_out, false, false);
    if (*profiles) return run_profiles(db, profiles_device);
    return run_export(db, format, output);
  } catch (const std::exception& e) {
    fmt::print(stderr, "tgemm-db: error: {}\n", e.what());
    return kExitError;
  }
}

int main(int argc, char** argv) {
  return tgemm::cli::checked_exit("tgemm-db", run_main(argc, argv));
}
