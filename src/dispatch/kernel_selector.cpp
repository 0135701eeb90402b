#include "src/dispatch/kernel_selector.h"

#include <cmath>
#include <limits>
#include <sstream>

#include "src/core/error.h"
#include "src/launch/launch_plan.h"

namespace tgemm {

extern const char kDefaultKernelsText[];  // generated from configs/default_kernels.txt

std::vector<DefaultKernel> parse_default_kernels(const std::string& text) {
  std::vector<DefaultKernel> out;
  std::istringstream lines(text);
  std::string line;
  for (int number = 1; std::getline(lines, line); ++number) {
    if (auto hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    std::istringstream fields(line);
    std::string arch, dtype, templ, params, extra;
    if (!(fields >> arch)) continue;  // blank or comment
    if (!(fields >> dtype >> templ >> params) || (fields >> extra))
      fail("default kernels line {}: expected 'arch dtype template params'", number);
    if (arch != "*") arch_number(arch);
    out.push_back({arch, parse_dtype(dtype), KernelConfig::from_params_text(templ, params)});
  }
  return out;
}

const std::vector<DefaultKernel>& shipped_default_kernels() {
  static const std::vector<DefaultKernel> table = parse_default_kernels(kDefaultKernelsText);
  return table;
}

bool can_run(const KernelConfig& config, const Problem& problem) {
  if (unsupported_reason(config, problem)) return false;
  const int64_t split_k = config.get_or("SPLIT_K", 1);
  const int64_t k_tiles = (problem.k + config.get("BK") - 1) / config.get("BK");
  return split_k <= std::max<int64_t>(1, k_tiles);
}

KernelSelector::KernelSelector(std::vector<BestEntry> tuned, std::vector<DefaultKernel> defaults,
                               std::string arch)
    : tuned_(std::move(tuned)), defaults_(std::move(defaults)), arch_(std::move(arch)) {}

KernelChoice KernelSelector::choose(const Problem& problem) const {
  const std::string key = problem.key();
  for (const BestEntry& e : tuned_) {
    if (e.problem.key() == key && can_run(e.config, problem))
      return {Selection::exact, e.config, e.template_hash, key};
  }
  // Nearest in log(M, N, K) among tuned problems of the same dtype and layout, first those
  // with the problem's alignments (their best kernel was chosen for the same vector widths),
  // then any whose kernel can run it. A kernel tuned for aligned data is a poor pick for
  // misaligned data and the reverse, so across alignments a default comes first.
  const BestEntry* nearest_same_alignment = nullptr;
  const BestEntry* nearest_any = nullptr;
  double best_same = std::numeric_limits<double>::infinity(), best_any = best_same;
  for (const BestEntry& e : tuned_) {
    const Problem& t = e.problem;
    if (t.dtype != problem.dtype || t.op_a != problem.op_a || t.op_b != problem.op_b) continue;
    if (!can_run(e.config, problem)) continue;
    const double dm = std::log(double(t.m) / double(problem.m));
    const double dn = std::log(double(t.n) / double(problem.n));
    const double dk = std::log(double(t.k) / double(problem.k));
    const double d = dm * dm + dn * dn + dk * dk;
    const bool same_alignment = t.align_a == problem.align_a && t.align_b == problem.align_b &&
                                t.align_c == problem.align_c;
    if (same_alignment && d < best_same) {
      best_same = d;
      nearest_same_alignment = &e;
    }
    if (d < best_any) {
      best_any = d;
      nearest_any = &e;
    }
  }
  auto from_entry = [](const BestEntry& e) {
    return KernelChoice{Selection::nearest, e.config, e.template_hash, e.problem.key()};
  };
  if (nearest_same_alignment) return from_entry(*nearest_same_alignment);
  for (const std::string& arch : {arch_, std::string("*")}) {
    for (const DefaultKernel& d : defaults_) {
      if (d.arch == arch && d.dtype == problem.dtype && can_run(d.config, problem))
        return {Selection::fallback_default, d.config, "", ""};
    }
  }
  if (nearest_any) return from_entry(*nearest_any);
  return {Selection::cublas, {}, "", ""};
}

}  // namespace tgemm
