#include "src/core/epilogue.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <array>
#include <utility>

#include "src/core/error.h"

namespace tgemm {

namespace {

constexpr std::array<std::pair<Activation, const char*>, 5> kActivations = {{
    {Activation::none, "none"},
    {Activation::relu, "relu"},
    {Activation::gelu, "gelu"},
    {Activation::gelu_erf, "gelu_erf"},
    {Activation::silu, "silu"},
}};

// The kind of `activation` with or without a bias, as Epilogue::kind() spells it.
std::string kind_name(Activation activation, bool bias) {
  return Epilogue{activation, bias ? BiasAlong::n : BiasAlong::none}.kind();
}

}  // namespace

std::string to_string(Activation activation) {
  for (auto [a, name] : kActivations)
    if (a == activation) return name;
  return "unknown";
}

std::string Epilogue::kind() const {
  if (bias == BiasAlong::none) return to_string(activation);
  return activation == Activation::none ? "bias" : "bias_" + to_string(activation);
}

std::string Epilogue::name() const {
  if (!any()) return "";
  std::string out = kind();
  if (bias == BiasAlong::m) out += ".m";
  if (bias_f32) out += ".bf32";
  if (aux) out += ".aux";
  if (separate_d) out += ".d";
  if (rowwise_scales) out += ".rowwise";
  return out;
}

Epilogue Epilogue::build() const {
  Epilogue b = *this;
  b.separate_d = activation == Activation::none && bias == BiasAlong::none && !aux && separate_d;
  return b;
}

std::vector<std::string> Epilogue::defines() const {
  std::vector<std::string> out;
  if (rowwise_scales) out.push_back("-DTGEMM_ROWWISE_SCALES=1");
  if (!fused()) return out;
  out.push_back("-DTGEMM_EPILOGUE=1");
  out.push_back(fmt::format("-DTGEMM_ACTIVATION={}", int(activation)));
  out.push_back(fmt::format("-DTGEMM_BIAS={}", int(bias)));
  if (bias_f32) out.push_back("-DTGEMM_BIAS_TYPE=0");  // else C's type, the header's default
  if (aux) out.push_back("-DTGEMM_AUX=1");
  return out;
}

std::string Epilogue::invalid_reason(const GemmTypes& types) const {
  if (bias_f32 && bias == BiasAlong::none) return "an f32 bias is asked for without a bias";
  if (bias_f32 && types.c == DType::f32)
    return "an f32 bias is C's type for an f32 C: it is not asked for apart";
  if (aux && activation == Activation::none)
    return "aux keeps the values before the activation: it needs an activation (relu, gelu, ...)";
  if (rowwise_scales && !types.fp8())
    return "rowwise scales scale FP8 inputs (A and B e4m3 or e5m2), not " + types.name();
  return "";
}

Epilogue parse_epilogue_kind(std::string_view kind) {
  std::vector<std::string> names;
  for (auto [activation, name] : kActivations)
    for (bool bias : {false, true}) {
      names.push_back(kind_name(activation, bias));
      if (kind == names.back()) return Epilogue{activation, bias ? BiasAlong::n : BiasAlong::none};
    }
  fail("unknown epilogue '{}' (one of {})", kind, fmt::join(names, ", "));
}

Epilogue parse_epilogue_name(std::string_view name) {
  if (name.empty()) return {};
  const size_t dot = name.find('.');
  Epilogue e = parse_epilogue_kind(name.substr(0, dot));
  std::string_view flags = dot == std::string_view::npos ? "" : name.substr(dot);
  // The flags in name()'s order, each at most once.
  for (auto [flag, set] : {std::pair<const char*, bool*>{".m", nullptr},
                           {".bf32", &e.bias_f32},
                           {".aux", &e.aux},
                           {".d", &e.separate_d},
                           {".rowwise", &e.rowwise_scales}}) {
    const std::string_view f = flag;
    if (!flags.starts_with(f) || (flags.size() > f.size() && flags[f.size()] != '.')) continue;
    if (set)
      *set = true;
    else if (e.bias == BiasAlong::n)
      e.bias = BiasAlong::m;
    else
      fail("epilogue '{}': .m (a bias along M) without a bias", name);
    flags.remove_prefix(f.size());
  }
  if (!flags.empty())
    fail("epilogue '{}': unknown part '{}' (.m, .bf32, .aux, .d, .rowwise)", name, flags);
  if (!e.any()) fail("epilogue '{}' is a plain GEMM's, which is named ''", name);
  return e;
}

}  // namespace tgemm
