#include "db/trial_store.h"

#include <fmt/format.h>

#include "db/sqlite_statement.h"
#include "db/stored_rows.h"

namespace tgemm {

int64_t TrialStore::upsert_device(const DeviceInfo& d) {
  // The natural key keeps the id; clocks and versions follow the latest run (driver upgrades).
  Statement s(db_.handle(), db_.path(), "record a device",
              "INSERT INTO devices (name, arch, sm_count, l2_bytes, clock_khz, memory_clock_khz, "
              "driver_version, runtime_version, smem_per_block_optin, smem_per_sm, regs_per_sm, "
              "max_threads_per_block) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12) "
              "ON CONFLICT (name, arch, sm_count) DO UPDATE SET l2_bytes = excluded.l2_bytes, "
              "clock_khz = excluded.clock_khz, memory_clock_khz = excluded.memory_clock_khz, "
              "driver_version = excluded.driver_version, "
              "runtime_version = excluded.runtime_version, "
              "smem_per_block_optin = excluded.smem_per_block_optin, "
              "smem_per_sm = excluded.smem_per_sm, regs_per_sm = excluded.regs_per_sm, "
              "max_threads_per_block = excluded.max_threads_per_block RETURNING id");
  s.bind(1, d.name).bind(2, d.arch).bind(3, d.sm_count).bind(4, d.l2_bytes).bind(5, d.clock_khz);
  s.bind(6, d.memory_clock_khz).bind(7, d.driver_version).bind(8, d.runtime_version);
  s.bind(9, d.limits.smem_per_block_optin).bind(10, d.limits.smem_per_sm);
  s.bind(11, d.limits.regs_per_sm).bind(12, d.limits.max_threads_per_block);
  return s.single_int();
}

int64_t TrialStore::upsert_problem(const Problem& problem) {
  problem.validate();
  const std::string key = problem.key();
  {
    Statement find(db_.handle(), db_.path(), "look up a problem",
                   "SELECT id FROM problems WHERE key = ?1");
    find.bind(1, key);
    if (find.step()) return find.integer("id");
  }
  Statement s(
      db_.handle(), db_.path(), "record a problem",
      "INSERT INTO problems (key, dtype, layout, m, n, k, lda, ldb, ldc, align_a, "
      "align_b, align_c, beta_zero, batch, batch_pointers, stride_a, stride_b, stride_c, "
      "epilogue) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, "
      "?16, ?17, ?18, ?19) ON CONFLICT (key) DO UPDATE SET key = problems.key RETURNING id");
  s.bind(1, key).bind(2, problem.types.name()).bind(3, problem.layout());
  s.bind(4, problem.m).bind(5, problem.n).bind(6, problem.k);
  s.bind(7, problem.lda).bind(8, problem.ldb).bind(9, problem.ldc);
  s.bind(10, problem.align_a).bind(11, problem.align_b).bind(12, problem.align_c);
  s.bind(13, problem.beta_zero);
  s.bind(14, problem.batch).bind(15, problem.batch_pointers);
  s.bind(16, problem.stride_a).bind(17, problem.stride_b).bind(18, problem.stride_c);
  s.bind(19, problem.epilogue.name());
  return s.single_int();
}

bool TrialStore::has_trial(int64_t problem_id, int64_t kernel_id, int64_t device_id) {
  return trial_measured_with(problem_id, kernel_id, device_id).has_value();
}

std::optional<MeasuredWith> TrialStore::trial_measured_with(int64_t problem_id, int64_t kernel_id,
                                                            int64_t device_id) {
  Statement s(db_.handle(), db_.path(), "look up a trial",
              "SELECT nvrtc_version, driver_version FROM trials WHERE problem_id = ?1 AND "
              "kernel_id = ?2 AND device_id = ?3");
  s.bind(1, problem_id).bind(2, kernel_id).bind(3, device_id);
  if (!s.step()) return std::nullopt;
  return measured_with_at(s);
}

int64_t TrialStore::record_trial(int64_t run_id, int64_t problem_id, int64_t kernel_id,
                                 int64_t device_id, std::optional<int64_t> binary_id,
                                 const TrialResult& trial, const MeasuredWith& with) {
  Statement s(db_.handle(), db_.path(), "record a trial",
              "INSERT INTO trials (run_id, problem_id, kernel_id, device_id, binary_id, status, "
              "error, time_min_us, time_median_us, time_max_us, runs, tflops, max_rel_error, "
              "nvrtc_version, driver_version) "
              "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15) "
              "ON CONFLICT (problem_id, kernel_id, device_id) DO UPDATE SET "
              "run_id = excluded.run_id, binary_id = excluded.binary_id, status = excluded.status, "
              "error = excluded.error, time_min_us = excluded.time_min_us, "
              "time_median_us = excluded.time_median_us, time_max_us = excluded.time_max_us, "
              "runs = excluded.runs, tflops = excluded.tflops, "
              "max_rel_error = excluded.max_rel_error, nvrtc_version = excluded.nvrtc_version, "
              "driver_version = excluded.driver_version, created_at = excluded.created_at "
              "RETURNING id");
  s.bind_run(1, run_id).bind(2, problem_id).bind(3, kernel_id).bind(4, device_id);
  s.bind(5, binary_id).bind(6, to_string(trial.status)).bind(7, trial.error);
  s.bind(8, trial.time_min_us).bind(9, trial.time_median_us).bind(10, trial.time_max_us);
  s.bind(11, trial.runs).bind(12, trial.tflops).bind(13, trial.max_rel_error);
  s.bind_or_null(14, with.nvrtc_version);
  if (with.driver_version == 0)
    s.bind_null(15);
  else
    s.bind(15, with.driver_version);
  return s.single_int();
}

void TrialStore::record_cublas_time(int64_t run_id, int64_t problem_id, int64_t device_id,
                                    double median_us, std::optional<double> sgemm_rel_error) {
  // A time without an error (a comparison run) keeps the error measured before.
  Statement s(db_.handle(), db_.path(), "record a cuBLAS time",
              "INSERT INTO cublas_times (problem_id, device_id, run_id, median_us, "
              "sgemm_rel_error) VALUES (?1, ?2, ?3, ?4, ?5) ON CONFLICT (problem_id, device_id) "
              "DO UPDATE SET run_id = excluded.run_id, median_us = excluded.median_us, "
              "sgemm_rel_error = coalesce(excluded.sgemm_rel_error, "
              "cublas_times.sgemm_rel_error), measured_at = excluded.measured_at");
  s.bind(1, problem_id).bind(2, device_id).bind_run(3, run_id).bind(4, median_us);
  s.bind(5, sgemm_rel_error).run();
}

void TrialStore::update_best(int64_t problem_id, int64_t device_id, const CurrentBuild* current) {
  // The fastest ok trial (one without a time is not a measurement), skipping stale ones when
  // `current` says what is current. Replacing or deleting the row are single statements, so
  // a reader never sees a wrong best.
  Statement ranked(db_.handle(), db_.path(), "update the best trial",
                   fmt::format("SELECT t.id AS trial_id, kr.template AS template, "
                               "kr.template_hash AS template_hash, t.nvrtc_version AS "
                               "nvrtc_version, t.driver_version AS driver_version FROM trials t "
                               "JOIN kernels kr ON kr.id = t.kernel_id WHERE t.problem_id = ?1 "
                               "AND t.device_id = ?2 AND {} "
                               "ORDER BY t.time_median_us, t.time_min_us, t.id",
                               measured_trials()));
  ranked.bind(1, problem_id).bind(2, device_id);
  std::optional<int64_t> best;
  while (!best && ranked.step())
    if (!current || !current->stale_reason(ranked.text("template"), ranked.text("template_hash"),
                                           measured_with_at(ranked)))
      best = ranked.integer("trial_id");
  if (best) {
    Statement pick(db_.handle(), db_.path(), "update the best trial",
                   "INSERT OR REPLACE INTO best (problem_id, device_id, trial_id) "
                   "VALUES (?1, ?2, ?3)");
    pick.bind(1, problem_id).bind(2, device_id).bind(3, *best).run();
  } else {
    Statement drop(db_.handle(), db_.path(), "update the best trial",
                   "DELETE FROM best WHERE problem_id = ?1 AND device_id = ?2");
    drop.bind(1, problem_id).bind(2, device_id).run();
  }
}

}  // namespace tgemm
