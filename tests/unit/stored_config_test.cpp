// stored_config_rejection(): a config read from a database is checked against its family's
// shipped space and host side before any host code divides by one of its parameters.
#include "src/templates/stored_config.h"

#include <gtest/gtest.h>

#include <array>
#include <climits>
#include <string>
#include <vector>

#include "src/core/arch_limits.h"
#include "src/dispatch/kernel_selector.h"
#include "src/jit/kernel_source.h"
#include "src/templates/search_space.h"
#include "src/templates/template_registry.h"
#include "tests/common/trial_records.h"

namespace tgemm {
namespace {

KernelConfig sgemm_warp(const std::string& params) {
  return KernelConfig::from_params_text(
      "sgemm_warp", "BM=64,BN=64,BK=8,WM=32,WN=32,TM=8,TN=4,STAGES=4,SPLIT_K=1,TAIL_SPLIT=8," +
                        params + ",SWIZZLE=1,MIN_BLOCKS=2,PACK_B=0");
}

std::string rejection(const KernelConfig& config, const std::string& arch = "sm_90") {
  return stored_config_rejection(config, arch).value_or("");
}

TEST(StoredConfig, accepts_every_shipped_default_kernel) {
  for (const DefaultKernel& d : shipped_default_kernels()) {
    const std::string arch = d.arch == "*" ? "sm_90" : d.arch;
    EXPECT_EQ(rejection(d.config, arch), "") << d.config.canonical_name() << " on " << arch;
  }
}

TEST(StoredConfig, accepts_a_config_that_leaves_out_parameters_with_defaults) {
  // What a space listing fewer parameters (tests/data/spaces/tiny_sgemm_simt.yaml) stores:
  // no SPLIT_MODE, no MIN_BLOCKS.
  EXPECT_EQ(rejection(KernelConfig::from_params_text(
                "sgemm_simt",
                "BM=64,BN=64,BK=8,TM=4,TN=4,WARP_N=8,VEC=1,PAD_A=4,PAD_B=4,"
                "STAGES=2,SPLIT_K=1,SWIZZLE=1")),
            "");
}

TEST(StoredConfig, rejects_a_config_without_a_parameter_the_host_side_needs) {
  // Which missing parameter is named first depends on the order the family reads them; the
  // message must name one the config lacks, never one it has.
  const std::string why = rejection({"sgemm_simt", {{"BM", 64}, {"BN", 64}}});
  const std::string prefix = "config sgemm_simt_bm64_bn64 has no parameter ";
  ASSERT_EQ(why.rfind(prefix, 0), 0u) << why;
  const std::string missing = why.substr(prefix.size());
  EXPECT_TRUE(missing == "BK" || missing == "TM" || missing == "TN" || missing == "WARP_N" ||
              missing == "VEC" || missing == "STAGES")
      << why;
}

TEST(StoredConfig, rejects_a_zero_the_host_side_divides_by) {
  EXPECT_EQ(rejection(sgemm_warp("VEC=1")), "");
  const std::string why = rejection(sgemm_warp("VEC=0"));
  EXPECT_NE(why.find("VEC=0 is out of range (1 to 2147483647)"), std::string::npos) << why;
  const std::string odd = rejection(sgemm_warp("VEC=3"));
  EXPECT_NE(odd.find("VEC must be 1, 2 or 4"), std::string::npos) << odd;
}

TEST(StoredConfig, rejects_names_values_and_families_it_does_not_know) {
  EXPECT_NE(rejection(sgemm_warp("VEC=1,VECTOR=4"))
                .find("VECTOR is not a tunable of template "
                      "sgemm_warp"),
            std::string::npos);
  EXPECT_NE(rejection(sgemm_warp("VEC=1,VEC=4")).find("VEC is given twice"), std::string::npos);
  EXPECT_NE(rejection(sgemm_warp("VEC=-4")).find("VEC=-4 is out of range"), std::string::npos);
  EXPECT_NE(rejection(sgemm_warp("VEC=1,PACK_B=-1")).find("PACK_B=-1 is out of range (0 to"),
            std::string::npos);
  EXPECT_NE(rejection(sgemm_warp("VEC=4294967300")).find("out of range"), std::string::npos);
  EXPECT_NE(rejection({"no_such_family", {}}).find("unknown template family 'no_such_family'"),
            std::string::npos);
  EXPECT_NE(rejection(sgemm_warp("VEC=1"), "").find("unknown arch ''"), std::string::npos);
}

TEST(StoredConfig, rejects_a_config_illegal_on_the_arch) {
  // Four stages need cp.async: sm_80 on.
  EXPECT_EQ(rejection(sgemm_warp("VEC=1"), "sm_80"), "");
  EXPECT_NE(rejection(sgemm_warp("VEC=1"), "sm_75").find("STAGES must be 2"), std::string::npos);
}

// A few legal configs of each shipped family on sm_90, spread over its space, with the first
// of the types it computes there.
struct FamilySample {
  GemmTypes types;
  std::vector<KernelConfig> legal;
};

std::vector<FamilySample> every_family(size_t configs_each) {
  const ArchLimits limits = arch_limits("sm_90");
  std::vector<FamilySample> out;
  for (const EmbeddedTemplate& t : embedded_templates()) {
    const SearchSpace space = SearchSpace::parse(t.space, t.name);
    FamilySample sample;
    for (const char* types : {"f32", "tf32", "f16", "bf16"})
      if (!template_named(t.name).types_unsupported(parse_gemm_types(types), "sm_90")) {
        sample.types = parse_gemm_types(types);
        break;
      }
    const uint64_t points = space.cartesian_size(), stride = 7919;
    for (uint64_t i = 0; i < points && sample.legal.size() < configs_each; ++i) {
      KernelConfig config = space.config_at(i * stride % points);
      if (!space.rejection(config, limits)) sample.legal.push_back(std::move(config));
    }
    EXPECT_EQ(sample.legal.size(), configs_each) << t.name;
    out.push_back(std::move(sample));
  }
  return out;
}

// What a damaged or hostile database may hold in place of a legal config: each parameter in
// turn zero, negative, odd, past INT32_MAX or at it, or gone; and a name the family lacks.
std::vector<KernelConfig> bad_variants(const KernelConfig& legal) {
  std::vector<KernelConfig> out;
  for (const auto& [name, value] : legal.params) {
    for (int64_t bad :
         {int64_t(0), int64_t(-1), int64_t(3), int64_t(INT_MAX) + 1, int64_t(INT_MAX)}) {
      KernelConfig changed = legal;
      changed.set(name, bad);
      out.push_back(std::move(changed));
    }
    KernelConfig without{legal.template_name, {}};
    for (const auto& p : legal.params)
      if (p.first != name) without.params.push_back(p);
    out.push_back(std::move(without));
  }
  KernelConfig unknown = legal;
  unknown.set("NO_SUCH_PARAMETER", 1);
  out.push_back(std::move(unknown));
  return out;
}

std::vector<Problem> problems_of(const GemmTypes& types) {
  std::vector<Problem> out;
  for (const auto& [m, n, k] : {std::array<int64_t, 3>{1000, 1000, 1000},
                                {8, 4096, 4096},
                                {4096, 1, 4096},
                                {900, 1100, 1000}})
    out.push_back(Problem::packed(types, Op::N, Op::T, m, n, k));
  return out;
}

// A config the check accepts is one every host-side question answers: none traps (SIGFPE
// from a zero divisor would end this test) and none throws.
TEST(StoredConfig, host_side_answers_every_config_it_accepts) {
  for (const FamilySample& family : every_family(3))
    for (const KernelConfig& legal : family.legal)
      for (const KernelConfig& config : bad_variants(legal)) {
        if (stored_config_rejection(config, "sm_90")) continue;
        const GemmTemplate& t = template_named(config.template_name);
        SCOPED_TRACE(config.canonical_name());
        EXPECT_NO_THROW({
          t.block_resources(config);
          t.entries(config);
          for (const Problem& problem : problems_of(family.types)) {
            t.describe(config, problem);
            can_run(config, problem, "sm_90");
            if (!t.unsupported_reason(config, problem, "sm_90"))
              t.plan_launch(config, problem, 132);
          }
        });
      }
}

TEST(StoredConfig, refuses_a_zero_vec_in_every_family_that_has_vec) {
  for (const FamilySample& family : every_family(1)) {
    KernelConfig config = family.legal.front();
    if (!config.has("VEC")) continue;
    config.set("VEC", 0);
    EXPECT_NE(rejection(config), "") << config.canonical_name();
  }
}

// Through the selector the library's dispatcher builds from a database: a best and trials of
// every family with a bad value on each tuned shape never take it down and are never served
// unless the check accepts them; the shapes still get a kernel.
TEST(StoredConfig, selector_never_serves_a_refused_config_of_any_family) {
  for (const FamilySample& family : every_family(1))
    for (const KernelConfig& config : bad_variants(family.legal.front())) {
      const bool refused = stored_config_rejection(config, "sm_90").has_value();
      const std::vector<Problem> problems = problems_of(family.types);
      std::vector<BestEntry> tuned;
      std::vector<TrialRecord> measured;
      for (size_t i = 0; i + 1 < problems.size(); ++i) {
        measured.push_back(testing::ok_trial_record(problems[i], config, 1.0));
        BestEntry best;
        best.problem = problems[i];
        best.device_name = measured.back().device_name;
        best.arch = "sm_90";
        best.config = config;
        best.trial = measured.back().trial;
        tuned.push_back(std::move(best));
      }
      KernelSelector selector(tuned, shipped_default_kernels(), "sm_90", 132, measured);
      for (const Problem& problem : problems) {
        const KernelChoice choice = selector.choose(problem);
        if (refused) {
          EXPECT_NE(choice.config, config) << config.canonical_name();
        }
      }
    }
}

}  // namespace
}  // namespace tgemm
