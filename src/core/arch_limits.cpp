#include "src/core/arch_limits.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "src/core/error.h"

namespace tgemm {

namespace {
// CUDA C Programming Guide, "Technical Specifications per Compute Capability".
const std::vector<ArchLimits>& arch_table() {
  static const std::vector<ArchLimits> table = {
      {"sm_75", 1024, 1024, 255, 65536, 65536, 64 * 1024, 64 * 1024, 16, 0},
      {"sm_80", 1024, 2048, 255, 65536, 65536, 163 * 1024, 164 * 1024},
      {"sm_86", 1024, 1536, 255, 65536, 65536, 99 * 1024, 100 * 1024, 16},
      {"sm_89", 1024, 1536, 255, 65536, 65536, 99 * 1024, 100 * 1024, 24},
      {"sm_90", 1024, 2048, 255, 65536, 65536, 227 * 1024, 228 * 1024},
  };
  return table;
}
}  // namespace

std::vector<std::string> known_archs() {
  std::vector<std::string> names;
  for (const auto& a : arch_table()) names.push_back(a.arch);
  return names;
}

ArchLimits arch_limits(const std::string& arch) {
  for (const auto& a : arch_table())
    if (a.arch == arch) return a;
  fail("unknown arch '{}' (known: {})", arch, fmt::join(known_archs(), ", "));
}

int arch_number(const std::string& arch) {
  if (arch.size() < 4 || arch.rfind("sm_", 0) != 0) fail("bad arch '{}' (expected sm_XY)", arch);
  int number = 0;
  for (size_t i = 3; i < arch.size(); ++i) {
    if (arch[i] < '0' || arch[i] > '9') fail("bad arch '{}' (expected sm_XY)", arch);
    number = number * 10 + (arch[i] - '0');
    if (number > 9999) fail("bad arch '{}' (expected sm_XY)", arch);
  }
  return number;
}

}  // namespace tgemm
