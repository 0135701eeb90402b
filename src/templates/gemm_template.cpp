#include "src/templates/gemm_template.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "src/core/arch_limits.h"

namespace tgemm {

int element_code(DType type) {
  switch (type) {
    case DType::f32:
      return 0;
    case DType::f16:
      return 1;
    case DType::bf16:
      return 2;
    case DType::e4m3:
      return 3;
    case DType::e5m2:
      return 4;
  }
  return 0;
}

std::vector<std::string> GemmTemplate::defines(const KernelConfig& config,
                                               const Problem& problem) const {
  std::vector<std::string> out = problem_defines(problem);
  for (const std::string& d : config.defines()) out.push_back(d);
  return out;
}

std::optional<std::string> GemmTemplate::unsupported_reason(const KernelConfig& config,
                                                            const Problem& problem,
                                                            const std::string& arch) const {
  if (config.template_name != name())
    return fmt::format("config of '{}', not {}", config.template_name, name());
  if (auto why = types_unsupported(problem.types, arch)) return why;
  if (auto why = config_unsupported(config, problem, arch)) return why;
  if (problem.epilogue.fused())
    if (auto why = epilogue_unsupported(config, problem)) return why;
  if (!problem.batched()) return std::nullopt;
  if (auto why = problem.batch_form() == BatchForm::grouped ? grouped_unsupported(config, problem)
                                                            : batch_unsupported(config, problem))
    return why;
  const LaunchPlan plan = make_plan(config, problem, 0);
  const KernelLaunch& main = plan.launches[0];
  if (plan.count != 1 || plan.workspace_bytes > 0 || plan.module_state || plan.uses_tensor_maps() ||
      main.grid[2] != 1 || main.persistent)
    return fmt::format(
        "{}'s config launches a pre-pass, a split-K reduction, a workspace or a persistent grid, "
        "which compute one GEMM: a batch takes configs of one plain launch",
        name());
  return std::nullopt;
}

std::optional<std::string> GemmTemplate::batch_unsupported(const KernelConfig&,
                                                           const Problem&) const {
  return fmt::format("{} computes one GEMM per launch: batches are not served", name());
}

std::optional<std::string> GemmTemplate::grouped_unsupported(const KernelConfig&,
                                                             const Problem&) const {
  return fmt::format("{} has no grouped build: grouped GEMM is not served", name());
}

std::optional<std::string> GemmTemplate::epilogue_unsupported(const KernelConfig&,
                                                              const Problem& problem) const {
  return fmt::format("{} writes C without the shared epilogue: epilogue {} is not served", name(),
                     problem.epilogue.kind());
}

LaunchPlan GemmTemplate::plan_launch(const KernelConfig& config, const Problem& problem,
                                     int sm_count) const {
  LaunchPlan plan = make_plan(config, problem, sm_count);
  if (problem.batched())
    for (int i = 0; i < plan.count; ++i)
      if (plan.launches[size_t(i)].entry == 0)
        plan.launches[size_t(i)].grid[2] = unsigned(problem.batch);
  if (problem.batch_form() == BatchForm::grouped) {
    const TileShape tile = describe(config, problem).tile;
    plan.group_tile_m = int(tile.m);
    plan.group_tile_n = int(tile.n);
  }
  return plan;
}

const FamilyTypes& GemmTemplate::ffma_f32() {
  static const FamilyTypes types{{{"f32", 75}}, "f32 with f32 accumulation is FFMA, every arch's"};
  return types;
}

namespace {

std::string arch_range(const TypeRule& r) {
  if (r.highest_arch == r.lowest_arch) return fmt::format("sm_{} only", r.lowest_arch);
  if (r.highest_arch == 0) return fmt::format("sm_{} and later", r.lowest_arch);
  return fmt::format("sm_{} to sm_{}", r.lowest_arch, r.highest_arch);
}

}  // namespace

std::optional<std::string> GemmTemplate::types_unsupported(const GemmTypes& types,
                                                           const std::string& arch) const {
  if (std::string why = types.invalid_reason(); !why.empty()) return why;
  const FamilyTypes& family = computed_types();
  const std::string wanted = types.name();
  const auto rule = std::find_if(family.rules.begin(), family.rules.end(),
                                 [&](const TypeRule& r) { return wanted == r.types; });
  const int number = arch_number(arch);
  if (rule != family.rules.end() && number >= rule->lowest_arch &&
      (rule->highest_arch == 0 || number <= rule->highest_arch))
    return std::nullopt;
  const std::string note = family.note.empty() ? "" : " (" + family.note + ")";
  if (rule != family.rules.end())
    return fmt::format("{} computes {} on {}, not on {}{}", name(), wanted, arch_range(*rule), arch,
                       note);
  std::vector<std::string> names;
  for (const TypeRule& r : family.rules) names.emplace_back(r.types);
  return fmt::format("{} computes {}, not {}{}", name(), fmt::join(names, ", "), wanted, note);
}

Problem build_variant(const Problem& problem) {
  return build_variant(problem.types, problem.op_a, problem.op_b, problem.batch_form(),
                       problem.epilogue);
}

Problem build_variant(const GemmTypes& types, Op op_a, Op op_b, BatchForm form,
                      const Epilogue& epilogue) {
  // A batch of two stands for every strided batch, one group of one problem for every grouped
  // GEMM: one cubin serves them all.
  Problem v =
      form == BatchForm::grouped
          ? Problem::grouped(types, op_a, op_b, {ProblemGroup{1, 1, 1, 1}})
          : Problem::packed_batch(types, op_a, op_b, 1, 1, 1, form == BatchForm::strided ? 2 : 1);
  v.batch_pointers = form == BatchForm::pointers;
  v.epilogue = epilogue.build();
  return v;
}

std::vector<std::string> problem_defines(const Problem& problem) {
  std::vector<std::string> out = {fmt::format("-DTGEMM_OP_A={}", problem.op_a == Op::T ? 1 : 0),
                                  fmt::format("-DTGEMM_OP_B={}", problem.op_b == Op::T ? 1 : 0),
                                  fmt::format("-DTGEMM_TYPE_A={}", element_code(problem.types.a)),
                                  fmt::format("-DTGEMM_TYPE_B={}", element_code(problem.types.b)),
                                  fmt::format("-DTGEMM_TYPE_C={}", element_code(problem.types.c)),
                                  fmt::format("-DTGEMM_COMPUTE={}", int(problem.types.compute))};
  // Only a batch adds one: a single GEMM's build keeps the options (and cache key) it had.
  if (problem.batched()) out.push_back(fmt::format("-DTGEMM_BATCH={}", int(problem.batch_form())));
  // Likewise an epilogue (what it computes; where it writes is the call's).
  for (const std::string& d : problem.epilogue.build().defines()) out.push_back(d);
  return out;
}

KernelDescription tiled_description(const TileShape& tile, int copy_bytes) {
  KernelDescription d;
  d.tile = tile;
  d.copy_bytes = copy_bytes;
  return d;
}

TileShape tile_from_block_params(const KernelConfig& config) {
  return {config.get("BM"), config.get("BN"), config.get("BK"), config.get_or("SPLIT_K", 1),
          config.get_or("MIN_BLOCKS", 1)};
}

KernelLaunch tiled_launch(const TileShape& t, const Problem& problem, int threads,
                          size_t smem_bytes) {
  KernelLaunch main;
  main.grid[0] = unsigned((problem.n + t.n - 1) / t.n);
  main.grid[1] = unsigned((problem.m + t.m - 1) / t.m);
  main.grid[2] = unsigned(t.split_k);
  main.block[0] = unsigned(threads);
  main.smem_bytes = smem_bytes;
  return main;
}

size_t main_smem_opt_in(const GemmTemplate& family, const KernelConfig& config,
                        const Problem& problem) {
  size_t bytes = family.block_resources(config).dynamic_smem_bytes;
  for (const KernelLaunch& l : family.plan_launch(config, problem))
    if (l.entry == 0) bytes = std::max(bytes, l.smem_bytes);
  return bytes;
}

KernelLaunch scale_c_launch(const Problem& problem, int entry) {
  KernelLaunch launch;
  launch.entry = entry;
  launch.grid[0] = unsigned(std::clamp<int64_t>((problem.m * problem.n + 255) / 256, 1, 65535));
  launch.block[0] = 256;
  return launch;
}

size_t split_k_workspace_bytes(const Problem& problem, int64_t slices) {
  return size_t(slices) * size_t(problem.m) * size_t(problem.n) * sizeof(float);
}

std::optional<std::string> split_k_workspace_unsupported(const Problem& problem, int64_t slices) {
  const size_t bytes = split_k_workspace_bytes(problem, slices);
  if (bytes <= kMaxSplitKWorkspaceBytes) return std::nullopt;
  return fmt::format(
      "deterministic split-K of {} slices needs {} MiB of workspace for a {}x{} C (at most {} "
      "MiB)",
      slices, bytes >> 20, problem.m, problem.n, kMaxSplitKWorkspaceBytes >> 20);
}

void add_split_k_reduce(LaunchPlan* plan, const Problem& problem, int64_t slices, int entry,
                        bool early) {
  // The same grid-stride shape as the beta pre-pass: one thread per C element, capped.
  KernelLaunch reduce = scale_c_launch(problem, entry);
  reduce.early = early;
  plan->add(reduce);
  plan->workspace_bytes = std::max(plan->workspace_bytes, split_k_workspace_bytes(problem, slices));
}

std::optional<std::string> atomic_split_k_epilogue_unsupported(const Problem& problem,
                                                               int64_t split_k) {
  if (split_k <= 1) return std::nullopt;
  return fmt::format(
      "SPLIT_K={} adds its slices atomically into C: no slice is the last to apply epilogue {} "
      "(use SPLIT_K=1, or a family's deterministic split)",
      split_k, problem.epilogue.kind());
}

KernelLaunch pack_launch(const PackedLayout& packed, int element, bool transpose, int entry) {
  KernelLaunch launch;
  launch.entry = entry;
  if (transpose) {
    launch.grid[0] = unsigned((packed.ld + 31) / 32);
    launch.grid[1] = unsigned((packed.rows + 31) / 32);
    launch.block[0] = 32;
    launch.block[1] = 8;
    return launch;
  }
  const int64_t chunks = packed.rows * packed.ld * element / 16;
  launch.grid[0] = unsigned(std::clamp<int64_t>((chunks + 255) / 256, 1, 65535));
  launch.block[0] = 256;
  return launch;
}

}  // namespace tgemm
