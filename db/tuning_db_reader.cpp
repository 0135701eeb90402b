#include "db/tuning_db_reader.h"

#include <fmt/format.h>

#include <cmath>
#include <utility>

#include "db/stored_rows.h"
#include "src/core/printable.h"
#include "src/core/vendor_call.h"

namespace tgemm {

namespace {

// A cuBLAS time, or an f32x3 problem's SGEMM error, that is no measurement.
std::optional<std::string> implausible_cublas(const std::optional<double>& median_us,
                                              const std::optional<double>& sgemm_rel_error) {
  if (median_us && !(std::isfinite(*median_us) && *median_us > 0))
    return fmt::format("a median time of {} us is not a positive finite time", *median_us);
  if (sgemm_rel_error && !(std::isfinite(*sgemm_rel_error) && *sgemm_rel_error >= 0))
    return fmt::format("an SGEMM error of {} is not a finite non-negative number",
                       *sgemm_rel_error);
  return std::nullopt;
}

std::optional<double> optional_real(const Statement& s, const char* column) {
  return s.is_null(column) ? std::nullopt : std::optional(s.real(column));
}

}  // namespace

std::vector<DeviceInfo> TuningDbReader::devices() {
  Statement s(db_.handle(), db_.path(), "read the devices",
              "SELECT id, name, arch, sm_count, l2_bytes, clock_khz, memory_clock_khz, "
              "driver_version FROM devices ORDER BY id");
  std::vector<DeviceInfo> out;
  while (s.step()) {
    if (!checks_.device_usable(s.integer("id"))) continue;
    DeviceInfo d;
    d.name = s.text("name");
    d.arch = s.text("arch");
    d.sm_count = int(s.integer("sm_count"));
    d.l2_bytes = s.integer("l2_bytes");
    d.clock_khz = int(s.integer("clock_khz"));
    d.memory_clock_khz = int(s.integer("memory_clock_khz"));
    d.driver_version = int(s.integer("driver_version"));
    out.push_back(std::move(d));
  }
  return out;
}

std::vector<DeviceCeiling> TuningDbReader::ceilings(const std::string& device_name,
                                                    const std::string& arch) {
  Statement s(db_.handle(), db_.path(), "read the device ceilings",
              "SELECT d.id AS device_id, d.name AS device_name, d.arch AS arch, c.kind AS kind, "
              "c.value AS value, c.source AS source, c.detail AS detail, "
              "c.measured_at AS measured_at FROM device_ceilings c "
              "JOIN devices d ON d.id = c.device_id "
              "WHERE (?1 = '' OR d.name = ?1) AND (?2 = '' OR d.arch = ?2) "
              "ORDER BY d.name, d.arch, c.kind");
  s.bind(1, device_name).bind(2, arch);
  std::vector<DeviceCeiling> out;
  while (s.step()) {
    const int64_t device_id = s.integer("device_id");
    const double value = s.real("value");
    if (!checks_.device_usable(device_id) ||
        !checks_.usable(
            fmt::format("device_ceilings row '{}' of devices row {}", s.text("kind"), device_id),
            std::isfinite(value) && value > 0
                ? std::nullopt
                : std::optional(fmt::format("{} is not a positive finite rate", value))))
      continue;
    DeviceCeiling c;
    c.device_name = s.text("device_name");
    c.arch = s.text("arch");
    c.kind = s.text("kind");
    c.value = value;
    c.source = printable(s.text("source"));
    c.detail = printable(s.text("detail"));
    c.measured_at = s.text("measured_at");
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<BestEntry> TuningDbReader::best_entries(const std::string& problem_key,
                                                    const std::string& device_name,
                                                    const std::string& arch) {
  Statement s(db_.handle(), db_.path(), "read the best trials",
              fmt::format("SELECT {}, {}, d.name AS device_name, d.arch AS arch, "
                          "kr.template_hash AS template_hash, c.median_us AS cublas_us, "
                          "(SELECT count(*) FROM trials a WHERE a.problem_id = bs.problem_id "
                          "AND a.device_id = bs.device_id) AS trial_count, "
                          "c.sgemm_rel_error AS sgemm_rel_error, d.id AS device_id, "
                          "t.problem_id AS trial_problem_id, t.device_id AS trial_device_id, "
                          "kr.library AS library "
                          "FROM best bs JOIN trials t ON t.id = bs.trial_id "
                          "JOIN problems p ON p.id = bs.problem_id "
                          "JOIN devices d ON d.id = bs.device_id "
                          "JOIN kernels kr ON kr.id = t.kernel_id "
                          "LEFT JOIN cublas_times c ON c.problem_id = bs.problem_id "
                          "AND c.device_id = bs.device_id "
                          "WHERE (?1 = '' OR p.key = ?1) AND (?2 = '' OR d.name = ?2) "
                          "AND (?3 = '' OR d.arch = ?3) "
                          "ORDER BY d.name, d.arch, p.dtype, p.layout, p.m, p.n, p.k, p.key",
                          kProblemColumns, kTrialColumns));
  s.bind(1, problem_key).bind(2, device_name).bind(3, arch);
  std::vector<BestEntry> out;
  SkippedRows skipped(db_.path(), "read the best trials");
  Statement own(db_.handle(), db_.path(), "read the fastest tgemm kernel",
                fmt::format("SELECT {}, kr.template_hash AS template_hash FROM trials t "
                            "JOIN kernels kr ON kr.id = t.kernel_id "
                            "WHERE t.problem_id = ?1 AND t.device_id = ?2 AND {} "
                            "AND kr.library = ?3 ORDER BY t.time_median_us, t.time_min_us, t.id",
                            kTrialColumns, measured_trials()));
  while (s.step()) {
    BestEntry e;
    if (!skipped.keep([&] {
          e.problem = problem_at(s);
          e.trial = trial_at(s);
        }))
      continue;
    e.measured_with = measured_with_at(s);
    e.config = e.trial.config;
    e.device_name = s.text("device_name");
    e.arch = s.text("arch");
    e.template_hash = s.text("template_hash");
    e.trial_count = s.integer("trial_count");
    const int64_t problem_id = s.integer("problem_id"), device_id = s.integer("device_id");
    const int64_t trial_id = s.integer("trial_id");
    std::optional<std::string> foreign;
    if (s.integer("trial_problem_id") != problem_id || s.integer("trial_device_id") != device_id)
      foreign = fmt::format("its trial, trials row {}, is another problem's or device's", trial_id);
    if (!checks_.usable(
            fmt::format("best row of problems row {} on devices row {}", problem_id, device_id),
            foreign) ||
        !checks_.trial_usable(trial_id, s.integer("kernel_id"), e.trial, device_id, e.arch))
      continue;
    const std::optional<double> cublas_us = optional_real(s, "cublas_us");
    const std::optional<double> sgemm_error = optional_real(s, "sgemm_rel_error");
    // A cuBLAS figure that is no measurement leaves the best without one.
    if (checks_.usable(fmt::format("cublas_times row of problems row {} on devices row {}",
                                   problem_id, device_id),
                       implausible_cublas(cublas_us, sgemm_error))) {
      e.cublas_median_us = cublas_us.value_or(0);
      e.cublas_rel_error = sgemm_error;
    }
    if (s.text("library") != kTgemmLibrary) add_own_best(own, problem_id, device_id, e, skipped);
    out.push_back(std::move(e));
  }
  return out;
}

void TuningDbReader::add_own_best(Statement& own, int64_t problem_id, int64_t device_id,
                                  BestEntry& e, SkippedRows& skipped) {
  own.reset();
  own.bind(1, problem_id).bind(2, device_id).bind(3, kTgemmLibrary);
  while (own.step()) {
    TrialResult trial;
    if (!skipped.keep([&] { trial = trial_at(own); }) ||
        !checks_.trial_usable(own.integer("trial_id"), own.integer("kernel_id"), trial, device_id,
                              e.arch))
      continue;
    e.tgemm_best = std::move(trial);
    e.tgemm_best_hash = own.text("template_hash");
    return;
  }
}

std::vector<TrialRecord> TuningDbReader::trials(const std::string& problem_key,
                                                const std::string& device_name) {
  Statement s(db_.handle(), db_.path(), "read the trials",
              fmt::format("SELECT {}, {}, d.name AS device_name, d.arch AS arch, "
                          "kr.template_hash AS template_hash, t.created_at AS created_at, "
                          "d.id AS device_id FROM trials t JOIN problems p ON p.id = t.problem_id "
                          "JOIN devices d ON d.id = t.device_id "
                          "JOIN kernels kr ON kr.id = t.kernel_id "
                          "WHERE (?1 = '' OR p.key = ?1) AND (?2 = '' OR d.name = ?2) "
                          "ORDER BY p.key, d.name, d.arch, t.status != 'ok', t.time_median_us, "
                          "kr.canonical_name",
                          kProblemColumns, kTrialColumns));
  s.bind(1, problem_key).bind(2, device_name);
  std::vector<TrialRecord> out;
  SkippedRows skipped(db_.path(), "read the trials");
  while (s.step()) {
    TrialRecord r;
    if (!skipped.keep([&] {
          r.problem = problem_at(s);
          r.trial = trial_at(s);
        }))
      continue;
    r.measured_with = measured_with_at(s);
    r.id = s.integer("trial_id");
    r.device_name = s.text("device_name");
    r.arch = s.text("arch");
    r.template_hash = s.text("template_hash");
    r.created_at = s.text("created_at");
    if (!checks_.trial_usable(r.id, s.integer("kernel_id"), r.trial, s.integer("device_id"),
                              r.arch))
      continue;
    out.push_back(std::move(r));
  }
  return out;
}

std::optional<BinaryRecord> TuningDbReader::find_binary_for(const KernelConfig& config,
                                                            const std::string& template_hash,
                                                            const Problem& variant,
                                                            const std::string& arch,
                                                            const std::string& nvrtc_version) {
  Statement s(
      db_.handle(), db_.path(), "look up a kernel's binary",
      fmt::format("SELECT {} FROM binaries b JOIN kernels kr ON kr.id = b.kernel_id "
                  "WHERE kr.template_hash = ?1 AND kr.canonical_name = ?2 "
                  "AND b.op_a = ?3 AND b.op_b = ?4 AND b.arch = ?5 "
                  "AND (?6 = '' OR b.nvrtc_version = ?6) AND b.types = ?7 AND b.batch_form = ?8 "
                  "AND b.epilogue = ?9 "
                  "AND b.status = 'ok' "
                  "AND b.cubin IS NOT NULL ORDER BY b.id DESC LIMIT 1",
                  kBinaryColumns));
  s.bind(1, template_hash).bind(2, config.canonical_name()).bind(3, to_string(variant.op_a));
  s.bind(4, to_string(variant.op_b)).bind(5, arch).bind(6, nvrtc_version);
  s.bind(7, variant.types.name()).bind(8, int(variant.batch_form()));
  s.bind(9, variant.epilogue.build().name());
  return s.step() ? checked_binary_at(s) : std::nullopt;
}

}  // namespace tgemm
