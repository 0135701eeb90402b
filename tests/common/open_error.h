// What opening a tuning database says when it refuses the file ("" when it opens).
#pragma once

#include <string>

#include "db/tuning_db.h"
#include "src/core/error.h"

namespace tgemm::testing {

inline std::string open_error(const std::string& path, TuningDb::Mode mode) {
  try {
    TuningDb db(path, mode);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

}  // namespace tgemm::testing
