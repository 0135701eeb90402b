// Tuned databases of real H200 runs, unpacked for a test: those kept for the tests in
// tests/data/databases, and the shipped ones of benchmarks/.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "tests/common/temp_dir.h"

namespace tgemm::testing {

// `folder`/<gz> (relative to the source tree) unpacked into `dir` as its name without .gz.
inline std::string unpack_database(const TempDir& dir, const std::string& folder,
                                   const std::string& gz) {
  const std::string path = dir.file(gz.substr(0, gz.size() - 3));
  const std::string command =
      std::string("gzip -dc '") + TGEMM_SOURCE_DIR + "/" + folder + "/" + gz + "' > '" + path + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return path;
}

// tests/data/databases/tf32_direct_h200_s9a.db.gz: an H200's TF32 run (5 problems, 435 trials,
// 87 gemm_wgmma kernels, 2 cubins, 5 device ceilings), 340 kB unpacked.
inline std::string unpack_tuned_database(const TempDir& dir) {
  return unpack_database(dir, "tests/data/databases", "tf32_direct_h200_s9a.db.gz");
}

// tests/data/databases/<gz>.
inline std::string unpack_result_database(const TempDir& dir, const std::string& gz) {
  return unpack_database(dir, "tests/data/databases", gz);
}

}  // namespace tgemm::testing
