// JSON mappings of the value types the worker protocol carries (Problem, KernelConfig, ...),
// and the reader/writer that message mappings are written with. Each type lists its fields
// once, in a describe(io, value) overload that both directions share (json_codec.cpp).
#pragma once

#include <cmath>
#include <concepts>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "src/core/arch_limits.h"
#include "src/core/device_info.h"
#include "src/core/dtype.h"
#include "src/core/kernel_config.h"
#include "src/core/problem.h"
#include "src/core/trial_result.h"
#include "tgemm/tgemm.h"
#include "tuner/evaluate/evaluation_types.h"

namespace tgemm {

// Ordered: objects keep their fields in the order written ("type" first, parameters in the
// order the search space declares them).
using Json = nlohmann::ordered_json;

// A field that is missing or has the wrong type; `path` names it ("result.config.params.BM").
class JsonFieldError : public Error {
 public:
  JsonFieldError(std::string path, std::string problem)
      : Error((path.empty() ? std::string("the value") : "'" + path + "'") + " " + problem),
        path_(std::move(path)),
        problem_(std::move(problem)) {}
  const std::string& path() const { return path_; }
  const std::string& problem() const { return problem_; }
  // The same error one level up: "config" + "params.BM" -> "config.params.BM".
  JsonFieldError inside(const std::string& parent) const {
    return JsonFieldError(path_.empty() ? parent : parent + "." + path_, problem_);
  }

 private:
  std::string path_, problem_;
};

// ---- Value types (ADL hooks: `Json j = problem;`, `j.get<Problem>()`) ------------------------
// from_json throws JsonFieldError on a missing field or a wrong type, never anything else.
void to_json(Json& j, const Problem& value);
void from_json(const Json& j, Problem& value);
void to_json(Json& j, const KernelConfig& value);
void from_json(const Json& j, KernelConfig& value);
void to_json(Json& j, const TrialResult& value);
void from_json(const Json& j, TrialResult& value);
void to_json(Json& j, const ArchLimits& value);
void from_json(const Json& j, ArchLimits& value);
void to_json(Json& j, const DeviceInfo& value);
void from_json(const Json& j, DeviceInfo& value);
void to_json(Json& j, const TimingOptions& value);
void from_json(const Json& j, TimingOptions& value);
void to_json(Json& j, const CublasTiming& value);
void from_json(const Json& j, CublasTiming& value);
void to_json(Json& j, const Comparison& value);
void from_json(const Json& j, Comparison& value);
void to_json(Json& j, const CeilingMeasurements& value);
void from_json(const Json& j, CeilingMeasurements& value);

// ---- Scalars ---------------------------------------------------------------------------------
// Doubles travel with round-trip precision; inf and NaN (which JSON lacks) as "inf", "-inf",
// "nan". Enums travel as their to_string names. Integers are range-checked on the way in.
// Kernel parameters travel as an object in their declared order ({"BM": 128, ...}).
using KernelParams = std::vector<std::pair<std::string, int64_t>>;
template <class T>
Json encode_scalar(const T&) = delete;  // no silent int -> double: exact types only
Json encode_scalar(double value);
Json encode_scalar(DType value);
Json encode_scalar(const GemmTypes& value);
Json encode_scalar(Op value);
Json encode_scalar(TrialStatus value);
Json encode_scalar(const KernelParams& value);
void decode_scalar(const Json& j, bool& value);
void decode_scalar(const Json& j, int& value);
void decode_scalar(const Json& j, int64_t& value);
void decode_scalar(const Json& j, double& value);
void decode_scalar(const Json& j, float& value);
void decode_scalar(const Json& j, std::string& value);
void decode_scalar(const Json& j, DType& value);
void decode_scalar(const Json& j, GemmTypes& value);
void decode_scalar(const Json& j, Op& value);
void decode_scalar(const Json& j, TrialStatus& value);
void decode_scalar(const Json& j, KernelParams& value);

// describe() overloads take the value as T or const T; `Is<T> auto& v` accepts both.
template <class V, class T>
concept Is = std::same_as<std::remove_const_t<V>, T>;

// The io of describe() that fills a JSON object from a value.
class JsonWriter {
 public:
  explicit JsonWriter(Json& out) : out_(out) {}
  template <class T>
  void operator()(const char* key, const T& value) {
    out_[key] = encode(value);
  }

 private:
  template <class T>
  static Json encode(const T& value) {
    if constexpr (requires { encode_scalar(value); }) {
      return encode_scalar(value);
    } else {
      return Json(value);  // bool, integers, strings, and value types through to_json
    }
  }
  template <class T>
  static Json encode(const std::optional<T>& value) {
    return value ? encode(*value) : Json(nullptr);
  }
  static Json encode(const float& value) { return encode_scalar(double(value)); }

  Json& out_;
};

// The io of describe() that fills a value from a JSON object; throws JsonFieldError.
class JsonReader {
 public:
  explicit JsonReader(const Json& in) : in_(in) {}
  template <class T>
  void operator()(const char* key, T& value) const {
    const auto it = in_.find(key);
    if (it == in_.end()) throw JsonFieldError(key, "is missing");
    try {
      decode(*it, value);
    } catch (const JsonFieldError& e) {
      throw e.inside(key);
    }
  }

 private:
  template <class T>
  static void decode(const Json& j, T& value) {
    if constexpr (requires { decode_scalar(j, value); }) {
      decode_scalar(j, value);
    } else {
      from_json(j, value);  // a value type
    }
  }
  template <class T>
  static void decode(const Json& j, std::optional<T>& value) {
    if (j.is_null()) {
      value.reset();
    } else {
      decode(j, value.emplace());
    }
  }
  // A list of value types, each element's errors named by its index ("vendor_trials.2.runs").
  template <class T>
  requires(!requires(const Json& j, std::vector<T>& v) {
    decode_scalar(j, v);
  }) static void decode(const Json& j, std::vector<T>& values) {
    if (!j.is_array()) throw JsonFieldError("", "is not a JSON array");
    values.assign(j.size(), T{});
    for (size_t i = 0; i < j.size(); ++i) {
      try {
        decode(j[i], values[i]);
      } catch (const JsonFieldError& e) {
        throw e.inside(std::to_string(i));
      }
    }
  }

  const Json& in_;
};

// to_json / from_json bodies: an object holding the fields describe(io, value) lists.
template <class T>
void write_object(Json& j, const T& value) {
  j = Json::object();
  JsonWriter writer(j);
  describe(writer, value);
}
template <class T>
void read_object(const Json& j, T& value) {
  if (!j.is_object()) throw JsonFieldError("", "is not a JSON object");
  JsonReader reader(j);
  describe(reader, value);
}

}  // namespace tgemm
