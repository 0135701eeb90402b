// The parameters of a fused epilogue (common/epilogue.cuh), one definition for the host
// (src/launch/launch_plan.h) and the device. What the epilogue computes (activation, bias and
// where it runs along, aux) is fixed by the build; these are the call's pointers.
//
// Only an epilogue's builds (TGEMM_EPILOGUE=1) and FP8 ones (for their scales, the last
// fields) read it: their kernels take it as a second
// parameter after GemmParams (a TMA family's, which has no room below its maps at offset 128,
// as the last field of TmaGemmParams). The host always passes both parameters; a plain build
// declares one, and the driver reads only the parameters a kernel declares, so a plain
// build's block, options and machine code are what they were before epilogues. The cost of an
// epilogue build is the parameter bank's 64 more bytes, read once per thread where C is written:
// no device-side descriptor to allocate or copy per call (which graph capture would have to
// replay), and no load in the main loop.
#pragma once

namespace tgemm {

struct EpilogueParams {
  // m (bias along M) or n (along N) elements of the build's bias type; unread without a bias.
  const void* bias;
  // D (m x n, C's element type): where the result goes; C itself when the call gives no D.
  void* d;
  // The pre-activation values (m x n, C's type), in a build that keeps them (TGEMM_AUX).
  void* aux;
  long long ldd, ldaux;  // leading dimensions in elements
  int d_aligned16;       // 1 when D's pointer and ldd allow 16-byte stores (as c_aligned16)
  int aux_aligned16;     // the same for aux
  // FP8 inputs' per-tensor scales (one f32 each, on the device, as cuBLASLt's A/B scale
  // pointers; null is 1): D = scale_a * scale_b * alpha * op(A) op(B) + beta * C. Read by FP8
  // builds only, which take this block whatever their epilogue.
  const float* scale_a;
  const float* scale_b;
};

}  // namespace tgemm
