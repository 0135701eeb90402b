// TrialExport: every readable trial joined with its problem, kernel and device (the
// trial_details view), for tgemm-db export as CSV or JSON.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "db/db_connection.h"
#include "db/tuning_db_reader.h"

namespace tgemm {

// Named columns of text cells; nullopt is SQL NULL (an export keeps the difference).
struct TextTable {
  std::vector<std::string> columns;
  std::vector<std::vector<std::optional<std::string>>> rows;
};

class TrialExport {
 public:
  TrialExport(DbConnection& db, TuningDbReader& reader) : db_(db), reader_(reader) {}

  // The trials the reader hands out (the others are named in its warning), as table cells and
  // as a JSON array of objects with the same keys.
  TextTable trial_table();
  std::string trial_table_json();

 private:
  // The ids of the readable trials as a JSON array, for "IN (SELECT value FROM json_each(?))".
  std::string readable_trial_ids();

  DbConnection& db_;
  TuningDbReader& reader_;
};

}  // namespace tgemm
