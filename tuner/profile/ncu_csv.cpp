#include "tuner/profile/ncu_csv.h"

#include <algorithm>
#include <cstdlib>
#include <regex>
#include <sstream>

#include "src/core/error.h"

namespace tgemm {
namespace {

constexpr const char* kStallPrefix = "smsp__average_warps_issue_stalled_";
constexpr const char* kStallSuffix = "_per_issue_active.ratio";

// The cells of one CSV line (RFC 4180 quoting, "" inside quotes); nullopt for an open quote.
std::optional<std::vector<std::string>> csv_cells(const std::string& line) {
  std::vector<std::string> cells(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted) {
      if (c != '"') {
        cells.back() += c;
      } else if (i + 1 < line.size() && line[i + 1] == '"') {
        cells.back() += '"';
        ++i;
      } else {
        quoted = false;
      }
    } else if (c == '"') {
      quoted = true;
    } else if (c == ',') {
      cells.emplace_back();
    } else if (c != '\r') {
      cells.back() += c;
    }
  }
  if (quoted) return std::nullopt;
  return cells;
}

// Factor from a unit as ncu prints it to the base unit of its kind (byte, nanosecond).
double unit_scale(const std::string& unit) {
  static const std::map<std::string, double> kScales = {
      {"byte", 1},      {"Kbyte", 1e3},     {"Mbyte", 1e6},        {"Gbyte", 1e9},
      {"Tbyte", 1e12},  {"Kibyte", 1024.0}, {"Mibyte", 1048576.0}, {"Gibyte", 1073741824.0},
      {"nsecond", 1},   {"usecond", 1e3},   {"msecond", 1e6},      {"second", 1e9},
      {"Ksector", 1e3}, {"Msector", 1e6},   {"Gsector", 1e9},      {"Kinst", 1e3},
      {"Minst", 1e6},   {"Ginst", 1e9},     {"Kcycle", 1e3},       {"Mcycle", 1e6},
      {"Gcycle", 1e9}};
  const auto it = kScales.find(unit);
  return it == kScales.end() ? 1.0 : it->second;
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

}  // namespace

std::optional<double> NcuKernelRow::number(const std::string& column) const {
  const auto it = values.find(column);
  if (it == values.end()) return std::nullopt;
  std::string digits;
  for (char c : it->second)
    if (c != ',' && c != ' ') digits += c;
  if (digits.empty()) return std::nullopt;
  char* end = nullptr;
  const double value = std::strtod(digits.c_str(), &end);
  if (end != digits.c_str() + digits.size()) return std::nullopt;  // "n/a", text
  const auto unit = units.find(column);
  return value * (unit == units.end() ? 1.0 : unit_scale(unit->second));
}

std::vector<NcuKernelRow> parse_ncu_raw_csv(const std::string& text) {
  const std::vector<std::string> lines = split_lines(text);
  size_t at = 0;
  while (at < lines.size() && lines[at].rfind("\"ID\",", 0) != 0) ++at;
  if (at == lines.size()) return {};  // ncu profiled no kernel
  const auto header = csv_cells(lines[at]);
  if (!header) fail("ncu CSV line {}: unterminated quote in the header", at + 1);
  const auto name_at = std::find(header->begin(), header->end(), "Kernel Name");
  if (name_at == header->end())
    fail("ncu CSV line {}: the header has no \"Kernel Name\" column", at + 1);
  const size_t name_column = size_t(name_at - header->begin());
  std::vector<NcuKernelRow> rows;
  std::optional<std::vector<std::string>> units;
  for (size_t i = at + 1; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.empty() || line == "\r" || line.rfind("==", 0) == 0) continue;  // ncu's messages
    const auto cells = csv_cells(line);
    if (!cells) fail("ncu CSV line {}: unterminated quote", i + 1);
    if (cells->size() != header->size())
      fail("ncu CSV line {}: {} cells where the header has {}", i + 1, cells->size(),
           header->size());
    if (!units) {  // the row right after the header
      units = cells;
      continue;
    }
    NcuKernelRow row;
    row.kernel_name = (*cells)[name_column];
    for (size_t c = 0; c < header->size(); ++c) {
      row.values[(*header)[c]] = (*cells)[c];
      row.units[(*header)[c]] = (*units)[c];
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

std::vector<std::string> profile_metrics() {
  return {"gpu__time_duration.sum",
          "sm__throughput.avg.pct_of_peak_sustained_elapsed",
          "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed",
          "dram__bytes_read.sum",
          "dram__bytes_write.sum",
          "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum",
          "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum",
          "l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum",
          "smsp__sass_sectors_mem_global.sum",
          "smsp__sass_sectors_mem_global_ideal.sum",
          "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum",
          "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum",
          "sm__warps_active.avg.pct_of_peak_sustained_active",
          "sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
          "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active",
          "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
          "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active",
          "launch__registers_per_thread",
          "launch__grid_size",
          "launch__block_size",
          std::string("regex:") + kStallPrefix + ".*_per_issue_active\\.ratio"};
}

std::vector<std::string> stall_metric_names() {
  std::vector<std::string> out;
  for (const char* reason :
       {"barrier", "branch_resolving", "dispatch_stall", "drain", "imc_miss", "lg_throttle",
        "long_scoreboard", "math_pipe_throttle", "membar", "mio_throttle", "misc", "no_instruction",
        "not_selected", "short_scoreboard", "sleeping", "tex_throttle", "wait"})
    out.push_back(kStallPrefix + std::string(reason) + kStallSuffix);
  return out;
}

KernelProfile profile_from_row(const NcuKernelRow& row, size_t top_stalls) {
  KernelProfile p;
  p.kernel_name = row.kernel_name;
  auto first_of = [&row](std::initializer_list<const char*> names) -> std::optional<double> {
    for (const char* name : names)
      if (auto v = row.number(name)) return v;
    return std::nullopt;
  };
  if (auto ns = row.number("gpu__time_duration.sum")) p.duration_us = *ns * 1e-3;
  p.sm_throughput_pct = row.number("sm__throughput.avg.pct_of_peak_sustained_elapsed");
  p.memory_throughput_pct =
      row.number("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed");
  p.dram_read_bytes = row.number("dram__bytes_read.sum");
  p.dram_write_bytes = row.number("dram__bytes_write.sum");
  p.global_load_sectors = row.number("l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum");
  p.global_load_requests = row.number("l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum");
  p.global_store_sectors = row.number("l1tex__t_sectors_pipe_lsu_mem_global_op_st.sum");
  const auto sectors = row.number("smsp__sass_sectors_mem_global.sum");
  const auto ideal = row.number("smsp__sass_sectors_mem_global_ideal.sum");
  if (sectors && ideal) p.global_excess_sectors = std::max(0.0, *sectors - *ideal);
  p.shared_load_bank_conflicts =
      row.number("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum");
  p.shared_store_bank_conflicts =
      row.number("l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum");
  p.achieved_occupancy_pct = row.number("sm__warps_active.avg.pct_of_peak_sustained_active");
  p.fma_pipe_pct = first_of({"sm__pipe_fma_cycles_active.avg.pct_of_peak_sustained_active",
                             "sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active"});
  // mma.sync runs on the HMMA pipe, Hopper's wgmma on the GMMA one: the busier is the kernel's.
  for (const char* name :
       {"sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active",
        "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active"})
    if (auto v = row.number(name); v && (!p.tensor_pipe_pct || *v > *p.tensor_pipe_pct))
      p.tensor_pipe_pct = v;
  p.registers = row.number("launch__registers_per_thread");
  const std::string prefix = kStallPrefix, suffix = kStallSuffix;
  for (const auto& [column, text] : row.values) {
    if (column.size() <= prefix.size() + suffix.size() || column.rfind(prefix, 0) != 0 ||
        column.compare(column.size() - suffix.size(), suffix.size(), suffix) != 0)
      continue;
    const std::string reason =
        column.substr(prefix.size(), column.size() - prefix.size() - suffix.size());
    if (reason == "selected") continue;
    if (auto v = row.number(column); v && *v > 0) p.stalls.push_back({reason, *v});
  }
  std::stable_sort(p.stalls.begin(), p.stalls.end(),
                   [](const StallReason& a, const StallReason& b) { return a.value > b.value; });
  if (p.stalls.size() > top_stalls) p.stalls.resize(top_stalls);
  return p;
}

std::vector<std::string> missing_metrics(const std::string& log) {
  static const std::regex kMissing(R"(Failed to find metric[s]?\s+'?([^\s',]+)'?)");
  std::vector<std::string> out;
  for (std::sregex_iterator it(log.begin(), log.end(), kMissing), end; it != end; ++it)
    if (std::find(out.begin(), out.end(), (*it)[1].str()) == out.end())
      out.push_back((*it)[1].str());
  return out;
}

std::string ncu_version_of(const std::string& version_output) {
  static const std::regex kVersion(R"(Version\s+([0-9][0-9A-Za-z.\-]*))");
  std::smatch m;
  if (std::regex_search(version_output, m, kVersion)) return m[1].str();
  std::string last;
  for (const std::string& line : split_lines(version_output))
    if (line.find_first_not_of(" \r\t") != std::string::npos) last = line;
  return last;
}

}  // namespace tgemm
