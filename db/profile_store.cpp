#include "db/profile_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <utility>

#include "db/sqlite_statement.h"

namespace tgemm {

namespace {

// The metric columns of kernel_profiles and the KernelProfile member each one holds.
const std::pair<const char*, std::optional<double> KernelProfile::*> kProfileMetrics[] = {
    {"duration_us", &KernelProfile::duration_us},
    {"sm_throughput_pct", &KernelProfile::sm_throughput_pct},
    {"memory_throughput_pct", &KernelProfile::memory_throughput_pct},
    {"dram_read_bytes", &KernelProfile::dram_read_bytes},
    {"dram_write_bytes", &KernelProfile::dram_write_bytes},
    {"global_load_sectors", &KernelProfile::global_load_sectors},
    {"global_load_requests", &KernelProfile::global_load_requests},
    {"global_store_sectors", &KernelProfile::global_store_sectors},
    {"global_excess_sectors", &KernelProfile::global_excess_sectors},
    {"shared_load_bank_conflicts", &KernelProfile::shared_load_bank_conflicts},
    {"shared_store_bank_conflicts", &KernelProfile::shared_store_bank_conflicts},
    {"achieved_occupancy_pct", &KernelProfile::achieved_occupancy_pct},
    {"fma_pipe_pct", &KernelProfile::fma_pipe_pct},
    {"tensor_pipe_pct", &KernelProfile::tensor_pipe_pct},
    {"registers", &KernelProfile::registers},
};

// The metric columns joined by ", "; `select`: each as "x.<name> AS <name>" of alias x.
std::string metric_columns(bool select) {
  std::string out;
  for (const auto& [column, member] : kProfileMetrics)
    out += (out.empty() ? "" : ", ") +
           (select ? fmt::format("x.{0} AS {0}", column) : std::string(column));
  return out;
}

std::string stalls_text(const std::vector<StallReason>& stalls) {
  std::string out;
  for (const StallReason& s : stalls)
    out += fmt::format("{}{}={:.6g}", out.empty() ? "" : ";", s.name, s.value);
  return out;
}

std::vector<StallReason> parse_stalls(const std::string& text) {
  std::vector<StallReason> out;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find(';', at), text.size());
    const std::string pair = text.substr(at, end - at);
    const size_t eq = pair.find('=');
    if (eq == std::string::npos) fail("stall reason '{}' is not name=value", pair);
    char* stop = nullptr;
    const double value = std::strtod(pair.c_str() + eq + 1, &stop);
    if (stop == pair.c_str() + eq + 1) fail("stall reason '{}' has no number", pair);
    out.push_back({pair.substr(0, eq), value});
    at = end + 1;
  }
  return out;
}

}  // namespace

void ProfileStore::store_ceilings(int64_t run_id, int64_t device_id,
                                  const std::vector<DeviceCeiling>& ceilings) {
  for (const DeviceCeiling& c : ceilings) {
    if (!(c.value > 0))
      fail("cannot store device ceiling '{}' of {}: it must be positive", c.kind, c.value);
    Statement s(db_.handle(), db_.path(), "store a device ceiling",
                "INSERT INTO device_ceilings (device_id, kind, value, source, detail, run_id) "
                "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (device_id, kind) DO UPDATE SET "
                "value = excluded.value, source = excluded.source, detail = excluded.detail, "
                "run_id = excluded.run_id, measured_at = excluded.measured_at");
    s.bind(1, device_id).bind(2, c.kind).bind(3, c.value).bind(4, c.source).bind(5, c.detail);
    s.bind_run(6, run_id).run();
  }
}

bool ProfileStore::has_ceilings(int64_t device_id) {
  Statement s(db_.handle(), db_.path(), "look up the device ceilings",
              "SELECT 1 FROM device_ceilings WHERE device_id = ?1 LIMIT 1");
  s.bind(1, device_id);
  return s.step();
}

void ProfileStore::store_profiles(int64_t problem_id, int64_t device_id,
                                  const std::vector<KernelProfile>& profiles) {
  in_transaction(db_, [&] {
    Statement(db_.handle(), db_.path(), "replace the kernel profiles",
              "DELETE FROM kernel_profiles WHERE problem_id = ?1 AND device_id = ?2")
        .bind(1, problem_id)
        .bind(2, device_id)
        .run();
    for (const KernelProfile& p : profiles) {
      if (p.contender != kTgemmContender && p.contender != kCublasContender)
        fail("cannot store a kernel profile of '{}' (expected {} or {})", p.contender,
             kTgemmContender, kCublasContender);
      Statement s(db_.handle(), db_.path(), "store a kernel profile",
                  fmt::format("INSERT INTO kernel_profiles (problem_id, device_id, contender, "
                              "config, kernel_name, ncu_version, stall_reasons, {}) VALUES (?1, "
                              "?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, "
                              "?17, ?18, ?19, ?20, ?21, ?22)",
                              metric_columns(false)));
      s.bind(1, problem_id).bind(2, device_id).bind(3, p.contender).bind(4, p.config);
      s.bind(5, p.kernel_name).bind(6, p.ncu_version).bind(7, stalls_text(p.stalls));
      int index = 8;
      for (const auto& [column, member] : kProfileMetrics) s.bind(index++, p.*member);
      s.run();
    }
  });
}

std::vector<KernelProfile> ProfileStore::profiles(const std::string& device_name,
                                                  const std::string& arch) {
  Statement s(db_.handle(), db_.path(), "read the kernel profiles",
              fmt::format("SELECT x.rowid AS profile_id, p.key AS problem_key, d.name AS "
                          "device_name, d.arch AS arch, x.contender AS contender, x.config AS "
                          "config, x.kernel_name AS kernel_name, x.ncu_version AS ncu_version, "
                          "x.stall_reasons AS stall_reasons, x.profiled_at AS profiled_at, {} "
                          "FROM kernel_profiles x JOIN problems p ON p.id = x.problem_id JOIN "
                          "devices d ON d.id = x.device_id WHERE (?1 = '' OR d.name = ?1) AND "
                          "(?2 = '' OR d.arch = ?2) ORDER BY d.name, d.arch, p.key, "
                          "x.contender = 'cublas'",
                          metric_columns(true)));
  s.bind(1, device_name).bind(2, arch);
  std::vector<KernelProfile> out;
  SkippedRows skipped(db_.path(), "read the kernel profiles");
  while (s.step()) {
    KernelProfile p;
    const int64_t id = s.integer("profile_id");
    p.contender = s.text("contender");
    if (!skipped.keep([&] {
          p.stalls = decoded(s, "kernel_profiles", id, "stall_reasons",
                             [&] { return parse_stalls(s.text("stall_reasons")); });
          if (p.contender != kTgemmContender && p.contender != kCublasContender)
            bad_row(s, "kernel_profiles", id, "contender",
                    fmt::format("'{}' is neither {} nor {}", p.contender, kTgemmContender,
                                kCublasContender));
        }))
      continue;
    p.problem_key = s.text("problem_key");
    p.device_name = s.text("device_name");
    p.arch = s.text("arch");
    p.config = s.text("config");
    p.kernel_name = s.text("kernel_name");
    p.ncu_version = s.text("ncu_version");
    p.profiled_at = s.text("profiled_at");
    for (const auto& [column, member] : kProfileMetrics)
      if (!s.is_null(column)) p.*member = s.real(column);
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace tgemm
