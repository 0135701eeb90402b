// tgemm-db report: the HTML page built from the kept H200 databases (session 3's older schema
// and session 4's schema 4) and from a fixture with two devices, f32 and f16 problems and
// stored ceilings. Points, bars, roofs and figures are read back and compared with the rows;
// headless Chromium renders the page at a phone and a wide size.
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <regex>
#include <string>
#include <vector>

#include "db/tuning_db.h"
#include "src/core/device_ceiling.h"
#include "tests/cli/cli_runner.h"
#include "tests/common/devices.h"
#include "tests/common/result_databases.h"
#include "tests/common/sgemm_configs.h"

namespace tgemm {
namespace {

using testing::query_int;
using testing::read_bytes;
using testing::run_tool;
using testing::TempDir;
using testing::unpack_result_database;

size_t count_of(const std::string& text, const std::string& needle) {
  size_t n = 0;
  for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + 1)) ++n;
  return n;
}

// Every row of a query as text cells.
std::vector<std::vector<std::string>> query_rows(const std::string& path, const std::string& sql) {
  std::vector<std::vector<std::string>> out;
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
    sqlite3_stmt* stmt = nullptr;
    if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK)
      ADD_FAILURE() << sql << ": " << sqlite3_errmsg(db);
    while (stmt && sqlite3_step(stmt) == SQLITE_ROW) {
      auto& row = out.emplace_back();
      for (int c = 0; c < sqlite3_column_count(stmt); ++c) {
        const auto* text = reinterpret_cast<const char*>(sqlite3_column_text(stmt, c));
        row.push_back(text ? text : "NULL");
      }
    }
    sqlite3_finalize(stmt);
  }
  sqlite3_close(db);
  return out;
}

std::string report_of(const std::string& db, const std::string& out) {
  auto r = run_tool("tgemm-db", "--db " + db + " report --out " + out);
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return read_bytes(out);
}

TrialResult trial(const std::string& name, TrialStatus status, double us, const Problem& p) {
  TrialResult t;
  t.config = testing::labelled_sgemm_config(int64_t(std::hash<std::string>{}(name) % 100000) + 1);
  t.status = status;
  if (status != TrialStatus::ok) t.error = name + " failed: see the log";
  t.time_min_us = t.time_median_us = t.time_max_us = status == TrialStatus::ok ? us : 0;
  t.runs = 10;
  t.tflops = status == TrialStatus::ok ? p.flops() / us * 1e-6 : 0;
  return t;
}

DeviceInfo device(const std::string& name, const std::string& arch, int sms) {
  DeviceInfo d = testing::device(name, arch, sms);
  d.l2_bytes = 50 << 20;
  d.clock_khz = 1980000;
  return d;
}

// Two devices, f32 and f16 problems, three ok trials and one failure each; ceilings stored for
// the first device only.
void build_fixture(const std::string& path) {
  TuningDb db(path, TuningDb::Mode::read_write);
  const int64_t run = db.begin_run("fixture", "tgemm test", "sm_90");
  const std::vector<Problem> problems = {
      Problem::packed(gemm_types("f32"), Op::N, Op::N, 1024, 1024, 1024),
      Problem::packed(gemm_types("f32"), Op::N, Op::N, 4096, 4096, 4096),
      Problem::packed(gemm_types("f16"), Op::N, Op::N, 4096, 4096, 4096),
      Problem::packed(gemm_types("f16"), Op::T, Op::N, 8192, 1024, 512)};
  int salt = 0;
  for (const DeviceInfo& d :
       {device("NVIDIA H200", "sm_90", 132), device("NVIDIA A100-SXM4-80GB", "sm_80", 108)}) {
    const int64_t dev = db.upsert_device(d);
    for (const Problem& p : problems) {
      const int64_t pid = db.upsert_problem(p);
      const double base_us = p.flops() / (p.types.name() == "f16" ? 4e14 : 4e13) * 1e6;
      int i = 0;
      for (auto [status, factor] : {std::pair{TrialStatus::ok, 1.0},
                                    {TrialStatus::ok, 1.5},
                                    {TrialStatus::ok, 3.0},
                                    {TrialStatus::wrong_result, 0.0}}) {
        const std::string name = "k" + std::to_string(i++) + "_" + std::to_string(salt);
        const TrialResult t = trial(name, status, base_us * factor * (1 + 0.1 * salt), p);
        db.record_trial(run, pid, db.upsert_kernel(t.config, "hash"), dev, std::nullopt, t);
      }
      db.update_best(pid, dev);
      db.record_cublas_time(run, pid, dev, base_us * 1.1);
      ++salt;
    }
    if (d.arch == "sm_90")
      db.store_ceilings(run, dev,
                        {{kCopyBandwidthCeiling, 4.0e12, "cudaMemcpyAsync", "1 GiB"},
                         {kFfmaCeiling, 5.2e13, "nvrtc_ffma_kernel", "132 x 1024 x 4096"},
                         {"f16", 7.1e14, "cublasGemmEx", "8192^3"},
                         {"bf16", 7.2e14, "cublasGemmEx", "8192^3"},
                         {"tf32", 3.6e14, "cublasGemmEx", "8192^3"}});
  }
  db.finish_run(run, "fixture");
}

// One roofline point per tuned problem per contender, each at the stored best's TFLOP/s.
void expect_points_match_rows(const std::string& db, const std::string& html) {
  EXPECT_EQ(int64_t(count_of(html, "class=\"pt pt-tgemm\"")),
            query_int(db,
                      "select count(*) from best b join trials t on t.id = b.trial_id "
                      "where t.tflops > 0"));
  EXPECT_EQ(int64_t(count_of(html, "class=\"pt pt-cublas\"")),
            query_int(db,
                      "select count(*) from best b join cublas_times c using "
                      "(problem_id, device_id)"));
  EXPECT_EQ(int64_t(count_of(html, "ratio-bar")),
            query_int(db,
                      "select count(*) from best b join cublas_times c using "
                      "(problem_id, device_id)"));
  const auto rows = query_rows(db,
                               "select problem_key, printf('%.2f', tflops), "
                               "printf('%.3f', vs_cublas) from best_kernels");
  ASSERT_FALSE(rows.empty());
  for (const auto& row : rows) {
    EXPECT_NE(html.find("class=\"pt pt-tgemm\" data-key=\"" + row[0] + "\" data-tflops=\"" +
                        row[1] + "\""),
              std::string::npos)
        << row[0];
    if (row[2] != "NULL") {
      EXPECT_NE(html.find("<span class=\"bar-value\">" + row[2] + "</span>"), std::string::npos)
          << row[0] << " " << row[2];
    }
  }
}

TEST(HtmlReportCli, session_3_database_places_every_tuned_problem) {
  TempDir dir{"report_s3"};
  const std::string db = unpack_result_database(dir, "square_deepbench_h200_s3.db.gz");
  const std::string html = report_of(db, dir.file("r.html"));
  expect_points_match_rows(db, html);
  EXPECT_NE(html.find("No measured ceilings are stored"), std::string::npos);
  EXPECT_EQ(count_of(html, "class=\"roof\""), 0u);
  // The 4096^3 best, as explain reads it: 127 registers, 2 blocks per SM, 3.88 waves.
  EXPECT_NE(html.find("<td>127</td><td>"), std::string::npos);
  EXPECT_NE(html.find("<td>registers</td><td>3.88</td>"), std::string::npos);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("http://"), std::string::npos);
  EXPECT_EQ(html.find("https://"), std::string::npos);
}

TEST(HtmlReportCli, session_4_database_places_every_tuned_problem) {
  TempDir dir{"report_s4"};
  const std::string db = unpack_result_database(dir, "fp32_h200_s4.db.gz");
  const std::string html = report_of(db, dir.file("r.html"));
  expect_points_match_rows(db, html);
  EXPECT_EQ(int64_t(count_of(html, "class=\"fail-row\"")),
            query_int(db, "select count(distinct status) from trials where status != 'ok'"));
}

TEST(HtmlReportCli, fixture_with_two_devices_shows_the_stored_roofs) {
  TempDir dir{"report_fixture"};
  const std::string db = dir.file("fixture.db");
  build_fixture(db);
  const std::string html = report_of(db, dir.file("r.html"));
  expect_points_match_rows(db, html);
  EXPECT_EQ(count_of(html, "<article class=\"device\">"), 2u);
  EXPECT_EQ(count_of(html, "No measured ceilings are stored"), 1u);  // the A100 has none
  EXPECT_NE(html.find(">f16 (2)</li>"), std::string::npos);          // per device legend
  EXPECT_NE(html.find(">f32 (2)</li>"), std::string::npos);
  // The roofs are the stored compute ceilings, at the stored values.
  const auto stored = query_rows(db,
                                 "select kind, value from device_ceilings where kind != "
                                 "'copy_bandwidth' order by kind");
  ASSERT_EQ(stored.size(), 4u);
  EXPECT_EQ(count_of(html, "class=\"roof\""), stored.size());
  for (const auto& row : stored) {
    const std::regex roof("class=\"roof\" data-kind=\"" + row[0] + "\" data-value=\"([^\"]+)\"");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(html, m, roof)) << row[0];
    EXPECT_NEAR(std::stod(m[1]), std::stod(row[1]), 1e-6 * std::stod(row[1])) << row[0];
  }
  EXPECT_EQ(count_of(html, "class=\"fail-row\" data-status=\"wrong_result\""), 2u);
  EXPECT_EQ(count_of(html, "class=\"spread-row\""), 8u);
  auto listed = run_tool("tgemm-db", "--db " + db + " ceilings");
  EXPECT_EQ(listed.exit_code, 0) << listed.output;
  EXPECT_NE(listed.output.find("4000.00  GB/s"), std::string::npos) << listed.output;
  EXPECT_NE(listed.output.find("nvrtc_ffma_kernel"), std::string::npos) << listed.output;
}

TEST(HtmlReportCli, bad_arguments_are_named) {
  TempDir dir{"report_args"};
  const std::string db = dir.file("fixture.db");
  build_fixture(db);
  auto top =
      run_tool("tgemm-db", "--db " + db + " report --out " + dir.file("r.html") + " --top 0");
  EXPECT_NE(top.exit_code, 0);
  EXPECT_NE(top.output.find("--top must be from 1 to 100"), std::string::npos) << top.output;
  auto folder = run_tool("tgemm-db", "--db " + db + " report --out " + dir.file("no/such/r.html"));
  EXPECT_NE(folder.exit_code, 0);
  EXPECT_NE(folder.output.find("cannot write report file"), std::string::npos) << folder.output;
}

// Renders the page in headless Chromium; the PNGs stay in the build folder as artifacts.
TEST(HtmlReportCli, renders_in_chromium_at_phone_and_wide_sizes) {
  if (std::system("command -v chromium >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "chromium is not installed (scripts/setup.sh installs it)";
  TempDir dir{"report_chromium"};
  const std::string db = dir.file("fixture.db");
  build_fixture(db);
  const std::string html_path = dir.file("report.html");
  report_of(db, html_path);
  const std::string artifacts = std::string(TGEMM_BINARY_DIR) + "/test-artifacts";
  std::filesystem::create_directories(artifacts);
  for (auto [name, size] : {std::pair{"phone", "390,844"}, {"wide", "1400,1000"}}) {
    const std::string png = artifacts + "/report_" + name + ".png";
    const std::string log = dir.file(std::string(name) + ".log");
    std::filesystem::remove(png);
    const std::string command =
        "timeout 60 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars "
        "--user-data-dir=" +
        dir.file(std::string("profile_") + name) +
        " --enable-logging=stderr --v=0 --screenshot=" + png + " --window-size=" + size +
        " file://" + std::filesystem::absolute(html_path).string() + " >" + log + " 2>&1";
    EXPECT_EQ(std::system(command.c_str()), 0) << command << "\n" << read_bytes(log);
    ASSERT_TRUE(std::filesystem::exists(png)) << read_bytes(log);
    EXPECT_GT(std::filesystem::file_size(png), 20000u) << png;  // more than a blank page
    const std::string output = read_bytes(log);
    EXPECT_EQ(output.find(":CONSOLE"), std::string::npos) << output;
    EXPECT_EQ(output.find("Uncaught"), std::string::npos) << output;
  }
}

}  // namespace
}  // namespace tgemm
