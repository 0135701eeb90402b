#include "tuner/evaluate/worker_protocol.h"

#include <unistd.h>
#include <yaml-cpp/yaml.h>

#include <cerrno>
#include <cstring>
#include <type_traits>

#include "src/core/error.h"

namespace tgemm {

namespace {

// ---- Emitting ------------------------------------------------------------------------------

// Every string double-quoted: newlines, quotes, "null", "~" and "" all survive the round trip.
void put(YAML::Emitter& out, const char* key, const std::string& value) {
  out << YAML::Key << key << YAML::Value << YAML::DoubleQuoted << value;
}
void put(YAML::Emitter& out, const char* key, const char* value) {
  put(out, key, std::string(value));
}
void put(YAML::Emitter& out, const char* key, bool value) {
  out << YAML::Key << key << YAML::Value << value;
}
void put(YAML::Emitter& out, const char* key, int value) {
  out << YAML::Key << key << YAML::Value << value;
}
void put(YAML::Emitter& out, const char* key, int64_t value) {
  out << YAML::Key << key << YAML::Value << static_cast<long long>(value);
}
void put(YAML::Emitter& out, const char* key, double value) {
  out << YAML::Key << key << YAML::Value << value;
}

void begin(YAML::Emitter& out, const char* key) {
  out << YAML::Key << key << YAML::Value << YAML::BeginMap;
}

void put_config(YAML::Emitter& out, const char* key, const KernelConfig& config) {
  begin(out, key);
  put(out, "template", config.template_name);
  put(out, "params", config.params_text());  // keeps the declared order, hence the name
  out << YAML::EndMap;
}

void put_problem(YAML::Emitter& out, const Problem& p) {
  begin(out, "problem");
  put(out, "dtype", p.types.name());
  put(out, "layout", p.layout());
  put(out, "m", p.m);
  put(out, "n", p.n);
  put(out, "k", p.k);
  put(out, "lda", p.lda);
  put(out, "ldb", p.ldb);
  put(out, "ldc", p.ldc);
  put(out, "align_a", p.align_a);
  put(out, "align_b", p.align_b);
  put(out, "align_c", p.align_c);
  put(out, "beta_zero", p.beta_zero);
  out << YAML::EndMap;
}

void put_timing(YAML::Emitter& out, const TimingOptions& t) {
  begin(out, "timing");
  put(out, "warmup_runs", t.warmup_runs);
  put(out, "min_runs", t.min_runs);
  put(out, "max_runs", t.max_runs);
  put(out, "max_ms", t.max_ms);
  put(out, "stable_rel", t.stable_rel);
  out << YAML::EndMap;
}

void put_device(YAML::Emitter& out, const DeviceInfo& d) {
  begin(out, "device");
  put(out, "ordinal", d.ordinal);
  put(out, "name", d.name);
  put(out, "arch", d.arch);
  put(out, "sm_count", d.sm_count);
  put(out, "l2_bytes", d.l2_bytes);
  put(out, "clock_khz", d.clock_khz);
  put(out, "memory_clock_khz", d.memory_clock_khz);
  put(out, "driver_version", d.driver_version);
  put(out, "runtime_version", d.runtime_version);
  begin(out, "limits");
  put(out, "arch", d.limits.arch);
  put(out, "max_threads_per_block", d.limits.max_threads_per_block);
  put(out, "max_threads_per_sm", d.limits.max_threads_per_sm);
  put(out, "max_regs_per_thread", d.limits.max_regs_per_thread);
  put(out, "regs_per_sm", d.limits.regs_per_sm);
  put(out, "regs_per_block", d.limits.regs_per_block);
  put(out, "smem_per_block_optin", d.limits.smem_per_block_optin);
  put(out, "smem_per_sm", d.limits.smem_per_sm);
  out << YAML::EndMap;
  out << YAML::EndMap;
}

void put_trial(YAML::Emitter& out, const TrialResult& r) {
  begin(out, "result");
  put_config(out, "config", r.config);
  put(out, "status", to_string(r.status));
  put(out, "error", r.error);
  put(out, "time_min_us", r.time_min_us);
  put(out, "time_median_us", r.time_median_us);
  put(out, "time_max_us", r.time_max_us);
  put(out, "runs", r.runs);
  put(out, "tflops", r.tflops);
  put(out, "max_rel_error", r.max_rel_error);
  out << YAML::EndMap;
}

void put_kernel_request(YAML::Emitter& out, const KernelConfig& config, const std::string& cubin,
                        const std::string& entry) {
  put_config(out, "config", config);
  put(out, "cubin_path", cubin);
  put(out, "entry", entry);
}

YAML::Emitter& new_emitter(YAML::Emitter& out) {
  out.SetDoublePrecision(17);  // doubles round-trip exactly
  out.SetFloatPrecision(9);
  out << YAML::BeginMap;
  return out;
}

std::string finish(YAML::Emitter& out) {
  out << YAML::EndMap;
  if (!out.good()) fail("worker protocol: cannot emit a message: {}", out.GetLastError());
  return std::string(out.c_str(), out.size());
}

// ---- Parsing -------------------------------------------------------------------------------

YAML::Node child(const YAML::Node& node, const char* key) {
  if (!node.IsMap()) fail("worker protocol: expected a map holding '{}'", key);
  YAML::Node value = node[key];
  if (!value.IsDefined()) fail("worker protocol: missing '{}'", key);
  return value;
}

template <typename T>
T get(const YAML::Node& node, const char* key) {
  YAML::Node value = child(node, key);
  try {
    if constexpr (std::is_same_v<T, std::string>) {
      if (!value.IsScalar()) fail("worker protocol: '{}' is not a string", key);
      return value.Scalar();
    } else {
      return value.as<T>();
    }
  } catch (const YAML::Exception& e) {
    fail("worker protocol: bad value for '{}': {}", key, e.what());
  }
}

KernelConfig get_config(const YAML::Node& node, const char* key) {
  YAML::Node c = child(node, key);
  return KernelConfig::from_params_text(get<std::string>(c, "template"),
                                        get<std::string>(c, "params"));
}

Problem get_problem(const YAML::Node& node) {
  YAML::Node n = child(node, "problem");
  Problem p;
  p.types = parse_gemm_types(get<std::string>(n, "dtype"));
  parse_layout(get<std::string>(n, "layout"), &p.op_a, &p.op_b);
  p.m = get<int64_t>(n, "m");
  p.n = get<int64_t>(n, "n");
  p.k = get<int64_t>(n, "k");
  p.lda = get<int64_t>(n, "lda");
  p.ldb = get<int64_t>(n, "ldb");
  p.ldc = get<int64_t>(n, "ldc");
  p.align_a = get<int>(n, "align_a");
  p.align_b = get<int>(n, "align_b");
  p.align_c = get<int>(n, "align_c");
  p.beta_zero = get<bool>(n, "beta_zero");
  return p;
}

TimingOptions get_timing(const YAML::Node& node) {
  YAML::Node t = child(node, "timing");
  TimingOptions o;
  o.warmup_runs = get<int>(t, "warmup_runs");
  o.min_runs = get<int>(t, "min_runs");
  o.max_runs = get<int>(t, "max_runs");
  o.max_ms = get<double>(t, "max_ms");
  o.stable_rel = get<double>(t, "stable_rel");
  return o;
}

DeviceInfo get_device(const YAML::Node& node) {
  YAML::Node d = child(node, "device");
  DeviceInfo info;
  info.ordinal = get<int>(d, "ordinal");
  info.name = get<std::string>(d, "name");
  info.arch = get<std::string>(d, "arch");
  info.sm_count = get<int>(d, "sm_count");
  info.l2_bytes = get<int64_t>(d, "l2_bytes");
  info.clock_khz = get<int>(d, "clock_khz");
  info.memory_clock_khz = get<int>(d, "memory_clock_khz");
  info.driver_version = get<int>(d, "driver_version");
  info.runtime_version = get<int>(d, "runtime_version");
  YAML::Node l = child(d, "limits");
  info.limits.arch = get<std::string>(l, "arch");
  info.limits.max_threads_per_block = get<int>(l, "max_threads_per_block");
  info.limits.max_threads_per_sm = get<int>(l, "max_threads_per_sm");
  info.limits.max_regs_per_thread = get<int>(l, "max_regs_per_thread");
  info.limits.regs_per_sm = get<int>(l, "regs_per_sm");
  info.limits.regs_per_block = get<int>(l, "regs_per_block");
  info.limits.smem_per_block_optin = get<int>(l, "smem_per_block_optin");
  info.limits.smem_per_sm = get<int>(l, "smem_per_sm");
  return info;
}

TrialResult get_trial(const YAML::Node& node) {
  YAML::Node r = child(node, "result");
  TrialResult t;
  t.config = get_config(r, "config");
  t.status = parse_trial_status(get<std::string>(r, "status"));
  t.error = get<std::string>(r, "error");
  t.time_min_us = get<double>(r, "time_min_us");
  t.time_median_us = get<double>(r, "time_median_us");
  t.time_max_us = get<double>(r, "time_max_us");
  t.runs = get<int>(r, "runs");
  t.tflops = get<double>(r, "tflops");
  t.max_rel_error = get<double>(r, "max_rel_error");
  return t;
}

YAML::Node load(std::string_view payload) {
  try {
    YAML::Node root = YAML::Load(std::string(payload));
    if (!root.IsMap()) fail("worker protocol: a message must be a YAML map");
    return root;
  } catch (const YAML::Exception& e) {
    fail("worker protocol: unreadable message: {}", e.what());
  }
}

template <class... Fs>
struct Overloaded : Fs... {
  using Fs::operator()...;
};
template <class... Fs>
Overloaded(Fs...) -> Overloaded<Fs...>;

}  // namespace

std::string request_kind(const WorkerRequest& request) {
  return std::visit(Overloaded{[](const ProbeRequest&) { return "probe"; },
                               [](const PrepareRequest&) { return "prepare"; },
                               [](const EvaluateRequest&) { return "evaluate"; },
                               [](const CompareRequest&) { return "compare"; },
                               [](const QuitRequest&) { return "quit"; }},
                    request);
}

std::string encode_request(const WorkerRequest& request) {
  YAML::Emitter out;
  new_emitter(out);
  // `kind` comes first, so a reader (or a shell fake in the tests) sees it on line one.
  put(out, "kind", request_kind(request));
  std::visit(Overloaded{[](const ProbeRequest&) {}, [](const QuitRequest&) {},
                        [&](const PrepareRequest& r) {
                          put_problem(out, r.problem);
                          put_timing(out, r.timing);
                          put(out, "alpha", double(r.alpha));
                          put(out, "beta", double(r.beta));
                          put(out, "time_cublas", r.time_cublas);
                        },
                        [&](const EvaluateRequest& r) {
                          put_kernel_request(out, r.config, r.cubin_path, r.entry);
                          put(out, "cutoff_us", r.cutoff_us);
                        },
                        [&](const CompareRequest& r) {
                          put_kernel_request(out, r.config, r.cubin_path, r.entry);
                        }},
             request);
  return finish(out);
}

WorkerRequest decode_request(std::string_view payload) {
  YAML::Node root = load(payload);
  const std::string kind = get<std::string>(root, "kind");
  if (kind == "probe") return ProbeRequest{};
  if (kind == "quit") return QuitRequest{};
  if (kind == "prepare") {
    PrepareRequest r;
    r.problem = get_problem(root);
    r.timing = get_timing(root);
    r.alpha = float(get<double>(root, "alpha"));
    r.beta = float(get<double>(root, "beta"));
    r.time_cublas = get<bool>(root, "time_cublas");
    return r;
  }
  if (kind == "evaluate")
    return EvaluateRequest{get_config(root, "config"), get<std::string>(root, "cubin_path"),
                           get<std::string>(root, "entry"), get<double>(root, "cutoff_us")};
  if (kind == "compare")
    return CompareRequest{get_config(root, "config"), get<std::string>(root, "cubin_path"),
                          get<std::string>(root, "entry")};
  fail("worker protocol: unknown request kind '{}'", kind);
}

std::string encode_response(const WorkerResponse& response) {
  YAML::Emitter out;
  new_emitter(out);
  std::visit(Overloaded{[&](const ProbeResponse& r) {
                          put(out, "kind", "probe");
                          put(out, "has_device", r.device.has_value());
                          if (r.device) put_device(out, *r.device);
                          put(out, "why", r.why);
                        },
                        [&](const PrepareResponse& r) {
                          put(out, "kind", "prepare");
                          put(out, "ok", r.cublas.ok);
                          put(out, "error", r.cublas.error);
                          put(out, "min_us", r.cublas.min_us);
                          put(out, "median_us", r.cublas.median_us);
                          put(out, "max_us", r.cublas.max_us);
                          put(out, "runs", r.cublas.runs);
                        },
                        [&](const EvaluateResponse& r) {
                          put(out, "kind", "evaluate");
                          put_trial(out, r.result);
                        },
                        [&](const CompareResponse& r) {
                          put(out, "kind", "compare");
                          put(out, "ok", r.comparison.ok);
                          put(out, "error", r.comparison.error);
                          put(out, "tgemm_median_us", r.comparison.tgemm_median_us);
                          put(out, "cublas_median_us", r.comparison.cublas_median_us);
                          put(out, "runs", r.comparison.runs);
                        },
                        [&](const ErrorResponse& r) {
                          put(out, "kind", "error");
                          put(out, "error", r.error);
                        }},
             response.body);
  put(out, "worker_exits", response.worker_exits);
  return finish(out);
}

WorkerResponse decode_response(std::string_view payload) {
  YAML::Node root = load(payload);
  const std::string kind = get<std::string>(root, "kind");
  WorkerResponse response;
  response.worker_exits = get<bool>(root, "worker_exits");
  if (kind == "probe") {
    ProbeResponse r;
    if (get<bool>(root, "has_device")) r.device = get_device(root);
    r.why = get<std::string>(root, "why");
    response.body = r;
  } else if (kind == "prepare") {
    PrepareResponse r;
    r.cublas.ok = get<bool>(root, "ok");
    r.cublas.error = get<std::string>(root, "error");
    r.cublas.min_us = get<double>(root, "min_us");
    r.cublas.median_us = get<double>(root, "median_us");
    r.cublas.max_us = get<double>(root, "max_us");
    r.cublas.runs = get<int>(root, "runs");
    response.body = r;
  } else if (kind == "evaluate") {
    response.body = EvaluateResponse{get_trial(root)};
  } else if (kind == "compare") {
    CompareResponse r;
    r.comparison.ok = get<bool>(root, "ok");
    r.comparison.error = get<std::string>(root, "error");
    r.comparison.tgemm_median_us = get<double>(root, "tgemm_median_us");
    r.comparison.cublas_median_us = get<double>(root, "cublas_median_us");
    r.comparison.runs = get<int>(root, "runs");
    response.body = r;
  } else if (kind == "error") {
    response.body = ErrorResponse{get<std::string>(root, "error")};
  } else {
    fail("worker protocol: unknown response kind '{}'", kind);
  }
  return response;
}

// ---- Framing ---------------------------------------------------------------------------------

std::string encode_frame(std::string_view payload) {
  if (payload.size() > kMaxFrameBytes)
    fail("worker protocol: message of {} bytes exceeds the {} byte limit", payload.size(),
         kMaxFrameBytes);
  std::string frame = std::to_string(payload.size());
  frame += '\n';
  frame.append(payload);
  return frame;
}

std::optional<std::string> FrameDecoder::next() {
  const size_t newline = buffer_.find('\n');
  // 20 digits hold any size_t; a longer line without a newline is garbage, not a slow writer.
  if (newline == std::string::npos) {
    if (buffer_.size() > 20)
      fail("worker protocol: frame header '{}...' is not a byte count", buffer_.substr(0, 20));
    return std::nullopt;
  }
  if (newline == 0 || newline > 20)
    fail("worker protocol: frame header '{}' is not a byte count", buffer_.substr(0, newline));
  size_t length = 0;
  for (size_t i = 0; i < newline; ++i) {
    const char c = buffer_[i];
    if (c < '0' || c > '9')
      fail("worker protocol: frame header '{}' is not a byte count", buffer_.substr(0, newline));
    length = length * 10 + size_t(c - '0');
    if (length > kMaxFrameBytes)
      fail("worker protocol: frame of {}+ bytes exceeds the {} byte limit", length, kMaxFrameBytes);
  }
  if (buffer_.size() - newline - 1 < length) return std::nullopt;
  std::string payload = buffer_.substr(newline + 1, length);
  buffer_.erase(0, newline + 1 + length);
  return payload;
}

bool read_frame(int fd, FrameDecoder& decoder, std::string* payload) {
  char chunk[65536];
  for (;;) {
    if (auto frame = decoder.next()) {
      *payload = std::move(*frame);
      return true;
    }
    const ssize_t got = ::read(fd, chunk, sizeof chunk);
    if (got < 0) {
      if (errno == EINTR) continue;
      fail("worker protocol: read from fd {} failed: {}", fd, std::strerror(errno));
    }
    if (got == 0) {
      if (decoder.has_partial()) fail("worker protocol: the peer closed the pipe mid-message");
      return false;
    }
    decoder.feed(chunk, size_t(got));
  }
}

void write_frame(int fd, std::string_view payload) {
  const std::string frame = encode_frame(payload);
  size_t done = 0;
  while (done < frame.size()) {
    const ssize_t wrote = ::write(fd, frame.data() + done, frame.size() - done);
    if (wrote < 0) {
      if (errno == EINTR) continue;
      fail("worker protocol: write to fd {} failed: {}", fd, std::strerror(errno));
    }
    done += size_t(wrote);
  }
}

}  // namespace tgemm
