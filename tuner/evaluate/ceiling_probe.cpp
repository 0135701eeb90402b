#include "tuner/evaluate/ceiling_probe.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nvrtc.h>

#include <algorithm>
#include <functional>
#include <memory>
#include <vector>

#include "src/core/error.h"
#include "src/cuda/cuda_check.h"
#include "src/cuda/cuda_event.h"
#include "src/cuda/cuda_library.h"
#include "src/cuda/device_buffer.h"

namespace tgemm {
namespace {

constexpr int kWarmups = 2;
constexpr int kRuns = 15;

// Median milliseconds of `launch` on `stream`, each run timed with its own pair of events.
double median_ms(cudaStream_t stream, const std::function<void()>& launch) {
  for (int i = 0; i < kWarmups; ++i) launch();
  std::vector<double> ms;
  CudaEvent start, stop;
  for (int i = 0; i < kRuns; ++i) {
    start.record(stream);
    launch();
    stop.record(stream);
    TGEMM_CUDA_CHECK(cudaEventSynchronize(stop.get()));
    ms.push_back(stop.elapsed_ms_since(start));
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void measure_copy(cudaStream_t stream, CeilingMeasurements* m) {
  size_t free_bytes = 0, total = 0;
  TGEMM_CUDA_CHECK(cudaMemGetInfo(&free_bytes, &total));
  const size_t bytes = std::min<size_t>(size_t(1) << 30, free_bytes / 4) & ~size_t(255);
  DeviceBuffer a(bytes), b(bytes);
  TGEMM_CUDA_CHECK(cudaMemsetAsync(a.get(), 1, bytes, stream));
  const double ms = median_ms(stream, [&] {
    TGEMM_CUDA_CHECK(cudaMemcpyAsync(b.get(), a.get(), bytes, cudaMemcpyDeviceToDevice, stream));
  });
  m->copy_bytes_per_s = 2.0 * double(bytes) / (ms * 1e-3);  // each byte read and written
  m->copy_detail = fmt::format("{} MiB copy, read + write, median of {}", bytes >> 20, kRuns);
}

// Eight independent FMA chains per thread keep the pipes full; the store nobody takes keeps
// the compiler from dropping the work.
constexpr const char* kFfmaSource = R"cuda(
extern "C" __global__ void ffma_peak(float* out, int iterations, float seed) {
  float a[8];
  for (int j = 0; j < 8; ++j) a[j] = seed + threadIdx.x + j;
  const float x = 1.0f + 1e-7f * seed, y = 1e-7f;
  for (int i = 0; i < iterations; ++i) {
#pragma unroll
    for (int u = 0; u < 16; ++u) {
#pragma unroll
      for (int j = 0; j < 8; ++j) a[j] = fmaf(a[j], x, y);
    }
  }
  float s = 0;
  for (int j = 0; j < 8; ++j) s += a[j];
  if (s == -1.2345f) out[threadIdx.x] = s;
}
)cuda";

}  // namespace

std::vector<char> probe_cubin(const char* source, const char* file, int major, int minor) {
  nvrtcProgram program;
  if (nvrtcCreateProgram(&program, source, file, 0, nullptr, nullptr) != NVRTC_SUCCESS)
    fail("nvrtcCreateProgram failed for {}", file);
  const std::string arch = fmt::format("--gpu-architecture=sm_{}{}", major, minor);
  const char* options[] = {arch.c_str()};  // NVRTC optimises by default (and has no -O3)
  const nvrtcResult rc = nvrtcCompileProgram(program, 1, options);
  size_t size = 0;
  std::vector<char> cubin;
  if (rc == NVRTC_SUCCESS && nvrtcGetCUBINSize(program, &size) == NVRTC_SUCCESS) {
    cubin.resize(size);
    nvrtcGetCUBIN(program, cubin.data());
  }
  nvrtcDestroyProgram(&program);
  if (cubin.empty()) fail("NVRTC could not compile {} ({})", file, nvrtcGetErrorString(rc));
  return cubin;
}

std::vector<char> ffma_probe_cubin(int major, int minor) {
  return probe_cubin(kFfmaSource, "ffma_peak.cu", major, minor);
}

namespace {

void measure_ffma_kernel(int device, cudaStream_t stream, CeilingMeasurements* m) {
  cudaDeviceProp prop;
  TGEMM_CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
  const CudaLibrary library(ffma_probe_cubin(prop.major, prop.minor));
  const cudaKernel_t kernel = library.kernel("ffma_peak");
  DeviceBuffer out(1024 * sizeof(float));
  const int threads = 1024, blocks = prop.multiProcessorCount * 4;
  int iterations = 2048;
  float* out_ptr = out.get<float>();
  float seed = 1.0f;
  void* args[] = {&out_ptr, &iterations, &seed};
  const double ms = median_ms(stream, [&] {
    TGEMM_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel), dim3(blocks),
                                      dim3(threads), args, 0, stream));
  });
  const double flops = 2.0 * 16 * 8 * double(iterations) * threads * blocks;
  m->ffma_flops = flops / (ms * 1e-3);
  m->ffma_source = "nvrtc_ffma_kernel";
  m->ffma_detail = fmt::format("{} x {} threads x {} FMAs, median of {}", blocks, threads,
                               16 * 8 * iterations, kRuns);
}

// FLOP/s of one n^3 cublasGemmEx with inputs of `type` under `compute`.
double gemm_rate(cublasHandle_t handle, cudaStream_t stream, int n, cudaDataType type,
                 cudaDataType c_type, cublasComputeType_t compute) {
  const size_t in_bytes = (type == CUDA_R_32F ? 4 : 2), out_bytes = (c_type == CUDA_R_32F ? 4 : 2);
  DeviceBuffer a(size_t(n) * n * in_bytes), b(size_t(n) * n * in_bytes),
      c(size_t(n) * n * out_bytes);
  // Non-zero inputs (0x3c bytes) so the tensor cores do real work.
  TGEMM_CUDA_CHECK(cudaMemsetAsync(a.get(), 0x3c, a.bytes(), stream));
  TGEMM_CUDA_CHECK(cudaMemsetAsync(b.get(), 0x3c, b.bytes(), stream));
  const float alpha = 1.0f, beta = 0.0f;
  const double ms = median_ms(stream, [&] {
    const cublasStatus_t s =
        cublasGemmEx(handle, CUBLAS_OP_N, CUBLAS_OP_N, n, n, n, &alpha, a.get(), type, n, b.get(),
                     type, n, &beta, c.get(), c_type, n, compute, CUBLAS_GEMM_DEFAULT);
    if (s != CUBLAS_STATUS_SUCCESS) fail("cublasGemmEx failed: {}", cublasGetStatusString(s));
  });
  return 2.0 * double(n) * n * n / (ms * 1e-3);
}

void measure_gemms(cudaStream_t stream, bool ffma_missing, CeilingMeasurements* m) {
  cublasHandle_t handle = nullptr;
  if (cublasCreate(&handle) != CUBLAS_STATUS_SUCCESS) fail("cublasCreate failed");
  std::unique_ptr<cublasContext, decltype(&cublasDestroy)> owner(handle, cublasDestroy);
  cublasSetStream(handle, stream);
  constexpr int n = 8192;
  m->f16_flops = gemm_rate(handle, stream, n, CUDA_R_16F, CUDA_R_16F, CUBLAS_COMPUTE_32F);
  m->bf16_flops = gemm_rate(handle, stream, n, CUDA_R_16BF, CUDA_R_16BF, CUBLAS_COMPUTE_32F);
  m->tf32_flops =
      gemm_rate(handle, stream, n, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_FAST_TF32);
  m->tensor_detail = fmt::format("{0}x{0}x{0} NN, median of {1}", n, kRuns);
  if (ffma_missing) {
    m->ffma_flops =
        gemm_rate(handle, stream, n, CUDA_R_32F, CUDA_R_32F, CUBLAS_COMPUTE_32F_PEDANTIC);
    m->ffma_source = "cublasSgemm";
    m->ffma_detail = fmt::format("{0}x{0}x{0} SGEMM (pedantic), median of {1}", n, kRuns);
  }
}

}  // namespace

CeilingMeasurements measure_ceilings(int device) {
  CeilingMeasurements m;
  try {
    TGEMM_CUDA_CHECK(cudaSetDevice(device));
    CudaStream stream;
    measure_copy(stream.get(), &m);
    std::string ffma_error;
    try {
      measure_ffma_kernel(device, stream.get(), &m);
    } catch (const Error& e) {
      ffma_error = e.what();  // the SGEMM below is the reached ceiling instead
    }
    measure_gemms(stream.get(), m.ffma_flops <= 0, &m);
    m.ok = true;
    if (!ffma_error.empty()) m.error = "FFMA kernel: " + ffma_error + "; used cuBLAS SGEMM";
  } catch (const std::exception& e) {
    m.error = e.what();
  }
  return m;
}

}  // namespace tgemm
