#include "src/jit/ptxas_log.h"

#include <regex>
#include <sstream>

namespace tgemm {

PtxasResources parse_ptxas_log(const std::string& log, const std::string& function) {
  // ptxas prints, per entry:
  //   ptxas info    : Function properties for NAME
  //   ptxas         .     0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads
  //   ptxas info    : Used 10 registers, used 1 barriers, 1024 bytes smem
  static const std::regex properties(R"(Function properties for (\S+))");
  static const std::regex frame(
      R"((\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads)");
  static const std::regex used(R"(Used (\d+) registers)");
  static const std::regex smem(R"((\d+) bytes smem)");
  // Printed before the entry's report, naming it:
  //   ptxas info    : (C7515) Potential Performance Loss: wgmma.mma_async instructions are
  //   serialized due to ... in the function 'NAME'
  static const std::regex serialized(R"(wgmma\.mma_async instructions are serialized.* '(\S+)')");
  PtxasResources r;
  std::istringstream lines(log);
  std::string line;
  bool in_function = false;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, m, serialized) && m[1] == function) {
      r.wgmma_serialized = true;
      continue;
    }
    if (std::regex_search(line, m, properties)) {
      in_function = m[1] == function;
      continue;
    }
    if (!in_function) continue;
    if (std::regex_search(line, m, frame)) {
      r.stack_frame_bytes = std::stoi(m[1]);
      r.spill_store_bytes = std::stoi(m[2]);
      r.spill_load_bytes = std::stoi(m[3]);
    }
    if (std::regex_search(line, m, used)) {
      r.found = true;
      r.registers = std::stoi(m[1]);
      if (std::regex_search(line, m, smem)) r.smem_bytes = std::stoi(m[1]);
      in_function = false;  // the "Used" line closes the entry's report
    }
  }
  return r;
}

}  // namespace tgemm
