// What the Hopper families' compile tests share: a config built for sm_90 (as sm_90a) for one
// type and layout, checked clean (built, no spills, within the arch's resources, wgmmas not
// serialized, built for the arch-specific target), many cases on two threads.
#pragma once

#include <fmt/format.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "src/core/arch_limits.h"
#include "src/templates/kernel_build.h"
#include "tuner/compile/resource_check.h"

namespace tgemm::testing {

struct HopperCase {
  KernelConfig config;
  GemmTypes types;
  Op a, b;
  Epilogue epilogue{};
};

// One message per case of `family` that did not build clean for sm_90.
inline std::vector<std::string> unclean_hopper_builds(const GemmTemplate& family,
                                                      const std::vector<HopperCase>& cases) {
  std::vector<std::string> problems(cases.size());
  std::atomic<size_t> next{0};
  auto has = [](const std::string& text, const char* word) {
    return text.find(word) != std::string::npos;
  };
  auto work = [&] {
    for (size_t i = next++; i < cases.size(); i = next++) {
      const HopperCase& c = cases[i];
      const std::string what =
          fmt::format("{} {} {}{} {}", c.config.canonical_name(), c.types.name(), to_string(c.a),
                      to_string(c.b), c.epilogue.name());
      Problem problem = Problem::packed(c.types, c.a, c.b, 1, 1, 1);
      problem.epilogue = c.epilogue;
      const CompiledKernel k = build_kernel(family, c.config, problem, "sm_90");
      if (!k.ok)
        problems[i] = what + ": " + k.error;
      else if (!k.resources.found || k.resources.spill_store_bytes != 0 ||
               k.resources.spill_load_bytes != 0)
        problems[i] = what + " spills or has no resource report:\n" + k.log;
      else if (auto why =
                   resource_violation(k, family.block_resources(c.config), arch_limits("sm_90")))
        problems[i] = what + ": " + *why;
      else if (has(k.log, "serialized"))  // ptxas had to wait out each wgmma
        problems[i] = what + ": wgmma serialized:\n" + k.log;
      else if (k.arch != "sm_90" || !has(k.options, "-arch=sm_90a"))
        problems[i] = what + ": built for " + k.options + " as " + k.arch;
    }
  };
  std::thread t1(work), t2(work);
  t1.join();
  t2.join();
  std::vector<std::string> out;
  for (const std::string& p : problems)
    if (!p.empty()) out.push_back(p);
  return out;
}

}  // namespace tgemm::testing
