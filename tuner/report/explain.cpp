#include "tuner/report/explain.h"

#include <fmt/format.h>

#include <map>
#include <optional>

#include "tuner/report/database_selector.h"
#include "tuner/report/kernel_fit.h"
#include "tuner/report/text_columns.h"

namespace tgemm {

namespace {

std::string describe_choice(const KernelChoice& c) {
  switch (c.path) {
    case Selection::exact:
      if (is_vendor_call(c.config))
        return "its tuned best, the vendor call " + describe_vendor_call(c.config);
      return "its tuned best, " + c.config.canonical_name();
    case Selection::nearest:
      return fmt::format("{}, measured on the tuned shape {}", c.config.canonical_name(),
                         c.tuned_key);
    case Selection::fallback_default:
      return "the shipped default " + c.config.canonical_name();
    case Selection::cublas:
      break;
  }
  return "cuBLAS (no tuned or default kernel can run it)";
}

// The choice and, on a line of its own, the selector's rule that made it.
std::string choice_lines(const std::string& lead, const KernelChoice& c) {
  return fmt::format("  {} {}\n    by the rule: {}\n", lead, describe_choice(c), c.rule);
}

std::string fixed(double v, int digits = 2) { return fmt::format("{:.{}f}", v, digits); }

// The trials table and the one-line reason the best won.
std::string explain_trials(TuningDb& db, const std::vector<const TrialRecord*>& ok,
                           double cublas_us, const DeviceInfo& device, int runners_up) {
  TextColumns table({"#", "kernel", "median us", "vs best", "vs cuBLAS", "TFLOP/s", "regs",
                     "smem B", "threads", "blocks/SM", "limited by", "waves"},
                    {true, false, true, true, true, true, true, true, true, true, false, true});
  std::vector<std::optional<KernelFit>> fits;
  const double best_us = ok.front()->trial.time_median_us;
  for (size_t i = 0; i < ok.size() && i <= size_t(runners_up); ++i) {
    const TrialResult& t = ok[i]->trial;
    fits.push_back(fit_of(db, *ok[i], device));
    const auto& f = fits.back();
    table.add({std::to_string(i + 1), t.config.canonical_name(), fixed(t.time_median_us),
               fixed(t.time_median_us / best_us, 3),
               cublas_us > 0 ? fixed(cublas_us / t.time_median_us, 3) : "-", fixed(t.tflops),
               f ? std::to_string(f->registers) : "-", f ? std::to_string(f->smem_bytes) : "-",
               f ? std::to_string(f->threads) : "-",
               f ? std::to_string(f->occupancy.blocks_per_sm) : "-",
               f ? f->occupancy.limited_by : "-", f && f->waves > 0 ? fixed(f->waves) : "-"});
  }
  std::string out = table.text();
  std::string why = "  why the best won: ";
  if (const auto& f = fits.front()) {
    why += fmt::format(
        "{} block(s) of {} threads per SM (limited by {}; {} registers, {} B shared), "
        "{} waves over {} SMs",
        f->occupancy.blocks_per_sm, f->threads, f->occupancy.limited_by, f->registers,
        f->smem_bytes, fixed(f->waves), device.sm_count);
  } else if (is_vendor_call(ok.front()->trial.config)) {
    why += "the vendor call " + describe_vendor_call(ok.front()->trial.config) +
           " beat every kernel of ours";
  } else {
    why += "no stored cubin to read its resources from";
  }
  if (ok.size() > 1)
    why += fmt::format("; the runner-up is {:.1f} % slower",
                       (ok[1]->trial.time_median_us / best_us - 1) * 100);
  if (cublas_us > 0) why += fmt::format("; cuBLAS takes {} us", fixed(cublas_us));
  return out + why + "\n";
}

}  // namespace

std::string explain_problem(TuningDb& db, const Problem& problem, const std::string& device_filter,
                            int runners_up) {
  std::string out;
  const std::string key = problem.key();
  for (const DeviceInfo& device : db.devices()) {
    if (!device_filter.empty() && device.name != device_filter) continue;
    const DatabaseSelector source(db, device);
    out += fmt::format("{} on {} ({}, {} SMs)\n", key, device.name, device.arch, device.sm_count);
    out += choice_lines("the dispatcher serves", source.selector().choose(problem));
    // libtgemm leaves out what this build finds stale (a family's source changed since): say
    // what it then serves, as the line above judges the database as recorded.
    const DatabaseSelector now = source.served_now();
    if (const StaleDropped& s = now.stale(); s.entries + s.replaced + s.trials > 0)
      out += fmt::format(
          "  with this build, which finds {} trial(s) and {} best(s) stale ({} replaced by their "
          "problem's fastest current trial; e.g. {}), it serves {}\n",
          s.trials, s.entries + s.replaced, s.replaced, s.example,
          describe_choice(now.selector().choose(problem)));

    std::vector<const TrialRecord*> ok;
    std::map<TrialStatus, int> failed;
    for (const TrialRecord& r : source.measured()) {
      if (r.problem.key() != key) continue;
      if (r.trial.status == TrialStatus::ok)
        ok.push_back(&r);
      else
        ++failed[r.trial.status];
    }
    if (ok.empty() && failed.empty()) {
      out += "  not tuned on this device\n";
      continue;
    }
    out += choice_lines("untuned, it would get", source.selector(key).choose(problem));
    std::string counts = fmt::format("  trials: {} ok", ok.size());
    for (const auto& [status, n] : failed) counts += fmt::format(", {} {}", n, to_string(status));
    out += counts + "\n";
    if (ok.empty()) continue;
    std::stable_sort(ok.begin(), ok.end(), [](const TrialRecord* a, const TrialRecord* b) {
      return a->trial.time_median_us < b->trial.time_median_us;
    });
    double cublas_us = 0;
    for (const BestEntry& e : source.tuned())
      if (e.problem.key() == key) cublas_us = e.cublas_median_us;
    out += explain_trials(db, ok, cublas_us, device, runners_up);
  }
  if (out.empty())
    out = device_filter.empty() ? fmt::format("no devices in '{}'\n", db.path())
                                : fmt::format("no device '{}' in '{}'\n", device_filter, db.path());
  return out;
}

}  // namespace tgemm
