// The schema 5 device_ceilings table: a kept schema-4 database (session 4 on the H200)
// migrates with nothing lost, a reader of it sees no ceilings without writing the file,
// ceilings store once per (device, kind), and a merge carries them.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "db/tuning_db.h"
#include "src/core/error.h"
#include "tests/cli/cli_runner.h"

namespace tgemm {
namespace {

using testing::query_int;
using testing::read_bytes;
using testing::TempDir;

const char* const kTables[] = {"runs",     "devices", "kernels", "binaries",
                               "problems", "trials",  "best",    "cublas_times"};

std::string unpack_session_4(const TempDir& dir) {
  const std::string path = dir.file("s4.db");
  const std::string command = std::string("gzip -dc '") + TGEMM_SOURCE_DIR +
                              "/tests/data/databases/fp32_h200_s4.db.gz' > '" + path + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return path;
}

std::vector<DeviceCeiling> h200_ceilings() {
  return {{kCopyBandwidthCeiling, 4.1e12, "cudaMemcpyAsync", "1 GiB, median of 20"},
          {kFfmaCeiling, 5.1e13, "nvrtc_ffma_kernel", "ffma"},
          {"f16", 7.0e14, "cublasGemmEx", "8192^3"}};
}

TEST(DeviceCeilingsDb, schema_4_file_migrates_to_5_with_nothing_lost) {
  TempDir dir{"ceilings_migrate"};
  const std::string path = unpack_session_4(dir);
  ASSERT_EQ(query_int(path, "PRAGMA user_version"), 4);
  std::vector<int64_t> before;
  for (const char* t : kTables)
    before.push_back(query_int(path, std::string("select count(*) from ") + t));
  const int64_t cubins = query_int(path, "select sum(length(cubin)) from binaries");
  {
    TuningDb db(path, TuningDb::Mode::read_write);
    EXPECT_TRUE(db.ceilings().empty());
  }
  EXPECT_EQ(query_int(path, "PRAGMA user_version"), TuningDb::schema_version());
  // Schema 6: trials measured before it have no recorded NVRTC or driver (not known).
  EXPECT_EQ(query_int(path,
                      "select count(*) from trials where nvrtc_version is not null or "
                      "driver_version is not null"),
            0);
  for (size_t i = 0; i < std::size(kTables); ++i)
    EXPECT_EQ(query_int(path, std::string("select count(*) from ") + kTables[i]), before[i])
        << kTables[i];
  EXPECT_EQ(query_int(path, "select sum(length(cubin)) from binaries"), cubins);
  EXPECT_EQ(query_int(path, "select count(*) from device_ceilings"), 0);
}

TEST(DeviceCeilingsDb, reader_of_schema_4_sees_no_ceilings_and_never_writes) {
  TempDir dir{"ceilings_reader"};
  const std::string path = unpack_session_4(dir);
  const std::string bytes = read_bytes(path);
  {
    TuningDb db(path, TuningDb::Mode::read_only);
    EXPECT_TRUE(db.ceilings().empty());
    EXPECT_FALSE(db.devices().empty());
  }
  EXPECT_EQ(read_bytes(path), bytes);
}

TEST(DeviceCeilingsDb, ceilings_are_stored_once_per_device_and_kind) {
  TempDir dir{"ceilings_store"};
  TuningDb db(dir.file("t.db"), TuningDb::Mode::read_write);
  DeviceInfo h200;
  h200.name = "NVIDIA H200";
  h200.arch = "sm_90";
  h200.sm_count = 132;
  const int64_t device = db.upsert_device(h200);
  EXPECT_FALSE(db.has_ceilings(device));
  db.store_ceilings(0, device, h200_ceilings());
  EXPECT_TRUE(db.has_ceilings(device));
  auto again = h200_ceilings();
  again[1].value = 5.3e13;
  db.store_ceilings(0, device, again);
  const auto stored = db.ceilings("NVIDIA H200");
  ASSERT_EQ(stored.size(), 3u);
  for (const DeviceCeiling& c : stored) {
    EXPECT_EQ(c.device_name, "NVIDIA H200");
    EXPECT_EQ(c.arch, "sm_90");
    EXPECT_FALSE(c.measured_at.empty());
    if (c.kind == kFfmaCeiling) {
      EXPECT_EQ(c.value, 5.3e13);
    }
  }
  EXPECT_TRUE(db.ceilings("Other GPU").empty());
  try {
    db.store_ceilings(0, device, {{"f16", 0.0, "cublasGemmEx", ""}});
    FAIL() << "a zero ceiling was stored";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("must be positive"), std::string::npos) << e.what();
  }
}

TEST(DeviceCeilingsDb, merge_carries_the_other_files_ceilings) {
  TempDir dir{"ceilings_merge"};
  const std::string a = dir.file("a.db"), b = dir.file("b.db");
  DeviceInfo h200;
  h200.name = "NVIDIA H200";
  h200.arch = "sm_90";
  h200.sm_count = 132;
  {
    TuningDb other(b, TuningDb::Mode::read_write);
    other.store_ceilings(0, other.upsert_device(h200), h200_ceilings());
  }
  TuningDb db(a, TuningDb::Mode::read_write);
  const MergeCounts counts = db.merge_from(b);
  EXPECT_EQ(counts.ceilings, 3);
  EXPECT_EQ(db.ceilings().size(), 3u);
  EXPECT_EQ(db.merge_from(b).ceilings, 0);  // this file's are kept
}

}  // namespace
}  // namespace tgemm
