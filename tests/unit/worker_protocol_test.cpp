// Round trips of every worker message and the framing around them.
#include "tuner/evaluate/worker_protocol.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <limits>

#include "src/core/error.h"
#include "tests/common/sgemm_configs.h"

namespace tgemm {
namespace {

// Newlines, quotes, YAML-special text and non-ASCII: what error strings and paths may hold.
const std::string kNastyText =
    "line one\nline two: \"quoted\" and 'single'\n  - not: a list\n# not a comment\n"
    "tab\there, backslash \\ , unicode \xC3\xA9\xE2\x82\xAC, trailing newline\n";

KernelConfig sample_config() {
  return testing::sgemm_config({{"BN", 64}, {"TN", 4}, {"SPLIT_K", 4}});
}

Problem sample_problem() {
  Problem p = Problem::packed(GemmTypes{}, Op::T, Op::N, 255, 129, 4097);
  p.lda = 300;
  p.align_a = 4;
  p.align_c = 1;
  p.beta_zero = false;
  return p;
}

WorkerRequest round_trip(const WorkerRequest& r) { return decode_request(encode_request(r)); }
WorkerResponse round_trip(const WorkerResponse& r) { return decode_response(encode_response(r)); }

TEST(WorkerProtocol, round_trips_probe_and_quit_requests) {
  EXPECT_TRUE(std::holds_alternative<ProbeRequest>(round_trip(ProbeRequest{})));
  EXPECT_TRUE(std::holds_alternative<QuitRequest>(round_trip(QuitRequest{})));
}

TEST(WorkerProtocol, round_trips_prepare_request) {
  PrepareRequest in;
  in.problem = sample_problem();
  in.timing = TimingOptions{5, 12, 345, 1234.5, 0.0125};
  in.alpha = 0.75f;
  in.beta = -1.5f;
  in.time_cublas = false;
  const auto out = std::get<PrepareRequest>(round_trip(in));
  EXPECT_EQ(out.problem.key(), in.problem.key());
  EXPECT_EQ(out.problem.lda, 300);
  EXPECT_EQ(out.problem.ldb, in.problem.ldb);
  EXPECT_EQ(out.problem.ldc, in.problem.ldc);
  EXPECT_EQ(out.problem.op_a, Op::T);
  EXPECT_EQ(out.timing.warmup_runs, 5);
  EXPECT_EQ(out.timing.min_runs, 12);
  EXPECT_EQ(out.timing.max_runs, 345);
  EXPECT_EQ(out.timing.max_ms, 1234.5);
  EXPECT_EQ(out.timing.stable_rel, 0.0125);
  EXPECT_EQ(out.alpha, 0.75f);
  EXPECT_EQ(out.beta, -1.5f);
  EXPECT_FALSE(out.time_cublas);
}

TEST(WorkerProtocol, round_trips_evaluate_and_compare_requests) {
  const EvaluateRequest in{sample_config(), "/tmp/dir with space/\"k\"\n.cubin", "sgemm_simt",
                           123.25};
  const auto out = std::get<EvaluateRequest>(round_trip(in));
  EXPECT_EQ(out.config, in.config);
  EXPECT_EQ(out.config.canonical_name(), in.config.canonical_name());
  EXPECT_EQ(out.cubin_path, in.cubin_path);
  EXPECT_EQ(out.entry, in.entry);
  EXPECT_EQ(out.cutoff_us, 123.25);

  const CompareRequest cin{sample_config(), "/tmp/x.cubin", "entry"};
  const auto cout = std::get<CompareRequest>(round_trip(cin));
  EXPECT_EQ(cout.config, cin.config);
  EXPECT_EQ(cout.cubin_path, cin.cubin_path);
}

TEST(WorkerProtocol, round_trips_probe_responses_with_and_without_device) {
  DeviceInfo d;
  d.ordinal = 1;
  d.name = "NVIDIA H200";
  d.arch = "sm_90";
  d.sm_count = 132;
  d.l2_bytes = 62914560;
  d.clock_khz = 1980000;
  d.memory_clock_khz = 3201000;
  d.driver_version = 13000;
  d.runtime_version = 13000;
  d.limits = arch_limits("sm_90");
  d.limits.max_regs_per_thread = 254;
  const auto with = std::get<ProbeResponse>(round_trip(WorkerResponse{ProbeResponse{d, ""}}).body);
  ASSERT_TRUE(with.device);
  EXPECT_EQ(with.device->name, d.name);
  EXPECT_EQ(with.device->arch, d.arch);
  EXPECT_EQ(with.device->ordinal, 1);
  EXPECT_EQ(with.device->sm_count, 132);
  EXPECT_EQ(with.device->l2_bytes, d.l2_bytes);
  EXPECT_EQ(with.device->clock_khz, d.clock_khz);
  EXPECT_EQ(with.device->memory_clock_khz, d.memory_clock_khz);
  EXPECT_EQ(with.device->driver_version, 13000);
  EXPECT_EQ(with.device->runtime_version, 13000);
  EXPECT_EQ(with.device->limits.arch, "sm_90");
  EXPECT_EQ(with.device->limits.smem_per_block_optin, d.limits.smem_per_block_optin);
  EXPECT_EQ(with.device->limits.smem_per_sm, d.limits.smem_per_sm);
  EXPECT_EQ(with.device->limits.max_regs_per_thread, 254);
  EXPECT_EQ(with.device->limits.max_threads_per_sm, d.limits.max_threads_per_sm);

  const auto without = std::get<ProbeResponse>(
      round_trip(WorkerResponse{ProbeResponse{std::nullopt, "no CUDA driver/device\n(x)"}}).body);
  EXPECT_FALSE(without.device);
  EXPECT_EQ(without.why, "no CUDA driver/device\n(x)");
}

TEST(WorkerProtocol, round_trips_prepare_response_with_nasty_error_text) {
  CublasTiming t;
  t.ok = false;
  t.error = kNastyText;
  t.min_us = 1.0 / 3.0;
  t.median_us = 123456.789012345;
  t.max_us = 1e-300;
  t.runs = 77;
  WorkerResponse in{PrepareResponse{t}, true};
  const auto out = round_trip(in);
  EXPECT_TRUE(out.worker_exits);
  const auto& c = std::get<PrepareResponse>(out.body).cublas;
  EXPECT_FALSE(c.ok);
  EXPECT_EQ(c.error, kNastyText);
  EXPECT_EQ(c.min_us, t.min_us);  // exact: doubles travel with 17 digits
  EXPECT_EQ(c.median_us, t.median_us);
  EXPECT_EQ(c.max_us, t.max_us);
  EXPECT_EQ(c.runs, 77);
}

TEST(WorkerProtocol, round_trips_evaluate_response_of_every_status) {
  for (TrialStatus status :
       {TrialStatus::ok, TrialStatus::invalid, TrialStatus::compile_failed,
        TrialStatus::resource_exceeded, TrialStatus::launch_failed, TrialStatus::crashed,
        TrialStatus::timeout, TrialStatus::wrong_result}) {
    TrialResult r;
    r.config = sample_config();
    r.status = status;
    r.error = kNastyText;
    r.time_min_us = 10.5;
    r.time_median_us = 11.25;
    r.time_max_us = 99.125;
    r.runs = 42;
    r.tflops = 17.123456789;
    r.max_rel_error = 3.5e-7;
    const auto out =
        std::get<EvaluateResponse>(round_trip(WorkerResponse{EvaluateResponse{r}}).body).result;
    EXPECT_EQ(out.status, status);
    EXPECT_EQ(out.config, r.config);
    EXPECT_EQ(out.error, r.error);
    EXPECT_EQ(out.time_min_us, r.time_min_us);
    EXPECT_EQ(out.time_median_us, r.time_median_us);
    EXPECT_EQ(out.time_max_us, r.time_max_us);
    EXPECT_EQ(out.runs, 42);
    EXPECT_EQ(out.tflops, r.tflops);
    EXPECT_EQ(out.max_rel_error, r.max_rel_error);
  }
}

TEST(WorkerProtocol, round_trips_infinite_and_nan_errors) {
  TrialResult r;
  r.config = sample_config();
  r.status = TrialStatus::wrong_result;
  r.max_rel_error = std::numeric_limits<double>::infinity();
  r.tflops = std::numeric_limits<double>::quiet_NaN();
  const auto out =
      std::get<EvaluateResponse>(round_trip(WorkerResponse{EvaluateResponse{r}}).body).result;
  EXPECT_TRUE(std::isinf(out.max_rel_error));
  EXPECT_TRUE(std::isnan(out.tflops));
}

TEST(WorkerProtocol, round_trips_compare_and_error_responses) {
  Comparison c;
  c.ok = true;
  c.error = "";
  c.tgemm_median_us = 812.5;
  c.cublas_median_us = 790.0625;
  c.runs = 31;
  const auto out =
      std::get<CompareResponse>(round_trip(WorkerResponse{CompareResponse{c}}).body).comparison;
  EXPECT_TRUE(out.ok);
  EXPECT_EQ(out.error, "");
  EXPECT_EQ(out.tgemm_median_us, 812.5);
  EXPECT_EQ(out.cublas_median_us, 790.0625);
  EXPECT_EQ(out.runs, 31);

  const auto err =
      std::get<ErrorResponse>(round_trip(WorkerResponse{ErrorResponse{kNastyText}}).body);
  EXPECT_EQ(err.error, kNastyText);
}

TEST(WorkerProtocol, keeps_strings_that_look_like_yaml_values) {
  for (const std::string text : {"", "~", "null", "true", "123", "-.inf", "- a", "{a: b}", "'"}) {
    const auto out = std::get<ErrorResponse>(round_trip(WorkerResponse{ErrorResponse{text}}).body);
    EXPECT_EQ(out.error, text);
  }
}

TEST(WorkerProtocol, request_starts_with_its_kind) {
  EXPECT_EQ(encode_request(ProbeRequest{}).rfind("kind: ", 0), 0u);
  EXPECT_EQ(request_kind(EvaluateRequest{}), "evaluate");
  EXPECT_EQ(request_kind(PrepareRequest{}), "prepare");
}

TEST(WorkerProtocol, rejects_malformed_messages) {
  EXPECT_THROW(decode_request("kind: [unclosed"), Error);
  EXPECT_THROW(decode_request("- just\n- a list\n"), Error);
  EXPECT_THROW(decode_request("kind: \"launch_missiles\""), Error);
  EXPECT_THROW(decode_request("kind: \"evaluate\"\nentry: \"x\""), Error);  // no config
  EXPECT_THROW(decode_response("kind: \"evaluate\"\nworker_exits: false"), Error);
  try {
    decode_request("kind: \"prepare\"\n");
    FAIL() << "expected an Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("missing 'problem'"), std::string::npos) << e.what();
  }
}

TEST(WorkerProtocol, frames_survive_arbitrary_splits) {
  const std::string a = encode_request(PrepareRequest{});
  const std::string b = kNastyText;
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

TEST(WorkerProtocol, rejects_bad_frame_headers) {
  for (const std::string& bad :
       std::vector<std::string>{"abc\n", "\n", "12x\n", "-5\n", "123456789012345678901234\n",
                                "99999999999\n", std::string(30, '7')}) {
    FrameDecoder decoder;
    decoder.feed(bad.data(), bad.size());
    EXPECT_THROW(decoder.next(), Error) << bad;
  }
}

TEST(WorkerProtocol, reads_and_writes_frames_over_a_pipe) {
  int fds[2];
  ASSERT_EQ(::pipe(fds), 0);
  write_frame(fds[1], kNastyText);
  write_frame(fds[1], "second");
  ::close(fds[1]);
  FrameDecoder decoder;
  std::string payload;
  ASSERT_TRUE(read_frame(fds[0], decoder, &payload));
  EXPECT_EQ(payload, kNastyText);
  ASSERT_TRUE(read_frame(fds[0], decoder, &payload));
  EXPECT_EQ(payload, "second");
  EXPECT_FALSE(read_frame(fds[0], decoder, &payload));  // clean EOF
  ::close(fds[0]);

  ASSERT_EQ(::pipe(fds), 0);
  ASSERT_EQ(::write(fds[1], "10\nabc", 6), 6);
  ::close(fds[1]);
  FrameDecoder cut;
  EXPECT_THROW(read_frame(fds[0], cut, &payload), Error);  // EOF inside a frame
  ::close(fds[0]);
}

}  // namespace
}  // namespace tgemm
