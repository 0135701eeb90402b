// Round trips of every worker message (newline-delimited JSON), the framing around them, and
// malformed input of every kind: each is an Error naming what is wrong, never a crash.
#include "tuner/evaluate/worker_protocol.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "src/core/error.h"
#include "src/core/vendor_call.h"
#include "tuner/evaluate/json_codec.h"

namespace tgemm {
namespace {

// Newlines, quotes, JSON/YAML-special text and non-ASCII: what error strings and paths hold.
const std::string kNastyText =
    "line one\nline two: \"quoted\" and 'single' {\"type\":\"quit\"}\n  - not: a list\n"
    "tab\there, backslash \\ , nul-free control \x01\x1f, unicode \xC3\xA9\xE2\x82\xAC\n";

// Doubles that a short decimal form would not carry exactly.
constexpr double kTenth = 0.1;
constexpr double kTiny = 1e-300;
constexpr double kThird = 1.0 / 3.0;
constexpr double kDenormal = 4.9406564584124654e-324;
// Above 2^53: exact only if integers never pass through a double.
constexpr int64_t kHuge = (int64_t(1) << 53) + 1;

// Parameters out of alphabetical order: the order must survive.
KernelConfig sample_config() {
  return KernelConfig{"some_family", {{"SPLIT_K", 4}, {"BM", 128}, {"BN", 64}, {"BIG", kHuge}}};
}

Problem sample_problem() {
  Problem p;
  p.types = gemm_types("bf16", "f32");
  p.op_a = Op::T;
  p.op_b = Op::N;
  p.m = 255;
  p.n = 129;
  p.k = kHuge;
  p.lda = kHuge + 2;
  p.ldb = 4098;
  p.ldc = 300;
  p.align_a = 4;
  p.align_b = 2;
  p.align_c = 1;
  p.beta_zero = false;
  return p;
}

DeviceInfo sample_device() {
  DeviceInfo d;
  d.ordinal = 1;
  d.name = "NVIDIA H200 \"quoted\"";
  d.arch = "sm_90";
  d.sm_count = 132;
  d.l2_bytes = kHuge;
  d.clock_khz = 1980000;
  d.memory_clock_khz = 3201000;
  d.driver_version = 13000;
  d.runtime_version = 12090;
  d.limits = ArchLimits{"sm_90", 1024, 2048, 254, 65536, 32768, 232448, 233472};
  return d;
}

TrialResult sample_trial(TrialStatus status) {
  TrialResult r;
  r.config = sample_config();
  r.status = status;
  r.error = kNastyText;
  r.time_min_us = kTenth;
  r.time_median_us = kThird;
  r.time_max_us = 1e300;
  r.runs = 42;
  r.tflops = 17.123456789012345;
  r.max_rel_error = kTiny;
  return r;
}

WorkerRequest round_trip(const WorkerRequest& r) { return decode_request(encode_request(r)); }
WorkerResponse round_trip(const WorkerResponse& r) { return decode_response(encode_response(r)); }

void expect_problem_eq(const Problem& out, const Problem& in) {
  EXPECT_EQ(out.types, in.types);
  EXPECT_EQ(out.op_a, in.op_a);
  EXPECT_EQ(out.op_b, in.op_b);
  EXPECT_EQ(out.m, in.m);
  EXPECT_EQ(out.n, in.n);
  EXPECT_EQ(out.k, in.k);
  EXPECT_EQ(out.lda, in.lda);
  EXPECT_EQ(out.ldb, in.ldb);
  EXPECT_EQ(out.ldc, in.ldc);
  EXPECT_EQ(out.align_a, in.align_a);
  EXPECT_EQ(out.align_b, in.align_b);
  EXPECT_EQ(out.align_c, in.align_c);
  EXPECT_EQ(out.beta_zero, in.beta_zero);
  EXPECT_EQ(out.key(), in.key());
}

// The Error text of decoding `payload`, or "" when it decoded.
template <class Decode>
std::string error_of(Decode decode, const std::string& payload) {
  try {
    decode(payload);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}
std::string request_error(const std::string& payload) { return error_of(decode_request, payload); }
std::string response_error(const std::string& payload) {
  return error_of(decode_response, payload);
}

// ---- Round trips -----------------------------------------------------------------------------

TEST(WorkerProtocol, round_trips_probe_and_quit_requests) {
  EXPECT_TRUE(std::holds_alternative<ProbeRequest>(round_trip(ProbeRequest{})));
  EXPECT_TRUE(std::holds_alternative<QuitRequest>(round_trip(QuitRequest{})));
}

TEST(WorkerProtocol, round_trips_prepare_request_with_every_field_set) {
  PrepareRequest in;
  in.problem = sample_problem();
  in.timing = TimingOptions{5, 12, 345, kTiny, kTenth};
  in.alpha = 0.1f;
  in.beta = -1.5f;
  in.time_cublas = false;
  const auto out = std::get<PrepareRequest>(round_trip(in));
  expect_problem_eq(out.problem, in.problem);
  EXPECT_EQ(out.timing.warmup_runs, 5);
  EXPECT_EQ(out.timing.min_runs, 12);
  EXPECT_EQ(out.timing.max_runs, 345);
  EXPECT_EQ(out.timing.max_ms, kTiny);
  EXPECT_EQ(out.timing.stable_rel, kTenth);
  EXPECT_EQ(out.alpha, 0.1f);
  EXPECT_EQ(out.beta, -1.5f);
  EXPECT_FALSE(out.time_cublas);
}

TEST(WorkerProtocol, round_trips_evaluate_and_compare_requests) {
  const EvaluateRequest in{sample_config(), "/tmp/dir with space/\"k\"\n\xC3\xA9.cubin", kTenth};
  const auto out = std::get<EvaluateRequest>(round_trip(in));
  EXPECT_EQ(out.config, in.config);  // parameters, values and their order
  EXPECT_EQ(out.config.canonical_name(), in.config.canonical_name());
  EXPECT_EQ(out.config.get("BIG"), kHuge);
  EXPECT_EQ(out.cubin_path, in.cubin_path);
  EXPECT_EQ(out.cutoff_us, kTenth);

  const CompareRequest cin{sample_config(), "/tmp/x.cubin"};
  const auto cout = std::get<CompareRequest>(round_trip(cin));
  EXPECT_EQ(cout.config, cin.config);
  EXPECT_EQ(cout.cubin_path, cin.cubin_path);
}

TEST(WorkerProtocol, round_trips_probe_responses_with_and_without_device) {
  const DeviceInfo d = sample_device();
  const auto with = std::get<ProbeResponse>(round_trip(WorkerResponse{ProbeResponse{d, ""}}).body);
  ASSERT_TRUE(with.device);
  EXPECT_EQ(with.device->ordinal, 1);
  EXPECT_EQ(with.device->name, d.name);
  EXPECT_EQ(with.device->arch, d.arch);
  EXPECT_EQ(with.device->sm_count, 132);
  EXPECT_EQ(with.device->l2_bytes, kHuge);
  EXPECT_EQ(with.device->clock_khz, d.clock_khz);
  EXPECT_EQ(with.device->memory_clock_khz, d.memory_clock_khz);
  EXPECT_EQ(with.device->driver_version, 13000);
  EXPECT_EQ(with.device->runtime_version, 12090);
  const ArchLimits& l = with.device->limits;
  EXPECT_EQ(l.arch, "sm_90");
  EXPECT_EQ(l.max_threads_per_block, 1024);
  EXPECT_EQ(l.max_threads_per_sm, 2048);
  EXPECT_EQ(l.max_regs_per_thread, 254);
  EXPECT_EQ(l.regs_per_sm, 65536);
  EXPECT_EQ(l.regs_per_block, 32768);
  EXPECT_EQ(l.smem_per_block_optin, 232448);
  EXPECT_EQ(l.smem_per_sm, 233472);
  EXPECT_EQ(with.why, "");

  const auto without = std::get<ProbeResponse>(
      round_trip(WorkerResponse{ProbeResponse{std::nullopt, "no CUDA driver/device\n(x)"}}).body);
  EXPECT_FALSE(without.device);
  EXPECT_EQ(without.why, "no CUDA driver/device\n(x)");
}

TEST(WorkerProtocol, round_trips_prepare_response_with_exact_doubles) {
  TrialResult lt;
  lt.config = cublaslt_call({21, 18, 9, 4, 2, 1, 3, 5, 7});
  lt.status = TrialStatus::ok;
  lt.time_median_us = kTenth;
  const CublasTiming t{false, kNastyText, kTenth, kTiny, kDenormal, 77, kTiny, {lt}};
  const auto out = round_trip(WorkerResponse{PrepareResponse{t}, true});
  EXPECT_TRUE(out.worker_exits);
  const auto& c = std::get<PrepareResponse>(out.body).cublas;
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.error, kNastyText);
  EXPECT_EQ(c.min_us, kTenth);  // exact, not merely close
  EXPECT_EQ(c.median_us, kTiny);
  EXPECT_EQ(c.max_us, kDenormal);
  EXPECT_EQ(c.runs, 77);
  EXPECT_EQ(c.sgemm_rel_error, kTiny);
  ASSERT_EQ(c.vendor_trials.size(), 1u);  // the vendor calls raced on the problem
  EXPECT_EQ(c.vendor_trials[0].config, lt.config);
  EXPECT_EQ(c.vendor_trials[0].time_median_us, kTenth);
}

TEST(WorkerProtocol, prepare_response_without_an_sgemm_error_carries_null) {
  CublasTiming t;
  t.ok = true;
  const std::string wire = encode_response(WorkerResponse{PrepareResponse{t}, false});
  EXPECT_NE(wire.find("\"sgemm_rel_error\":null"), std::string::npos) << wire;
  const auto out = decode_response(wire);
  EXPECT_FALSE(std::get<PrepareResponse>(out.body).cublas.sgemm_rel_error);
}

TEST(WorkerProtocol, round_trips_evaluate_response_of_every_status) {
  for (TrialStatus status :
       {TrialStatus::ok, TrialStatus::invalid, TrialStatus::compile_failed,
        TrialStatus::resource_exceeded, TrialStatus::launch_failed, TrialStatus::crashed,
        TrialStatus::timeout, TrialStatus::wrong_result}) {
    const TrialResult r = sample_trial(status);
    const auto out =
        std::get<EvaluateResponse>(round_trip(WorkerResponse{EvaluateResponse{r}}).body).result;
    EXPECT_EQ(out.status, status);
    EXPECT_EQ(out.config, r.config);
    EXPECT_EQ(out.error, r.error);
    EXPECT_EQ(out.time_min_us, kTenth);
    EXPECT_EQ(out.time_median_us, kThird);
    EXPECT_EQ(out.time_max_us, 1e300);
    EXPECT_EQ(out.runs, 42);
    EXPECT_EQ(out.tflops, r.tflops);
    EXPECT_EQ(out.max_rel_error, kTiny);
  }
}

TEST(WorkerProtocol, round_trips_infinite_and_nan_errors) {
  TrialResult r = sample_trial(TrialStatus::wrong_result);
  r.max_rel_error = std::numeric_limits<double>::infinity();
  r.time_min_us = -std::numeric_limits<double>::infinity();
  r.tflops = std::numeric_limits<double>::quiet_NaN();
  r.time_max_us = -0.0;
  const auto out =
      std::get<EvaluateResponse>(round_trip(WorkerResponse{EvaluateResponse{r}}).body).result;
  EXPECT_EQ(out.max_rel_error, std::numeric_limits<double>::infinity());
  EXPECT_EQ(out.time_min_us, -std::numeric_limits<double>::infinity());
  EXPECT_TRUE(std::isnan(out.tflops));
  EXPECT_TRUE(std::signbit(out.time_max_us));
}

TEST(WorkerProtocol, round_trips_compare_and_error_responses) {
  const Comparison c{true, "", 812.5, kTenth, 31};
  const auto out =
      std::get<CompareResponse>(round_trip(WorkerResponse{CompareResponse{c}}).body).comparison;
  EXPECT_TRUE(out.ok);
  EXPECT_EQ(out.error, "");
  EXPECT_EQ(out.tgemm_median_us, 812.5);
  EXPECT_EQ(out.cublas_median_us, kTenth);
  EXPECT_EQ(out.runs, 31);

  const auto err =
      std::get<ErrorResponse>(round_trip(WorkerResponse{ErrorResponse{kNastyText}, true}).body);
  EXPECT_EQ(err.error, kNastyText);
}

TEST(WorkerProtocol, keeps_strings_that_look_like_other_values) {
  for (const std::string text :
       {"", "~", "null", "true", "123", "inf", "nan", "-.inf", "{\"a\": 1}", "'", "\\"}) {
    const auto out = std::get<ErrorResponse>(round_trip(WorkerResponse{ErrorResponse{text}}).body);
    EXPECT_EQ(out.error, text);
  }
}

TEST(WorkerProtocol, replaces_invalid_utf8_instead_of_throwing) {
  const std::string bad = "cuda said \xFF\xFE here";
  const auto out = std::get<ErrorResponse>(round_trip(WorkerResponse{ErrorResponse{bad}}).body);
  EXPECT_EQ(out.error, "cuda said \xEF\xBF\xBD\xEF\xBF\xBD here");  // two U+FFFD
}

TEST(WorkerProtocol, message_is_one_json_line_that_starts_with_its_type) {
  const std::string line = encode_request(EvaluateRequest{sample_config(), kNastyText, 1});
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  EXPECT_EQ(line.rfind("{\"type\":\"evaluate\",", 0), 0u) << line;
  EXPECT_EQ(encode_response(WorkerResponse{ErrorResponse{"x"}, false}),
            "{\"type\":\"error\",\"worker_exits\":false,\"error\":\"x\"}");
  EXPECT_EQ(request_kind(EvaluateRequest{}), "evaluate");
  EXPECT_EQ(request_kind(PrepareRequest{}), "prepare");
  EXPECT_EQ(request_kind(QuitRequest{}), "quit");
}

TEST(WorkerProtocol, value_types_map_through_json_on_their_own) {
  const Json j = sample_problem();
  EXPECT_EQ(j["types"], "bf16_out_f32");
  EXPECT_EQ(j["op_a"], "T");
  EXPECT_EQ(j["k"], kHuge);
  expect_problem_eq(j.get<Problem>(), sample_problem());
  const Json c = sample_config();
  EXPECT_EQ(c.dump(),
            "{\"template\":\"some_family\",\"params\":"
            "{\"SPLIT_K\":4,\"BM\":128,\"BN\":64,\"BIG\":9007199254740993}}");
  EXPECT_EQ(c.get<KernelConfig>(), sample_config());
  const Json t = TimingOptions{};
  EXPECT_EQ(t.get<TimingOptions>().stable_rel, TimingOptions{}.stable_rel);
}

// ---- Malformed input -------------------------------------------------------------------------

TEST(WorkerProtocol, rejects_text_that_is_not_json) {
  for (const std::string bad :
       {"", " ", "kind: \"probe\"", "{", "{\"type\":\"probe\"", "{\"type\":\"probe\"}x",
        "{'type':'probe'}", "{\"type\":\"quit\",}", "\"\xFF\"", "{\"type\":\"quit\"}\n{}"}) {
    const std::string error = request_error(bad);
    EXPECT_NE(error.find("worker protocol: unreadable request (not JSON"), std::string::npos)
        << bad << " -> " << error;
  }
}

TEST(WorkerProtocol, rejects_json_that_is_not_a_message) {
  EXPECT_NE(request_error("[1,2]").find("must be a JSON object, not array"), std::string::npos);
  EXPECT_NE(request_error("42").find("must be a JSON object, not number"), std::string::npos);
  EXPECT_NE(request_error("{}").find("needs a string field 'type'"), std::string::npos);
  EXPECT_NE(request_error("{\"type\":7}").find("needs a string field 'type'"), std::string::npos);
}

TEST(WorkerProtocol, rejects_an_unknown_type_listing_the_known_ones) {
  EXPECT_EQ(request_error("{\"type\":\"launch_missiles\"}"),
            "worker protocol: unknown request type 'launch_missiles' "
            "(known: probe, prepare, evaluate, compare, ceilings, quit)");
  EXPECT_NE(response_error("{\"type\":\"quit\",\"worker_exits\":false}")
                .find("unknown response type 'quit'"),
            std::string::npos);
}

TEST(WorkerProtocol, rejects_a_missing_field_naming_its_path) {
  EXPECT_EQ(request_error("{\"type\":\"prepare\"}"),
            "worker protocol: prepare request: 'problem' is missing");
  Json prepare = Json::parse(encode_request(PrepareRequest{}));
  prepare["problem"].erase("ldc");
  EXPECT_EQ(request_error(prepare.dump()),
            "worker protocol: prepare request: 'problem.ldc' is missing");
  Json evaluate = Json::parse(encode_response(WorkerResponse{EvaluateResponse{}}));
  evaluate["result"]["config"].erase("template");
  EXPECT_NE(response_error(evaluate.dump()).find("'result.config.template' is missing"),
            std::string::npos);
  EXPECT_NE(response_error("{\"type\":\"evaluate\"}").find("'worker_exits' is missing"),
            std::string::npos);
  EXPECT_NE(response_error("{\"type\":\"probe\",\"worker_exits\":false,\"why\":\"\"}")
                .find("'device' is missing"),
            std::string::npos);
}

TEST(WorkerProtocol, rejects_a_field_of_the_wrong_type_naming_it) {
  struct Case {
    const char* path;  // JSON pointer into a valid prepare request
    Json value;
    const char* expected;
  };
  const std::vector<Case> cases = {
      {"/problem/m", "128", "'problem.m' must be an integer, not string \"128\""},
      {"/problem/m", 1.5, "'problem.m' must be an integer, not number 1.5"},
      {"/problem/m", 1e30, "'problem.m' must be an integer"},
      {"/problem/m", true, "'problem.m' must be an integer, not boolean true"},
      {"/problem/m", nullptr, "'problem.m' must be an integer, not null"},
      {"/problem/m", Json::parse("18446744073709551615"), "'problem.m' is out of range"},
      {"/problem/align_a", int64_t(1) << 40, "'problem.align_a' is out of range"},
      {"/problem/align_a", -(int64_t(1) << 40), "'problem.align_a' is out of range"},
      {"/problem/beta_zero", 1, "'problem.beta_zero' must be true or false, not number 1"},
      {"/problem/types", "f99", "'problem.types' is not valid: unknown dtype 'f99'"},
      {"/problem/types", 3, "'problem.types' must be a string"},
      {"/problem/op_a", "X", "'problem.op_a' is not valid"},
      {"/problem", Json::array(), "'problem' is not a JSON object"},
      {"/timing/max_ms", "fast", "'timing.max_ms' must be a number (or \"inf\""},
      {"/timing/max_ms", Json::object(), "'timing.max_ms' must be a number"},
      {"/alpha", Json::array({1}), "'alpha' must be a number"},
      {"/time_cublas", "true", "'time_cublas' must be true or false"},
  };
  for (const Case& c : cases) {
    Json j = Json::parse(encode_request(PrepareRequest{}));
    j[Json::json_pointer(c.path)] = c.value;
    const std::string error = request_error(j.dump());
    EXPECT_NE(error.find(std::string("worker protocol: prepare request: ") + c.expected),
              std::string::npos)
        << c.path << " = " << c.value.dump() << " -> " << error;
  }
}

TEST(WorkerProtocol, rejects_bad_kernel_parameters_naming_them) {
  Json j = Json::parse(encode_request(EvaluateRequest{sample_config(), "p", 0}));
  j["config"]["params"]["BN"] = "64";
  EXPECT_NE(request_error(j.dump()).find("'config.params.BN' must be an integer"),
            std::string::npos);
  j["config"]["params"] = Json::array({Json::array({"BN", 64})});
  EXPECT_NE(request_error(j.dump()).find("'config.params' must be an object"), std::string::npos);
  j["config"]["params"] = Json::object({{"", 1}});
  EXPECT_NE(request_error(j.dump()).find("'config.params' has a parameter with an empty name"),
            std::string::npos);
  Json r = Json::parse(encode_response(WorkerResponse{EvaluateResponse{sample_trial({})}}));
  r["result"]["status"] = "fine";
  EXPECT_NE(response_error(r.dump()).find("'result.status' is not valid"), std::string::npos);
}

TEST(WorkerProtocol, survives_hostile_nesting_and_sizes) {
  // Deep nesting must not exhaust the stack (parsing, error text, destruction).
  const std::string deep = std::string(200000, '[') + std::string(200000, ']');
  EXPECT_NE(request_error("{\"type\":\"prepare\",\"problem\":" + deep + "}").find("'problem'"),
            std::string::npos);
  EXPECT_NE(request_error("{\"type\":\"prepare\",\"alpha\":" + deep + "}").find("'problem'"),
            std::string::npos);
  Json j = Json::parse(encode_request(PrepareRequest{}));
  j.erase("alpha");
  const std::string no_alpha = j.dump();
  const std::string error =
      request_error(no_alpha.substr(0, no_alpha.size() - 1) + ",\"alpha\":" + deep + "}");
  EXPECT_NE(error.find("'alpha' must be a number (or \"inf\", \"-inf\", \"nan\"), not array"),
            std::string::npos)
      << error;
  EXPECT_NE(request_error(std::string(200000, '{')).find("not JSON"), std::string::npos);
}

TEST(WorkerProtocol, every_truncation_of_every_message_is_an_error) {
  const std::vector<std::string> messages = {
      encode_request(PrepareRequest{sample_problem(), {}, 0.5f, 2.0f, true}),
      encode_request(EvaluateRequest{sample_config(), kNastyText, kTenth}),
      encode_response(WorkerResponse{ProbeResponse{sample_device(), ""}}),
      encode_response(WorkerResponse{EvaluateResponse{sample_trial(TrialStatus::ok)}, true}),
  };
  for (size_t m = 0; m < messages.size(); ++m) {
    const std::string& full = messages[m];
    for (size_t cut = 0; cut < full.size(); ++cut) {
      const std::string prefix = full.substr(0, cut);
      const std::string error = m < 2 ? request_error(prefix) : response_error(prefix);
      EXPECT_EQ(error.rfind("worker protocol: ", 0), 0u) << prefix << " -> " << error;
    }
  }
}

// ---- Framing ---------------------------------------------------------------------------------

TEST(WorkerProtocol, frames_survive_arbitrary_splits) {
  const std::string a = encode_request(PrepareRequest{});
  const std::string b = encode_response(WorkerResponse{ErrorResponse{kNastyText}});
  const std::string stream = encode_frame(a) + encode_frame(b) + encode_frame("");
  for (size_t piece : {size_t(1), size_t(2), size_t(7), size_t(64), stream.size()}) {
    FrameDecoder decoder;
    std::vector<std::string> frames;
    for (size_t at = 0; at < stream.size(); at += piece) {
      decoder.feed(stream.data() + at, std::min(piece, stream.size() - at));
      while (auto f = decoder.next()) frames.push_back(*f);
    }
    ASSERT_EQ(frames.size(), 3u) << "piece " << piece;
    EXPECT_EQ(frames[0], a);
    EXPECT_EQ(frames[1], b);
    EXPECT_EQ(frames[2], "");
    EXPECT_FALSE(decoder.has_partial());
  }
}

TEST(WorkerProtocol, encode_frame_rejects_newlines_and_oversize_payloads) {
  EXPECT_EQ(encode_frame("{}"), "{}\n");
  EXPECT_THROW(encode_frame("{}\n{}"), Error);
  EXPECT_THROW(encode_frame(std::string(kMaxFrameBytes + 1, ' ')), Error);
}

TEST(WorkerProtocol, rejects_a_line_over_the_limit_before_it_ends) {
  FrameDecoder decoder;
  const std::string chunk(size_t(1) << 20, 'x');
  size_t fed = 0;
  bool threw = false;
  while (fed <= kMaxFrameBytes + chunk.size() && !threw) {
    decoder.feed(chunk.data(), chunk.size());
    fed += chunk.size();
    try {
      EXPECT_FALSE(decoder.next());
    } catch (const Error& e) {
      threw = true;
      EXPECT_NE(std::string(e.what()).find("limit"), std::string::npos) << e.what();
    }
  }
  EXPECT_TRUE(threw);
  EXPECT_GT(fed, kMaxFrameBytes);  // not before the limit either

  FrameDecoder whole;  // a complete line that is too long is refused too
  std::string line(kMaxFrameBytes + 1, 'x');
  line += '\n';
  whole.feed(line.data(), line.size());
  EXPECT_THROW(whole.next(), Error);
}

TEST(WorkerProtocol, reads_and_writes_frames_over_a_pipe) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  const std::string first = encode_response(WorkerResponse{ErrorResponse{kNastyText}});
  write_frame(fds[1], first);
  write_frame(fds[1], "second");
  ::close(fds[1]);
  FrameDecoder decoder;
  std::string payload;
  ASSERT_TRUE(read_frame(fds[0], decoder, &payload));
  EXPECT_EQ(payload, first);
  ASSERT_TRUE(read_frame(fds[0], decoder, &payload));
  EXPECT_EQ(payload, "second");
  EXPECT_FALSE(read_frame(fds[0], decoder, &payload));  // clean EOF
  ::close(fds[0]);

  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "{\"type\":\"pro", 12), 12);
  ::close(fds[1]);
  FrameDecoder cut;
  try {
    read_frame(fds[0], cut, &payload);
    FAIL() << "a line cut short by EOF must be an error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("mid-message"), std::string::npos) << e.what();
  }
  ::close(fds[0]);
}

}  // namespace
}  // namespace tgemm
