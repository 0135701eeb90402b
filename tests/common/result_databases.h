// The tuned databases kept in notes/results (real H200 runs), unpacked for a test.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tests/common/temp_dir.h"

namespace tgemm::testing {

// notes/results/<gz> unpacked into `dir` (its name without .gz); returns its path.
inline std::string unpack_result_database(const TempDir& dir, const std::string& gz) {
  const std::string path = dir.file(gz.substr(0, gz.size() - 3));
  const std::string command =
      std::string("gzip -dc '") + TGEMM_SOURCE_DIR + "/notes/results/" + gz + "' > '" + path + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return path;
}

}  // namespace tgemm::testing
