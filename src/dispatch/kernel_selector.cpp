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
                               std::string arch, int sm_count)
    : tuned_(std::move(tuned)),
      defaults_(std::move(defaults)),
      arch_(std::move(arch)),
      sm_count_(sm_count) {}

KernelChoice KernelSelector::choose(const Problem& problem) const {
  const std::string key = problem.key();
  for (const BestEntry& e : tuned_) {
    if (e.problem.key() == key && can_run(e.config, problem))
      return {Selection::exact, e.config, e.template_hash, key};
  }
  // Nearest tuned problem of the same dtype and layout whose kernel can run this one, by
  // squared distance in log(M, N, K). A kernel tuned for other alignments chose its vector
  // widths for them, so it pays kAlignmentPenalty; beyond kFarScore no tuned shape is
  // close enough to beat a default sized for the problem.
  constexpr double kAlignmentPenalty = 2.0, kFarScore = 6.0;
  const BestEntry* nearest = nullptr;
  double best = std::numeric_limits<double>::infinity();
  for (const BestEntry& e : tuned_) {
    const Problem& t = e.problem;
    if (t.dtype != problem.dtype || t.op_a != problem.op_a || t.op_b != problem.op_b) continue;
    if (!can_run(e.config, problem)) continue;
    const double dm = std::log(double(t.m) / double(problem.m));
    const double dn = std::log(double(t.n) / double(problem.n));
    const double dk = std::log(double(t.k) / double(problem.k));
    const bool same_alignment = t.align_a == problem.align_a && t.align_b == problem.align_b &&
                                t.align_c == problem.align_c;
    const double score = dm * dm + dn * dn + dk * dk + (same_alignment ? 0 : kAlignmentPenalty);
    if (score < best) {
      best = score;
      nearest = &e;
    }
  }
  if (nearest && best <= kFarScore)
    return {Selection::nearest, nearest->config, nearest->template_hash, nearest->problem.key()};
  if (const KernelConfig* d = choose_default(problem)) return {Selection::fallback_default, *d, "", ""};
  if (nearest)
    return {Selection::nearest, nearest->config, nearest->template_hash, nearest->problem.key()};
  return {Selection::cublas, {}, "", ""};
}

// Blocks a config launches for a problem, split-K slices included.
int64_t launched_blocks(const KernelConfig& config, const Problem& problem) {
  const int64_t bm = config.get("BM"), bn = config.get("BN");
  return ((problem.m + bm - 1) / bm) * ((problem.n + bn - 1) / bn) * config.get_or("SPLIT_K", 1);
}

// Among the defaults of this arch (else of any) that can run the problem: the first, in
// table order, that launches a block per SM at least; else the one launching the most.
const KernelConfig* KernelSelector::choose_default(const Problem& problem) const {
  for (const std::string& arch : {arch_, std::string("*")}) {
    const KernelConfig* most = nullptr;
    int64_t most_blocks = -1;
    for (const DefaultKernel& d : defaults_) {
      if (d.arch != arch || d.dtype != problem.dtype || !can_run(d.config, problem)) continue;
      const int64_t blocks = launched_blocks(d.config, problem);
      if (sm_count_ <= 0 || blocks >= sm_count_) return &d.config;
      if (blocks > most_blocks) {
        most_blocks = blocks;
        most = &d.config;
      }
    }
    if (most) return most;
  }
  return nullptr;
}

}  // namespace tgemm
