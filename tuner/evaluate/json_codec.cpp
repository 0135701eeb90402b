#include "tuner/evaluate/json_codec.h"

#include <fmt/format.h>

#include <limits>

#include "src/core/error.h"

namespace tgemm {

namespace {

// "string \"abc\"" or "array" for error messages. Containers are never printed: dumping
// is recursive, and a hostile peer may nest them deep enough to exhaust the stack.
std::string shown(const Json& j) {
  if (j.is_structured()) return j.type_name();
  if (j.is_string() && j.get_ref<const std::string&>().size() > 40)
    return fmt::format("string {}...", Json(j.get_ref<const std::string&>().substr(0, 37))
                                           .dump(-1, ' ', false, Json::error_handler_t::replace));
  return fmt::format("{} {}", j.type_name(),
                     j.dump(-1, ' ', false, Json::error_handler_t::replace));
}

[[noreturn]] void wrong_type(const Json& j, const char* expected) {
  throw JsonFieldError("", fmt::format("must be {}, not {}", expected, shown(j)));
}

template <class T>
void decode_integer(const Json& j, T& value) {
  if (!j.is_number_integer()) wrong_type(j, "an integer");
  using Limits = std::numeric_limits<T>;
  bool fits;
  if (j.is_number_unsigned()) {
    const auto u = j.get<uint64_t>();
    fits = u <= uint64_t(Limits::max());
    value = T(u);
  } else {
    const auto s = j.get<int64_t>();
    fits = s >= int64_t(Limits::min()) && s <= int64_t(Limits::max());
    value = T(s);
  }
  if (!fits)
    throw JsonFieldError(
        "", fmt::format("is out of range [{}, {}]: {}", Limits::min(), Limits::max(), j.dump()));
}

// An enum by its text name; parse reports the accepted names.
template <class E, class Parse>
void decode_enum(const Json& j, E& value, Parse parse) {
  if (!j.is_string()) wrong_type(j, "a string");
  try {
    value = parse(j.get_ref<const std::string&>());
  } catch (const Error& e) {
    throw JsonFieldError("", fmt::format("is not valid: {}", e.what()));
  }
}

}  // namespace

// ---- Scalars ---------------------------------------------------------------------------------

Json encode_scalar(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  return value;
}
Json encode_scalar(DType value) { return to_string(value); }
// The shape-file name ("f16_out_f32"): one string that round-trips all four types.
Json encode_scalar(const GemmTypes& value) { return value.name(); }
Json encode_scalar(Op value) { return to_string(value); }
// Epilogue::name(): "" for a plain GEMM.
Json encode_scalar(const Epilogue& value) { return value.name(); }
Json encode_scalar(TrialStatus value) { return to_string(value); }
Json encode_scalar(const KernelParams& value) {
  Json j = Json::object();
  for (const auto& [name, number] : value) j[name] = number;
  return j;
}

void decode_scalar(const Json& j, bool& value) {
  if (!j.is_boolean()) wrong_type(j, "true or false");
  value = j.get<bool>();
}
void decode_scalar(const Json& j, int& value) { decode_integer(j, value); }
void decode_scalar(const Json& j, int64_t& value) { decode_integer(j, value); }

void decode_scalar(const Json& j, double& value) {
  if (j.is_number()) {
    value = j.get<double>();
    return;
  }
  if (j.is_string()) {
    const auto& text = j.get_ref<const std::string&>();
    if (text == "inf") {
      value = std::numeric_limits<double>::infinity();
      return;
    }
    if (text == "-inf") {
      value = -std::numeric_limits<double>::infinity();
      return;
    }
    if (text == "nan") {
      value = std::numeric_limits<double>::quiet_NaN();
      return;
    }
  }
  wrong_type(j, "a number (or \"inf\", \"-inf\", \"nan\")");
}
void decode_scalar(const Json& j, float& value) {
  double wide = 0;
  decode_scalar(j, wide);
  value = float(wide);
}

void decode_scalar(const Json& j, std::string& value) {
  if (!j.is_string()) wrong_type(j, "a string");
  value = j.get<std::string>();
}

void decode_scalar(const Json& j, DType& value) { decode_enum(j, value, parse_dtype); }
void decode_scalar(const Json& j, GemmTypes& value) { decode_enum(j, value, parse_gemm_types); }
void decode_scalar(const Json& j, Op& value) { decode_enum(j, value, parse_op); }
void decode_scalar(const Json& j, Epilogue& value) { decode_enum(j, value, parse_epilogue_name); }
void decode_scalar(const Json& j, TrialStatus& value) { decode_enum(j, value, parse_trial_status); }

void decode_scalar(const Json& j, KernelParams& value) {
  if (!j.is_object()) wrong_type(j, "an object of integer parameters");
  value.clear();
  for (const auto& [name, number] : j.items()) {
    if (name.empty()) throw JsonFieldError("", "has a parameter with an empty name");
    int64_t v = 0;
    try {
      decode_integer(number, v);
    } catch (const JsonFieldError& e) {
      throw e.inside(name);
    }
    value.emplace_back(name, v);
  }
}

// ---- Value types: each lists its fields once, for both directions --------------------------
// (namespace scope, not anonymous: write_object/read_object find them by argument lookup)

void describe(auto& io, Is<Problem> auto& p) {
  io("types", p.types);
  io("op_a", p.op_a);
  io("op_b", p.op_b);
  io("m", p.m);
  io("n", p.n);
  io("k", p.k);
  io("lda", p.lda);
  io("ldb", p.ldb);
  io("ldc", p.ldc);
  io("align_a", p.align_a);
  io("align_b", p.align_b);
  io("align_c", p.align_c);
  io("beta_zero", p.beta_zero);
  io("batch", p.batch);
  io("batch_pointers", p.batch_pointers);
  io("stride_a", p.stride_a);
  io("stride_b", p.stride_b);
  io("stride_c", p.stride_c);
  io("epilogue", p.epilogue);
}

void describe(auto& io, Is<KernelConfig> auto& c) {
  io("template", c.template_name);
  io("params", c.params);
}

void describe(auto& io, Is<TrialResult> auto& r) {
  io("config", r.config);
  io("status", r.status);
  io("error", r.error);
  io("time_min_us", r.time_min_us);
  io("time_median_us", r.time_median_us);
  io("time_max_us", r.time_max_us);
  io("runs", r.runs);
  io("tflops", r.tflops);
  io("max_rel_error", r.max_rel_error);
}

void describe(auto& io, Is<ArchLimits> auto& l) {
  io("arch", l.arch);
  io("max_threads_per_block", l.max_threads_per_block);
  io("max_threads_per_sm", l.max_threads_per_sm);
  io("max_regs_per_thread", l.max_regs_per_thread);
  io("regs_per_sm", l.regs_per_sm);
  io("regs_per_block", l.regs_per_block);
  io("smem_per_block_optin", l.smem_per_block_optin);
  io("smem_per_sm", l.smem_per_sm);
}

void describe(auto& io, Is<DeviceInfo> auto& d) {
  io("ordinal", d.ordinal);
  io("name", d.name);
  io("arch", d.arch);
  io("sm_count", d.sm_count);
  io("l2_bytes", d.l2_bytes);
  io("clock_khz", d.clock_khz);
  io("memory_clock_khz", d.memory_clock_khz);
  io("driver_version", d.driver_version);
  io("runtime_version", d.runtime_version);
  io("limits", d.limits);
}

void describe(auto& io, Is<TimingOptions> auto& t) {
  io("warmup_runs", t.warmup_runs);
  io("min_runs", t.min_runs);
  io("max_runs", t.max_runs);
  io("max_ms", t.max_ms);
  io("stable_rel", t.stable_rel);
}

void describe(auto& io, Is<CublasTiming> auto& t) {
  io("ok", t.ok);
  io("error", t.error);
  io("min_us", t.min_us);
  io("median_us", t.median_us);
  io("max_us", t.max_us);
  io("runs", t.runs);
  io("sgemm_rel_error", t.sgemm_rel_error);
  io("vendor_trials", t.vendor_trials);
}

void describe(auto& io, Is<Comparison> auto& c) {
  io("ok", c.ok);
  io("error", c.error);
  io("tgemm_median_us", c.tgemm_median_us);
  io("cublas_median_us", c.cublas_median_us);
  io("runs", c.runs);
}

void describe(auto& io, Is<CeilingMeasurements> auto& m) {
  io("ok", m.ok);
  io("error", m.error);
  io("copy_bytes_per_s", m.copy_bytes_per_s);
  io("copy_detail", m.copy_detail);
  io("ffma_flops", m.ffma_flops);
  io("ffma_source", m.ffma_source);
  io("ffma_detail", m.ffma_detail);
  io("f16_flops", m.f16_flops);
  io("bf16_flops", m.bf16_flops);
  io("tf32_flops", m.tf32_flops);
  io("tensor_detail", m.tensor_detail);
}

#define TGEMM_JSON_OBJECT(Type)                                        \
  void to_json(Json& j, const Type& value) { write_object(j, value); } \
  void from_json(const Json& j, Type& value) { read_object(j, value); }

TGEMM_JSON_OBJECT(Problem)
TGEMM_JSON_OBJECT(KernelConfig)
TGEMM_JSON_OBJECT(TrialResult)
TGEMM_JSON_OBJECT(ArchLimits)
TGEMM_JSON_OBJECT(DeviceInfo)
TGEMM_JSON_OBJECT(TimingOptions)
TGEMM_JSON_OBJECT(CublasTiming)
TGEMM_JSON_OBJECT(Comparison)
TGEMM_JSON_OBJECT(CeilingMeasurements)

#undef TGEMM_JSON_OBJECT

}  // namespace tgemm
