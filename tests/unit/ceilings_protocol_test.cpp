// The worker protocol's "ceilings" request and answer: they round-trip through the wire
// form, and the answer becomes one device_ceilings row per rate reached.
#include <gtest/gtest.h>

#include <variant>

#include "src/core/error.h"
#include "tuner/evaluate/worker_protocol.h"

namespace tgemm {
namespace {

TEST(CeilingsProtocol, request_and_answer_round_trip) {
  EXPECT_EQ(encode_request(CeilingsRequest{}), "{\"type\":\"ceilings\"}");
  EXPECT_TRUE(std::holds_alternative<CeilingsRequest>(decode_request("{\"type\":\"ceilings\"}")));
  CeilingMeasurements m;
  m.ok = true;
  m.copy_bytes_per_s = 4.1e12;
  m.copy_detail = "1024 MiB";
  m.ffma_flops = 5.2e13;
  m.ffma_source = "nvrtc_ffma_kernel";
  m.f16_flops = 7e14;
  m.tf32_flops = 3.5e14;
  WorkerResponse response;
  response.body = CeilingsResponse{m};
  const WorkerResponse back = decode_response(encode_response(response));
  const auto* answer = std::get_if<CeilingsResponse>(&back.body);
  ASSERT_NE(answer, nullptr);
  EXPECT_EQ(answer->ceilings.copy_bytes_per_s, 4.1e12);
  EXPECT_EQ(answer->ceilings.ffma_source, "nvrtc_ffma_kernel");
  EXPECT_EQ(answer->ceilings.bf16_flops, 0);
}

TEST(CeilingsProtocol, rows_leave_out_rates_not_reached) {
  CeilingMeasurements m;
  m.copy_bytes_per_s = 4.1e12;
  m.ffma_flops = 5.2e13;
  m.ffma_source = "cublasSgemm";
  m.f16_flops = 7e14;
  const auto rows = ceiling_rows(m);
  ASSERT_EQ(rows.size(), 3u);
  EXPECT_EQ(rows[0].kind, kCopyBandwidthCeiling);
  EXPECT_EQ(rows[1].kind, kFfmaCeiling);
  EXPECT_EQ(rows[1].source, "cublasSgemm");
  EXPECT_EQ(rows[2].kind, "f16");
  EXPECT_EQ(rows[2].source, "cublasGemmEx");
}

TEST(CeilingsProtocol, missing_field_is_named) {
  try {
    decode_response("{\"type\":\"ceilings\",\"worker_exits\":false,\"ceilings\":{\"ok\":true}}");
    FAIL() << "a ceilings answer without its rates was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("error"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tgemm
