// The messages between WorkerClient (tuner) and tgemm-worker (GPU), and their wire form.
// Newline-delimited JSON: one message per line, a JSON object whose "type" names it
// ({"type":"evaluate","config":{...},...}). Field mappings: worker_protocol.cpp, json_codec.h.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

#include "src/core/device_info.h"
#include "src/core/kernel_config.h"
#include "src/core/problem.h"
#include "src/core/trial_result.h"
#include "tuner/evaluate/evaluation_types.h"

namespace tgemm {

// The worker's ends of its two pipes; its stdin/stdout/stderr stay free for library chatter.
inline constexpr int kWorkerRequestFd = 3;
inline constexpr int kWorkerResponseFd = 4;
// Longer lines are a protocol error (a confused peer), not something to allocate.
inline constexpr size_t kMaxFrameBytes = size_t(64) << 20;

// ---- Requests (tuner -> worker) --------------------------------------------------------

struct ProbeRequest {
  static constexpr const char* kType = "probe";
};

// Fresh random inputs, the cuBLAS reference and (when time_cublas) cuBLAS timing.
struct PrepareRequest {
  static constexpr const char* kType = "prepare";
  Problem problem;
  TimingOptions timing;
  float alpha = 1.0f;
  float beta = 0.0f;         // must be 0 when problem.beta_zero
  bool time_cublas = true;   // false when re-preparing on a restarted worker
  bool time_vendor = false;  // with time_cublas: the vendor calls as contenders too
};

// A cubin travels as a file (written by the client), never inside a frame. The config's
// family (by template name, in the worker's registry) says which entries to load and how
// to launch them.
struct EvaluateRequest {
  static constexpr const char* kType = "evaluate";
  KernelConfig config;
  std::string cubin_path;
  // > 0: a kernel whose two checked, warm runs each take longer than this cannot be the best;
  // it is reported with the faster instead of being timed in full (saves most of a tuning run).
  double cutoff_us = 0;
};

struct CompareRequest {
  static constexpr const char* kType = "compare";
  KernelConfig config;
  std::string cubin_path;
};

// Measures the device's ceilings (copy bandwidth, FFMA and tensor peaks); no problem needed.
struct CeilingsRequest {
  static constexpr const char* kType = "ceilings";
};

// The worker exits without answering.
struct QuitRequest {
  static constexpr const char* kType = "quit";
};

using WorkerRequest = std::variant<ProbeRequest, PrepareRequest, EvaluateRequest, CompareRequest,
                                   CeilingsRequest, QuitRequest>;

// ---- Responses (worker -> tuner) -------------------------------------------------------

struct ProbeResponse {
  static constexpr const char* kType = "probe";
  std::optional<DeviceInfo> device;
  std::string why;  // when there is no device: "no CUDA driver/device (...)"
};

struct PrepareResponse {
  static constexpr const char* kType = "prepare";
  CublasTiming cublas;
};

struct EvaluateResponse {
  static constexpr const char* kType = "evaluate";
  TrialResult result;
};

struct CompareResponse {
  static constexpr const char* kType = "compare";
  Comparison comparison;
};

struct CeilingsResponse {
  static constexpr const char* kType = "ceilings";
  CeilingMeasurements ceilings;
};

// The worker could not understand the request (a version mismatch or a bug, never a kernel).
struct ErrorResponse {
  static constexpr const char* kType = "error";
  std::string error;
};

struct WorkerResponse {
  std::variant<ProbeResponse, PrepareResponse, EvaluateResponse, CompareResponse, CeilingsResponse,
               ErrorResponse>
      body;
  // The worker's CUDA context is ruined (sticky error): it exits right after this answer.
  bool worker_exits = false;
};

// ---- Wire form ---------------------------------------------------------------------------

// One JSON object on one line (no newline); decoding throws Error("worker protocol: ...")
// naming the field on anything malformed: bad JSON, an unknown "type", a missing field or
// one of the wrong type.
std::string encode_request(const WorkerRequest& request);
WorkerRequest decode_request(std::string_view payload);
std::string encode_response(const WorkerResponse& response);
WorkerResponse decode_response(std::string_view payload);
// "evaluate", "prepare", ...: the "type" of the message, for messages and logs.
std::string request_kind(const WorkerRequest& request);

// The payload and its terminating newline; throws Error when the payload holds a newline or
// is longer than kMaxFrameBytes.
std::string encode_frame(std::string_view payload);

// Splits a byte stream that arrives in arbitrary pieces into lines.
class FrameDecoder {
 public:
  void feed(const char* data, size_t size) { buffer_.append(data, size); }
  // The next complete line (without its newline), or nullopt until more bytes arrive;
  // throws Error once a line runs past kMaxFrameBytes without ending.
  std::optional<std::string> next();
  // True when a partial line is buffered (EOF now would cut a message short).
  bool has_partial() const { return !buffer_.empty(); }

 private:
  std::string buffer_;
  size_t scanned_ = 0;  // bytes of buffer_ known to hold no newline
};

// Blocking helpers for the worker side. read_frame returns false on EOF between lines and
// throws Error on a read error or EOF inside a line; write_frame throws Error when the peer
// is gone.
bool read_frame(int fd, FrameDecoder& decoder, std::string* payload);
void write_frame(int fd, std::string_view payload);

}  // namespace tgemm
