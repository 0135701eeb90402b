#include "db/trial_export.h"

#include <fmt/format.h>

#include "db/sqlite_statement.h"
#include "db/stored_rows.h"

namespace tgemm {

std::string TrialExport::readable_trial_ids() {
  std::string json = "[";
  for (const TrialRecord& t : reader_.trials())
    json += fmt::format("{}{}", json.size() > 1 ? "," : "", t.id);
  return json + "]";
}

TextTable TrialExport::trial_table() {
  Statement s(db_.handle(), db_.path(), "export the trials",
              "SELECT * FROM trial_details WHERE trial_id IN (SELECT value FROM json_each(?1)) "
              "ORDER BY trial_id");
  s.bind(1, readable_trial_ids());
  TextTable table;
  for (int c = 0; c < s.column_count(); ++c) table.columns.push_back(s.column_name(c));
  while (s.step()) {
    auto& row = table.rows.emplace_back();
    for (int c = 0; c < s.column_count(); ++c) row.push_back(s.cell(c));
  }
  return table;
}

std::string TrialExport::trial_table_json() {
  // SQLite writes the JSON (escaping, numbers); the keys are the trial_details columns. It
  // writes an infinity as Inf, which is no JSON: a figure that is not finite is null.
  const auto finite = [](const char* column) {
    return fmt::format("CASE WHEN {0} {1} THEN {0} END", column, kFiniteReal);
  };
  Statement s(db_.handle(), db_.path(), "export the trials as JSON",
              fmt::format("SELECT json_group_array(json_object("
                          "'trial_id', trial_id, 'device', device, 'arch', arch, "
                          "'problem_key', problem_key, 'dtype', dtype, 'layout', layout, "
                          "'m', m, 'n', n, 'k', k, 'lda', lda, 'ldb', ldb, 'ldc', ldc, "
                          "'beta_zero', beta_zero, 'template', template, "
                          "'template_hash', template_hash, 'kernel', kernel, 'params', params, "
                          "'status', status, 'error', error, 'min_us', {}, 'median_us', {}, "
                          "'max_us', {}, 'runs', runs, 'tflops', {}, 'max_rel_error', {}, "
                          "'registers', registers, 'smem_bytes', smem_bytes, 'cublas_us', {}, "
                          "'run_id', run_id, 'created_at', created_at)) AS json "
                          "FROM (SELECT * FROM trial_details WHERE trial_id IN "
                          "(SELECT value FROM json_each(?1)) ORDER BY trial_id)",
                          finite("min_us"), finite("median_us"), finite("max_us"), finite("tflops"),
                          finite("max_rel_error"), finite("cublas_us")));
  s.bind(1, readable_trial_ids());
  if (!s.step()) return "[]";
  std::string json = s.text("json");
  s.run();
  return json;
}

}  // namespace tgemm
