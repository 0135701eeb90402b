// What the evaluator measures kernels on: each matrix in a device buffer of its element type,
// placed at the least-aligned address its alignment allows and followed by poisoned guards, with
// a host image of its values (what the references read), and the random numbers that fill it.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "src/core/dtype.h"
#include "src/cuda/device_buffer.h"

namespace tgemm {

// splitmix64: fast, and every 64-bit seed gives a good stream.
struct Rng {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Odd multiples of 2^-24 in (-1, 1): exact in float and never zero.
  float uniform() { return float(double(2 * (next() >> 40) + 1) * 0x1p-24 - 1.0); }
};

// The f32 poison (all bits set): a NaN in every type, and what unwritten elements hold.
float poison_value();

// Elements of poison after each matrix: catches reads and writes just past the end.
inline constexpr int64_t kGuardElements = 64;

// One matrix in a device buffer of its element type, between poisoned guards. Its first
// element sits at the least-aligned offset its alignment (bytes) allows, so a kernel meets the
// worst pointer it may be given: 16 -> 0, 8 -> 8 bytes, ...
struct GuardedMatrix {
  DType type = DType::f32;
  int64_t rows = 0, cols = 0, ld = 0, offset = 0, elements = 0;  // in elements
  DeviceBuffer buffer;

  GuardedMatrix() = default;
  GuardedMatrix(DType t, int64_t r, int64_t c, int64_t l, int align_bytes);
  int bytes_per_element() const { return element_bytes(type); }
  void* data() const { return buffer.get<unsigned char>() + offset * bytes_per_element(); }
  double matrix_bytes() const { return double(rows) * double(ld) * bytes_per_element(); }

  // Host image as f32: poison everywhere (padding, guards), random values inside the matrix,
  // already rounded to the element type, so host references see what the GPU sees. A kernel
  // that reads outside the matrix turns its result into NaN.
  std::vector<float> host_image(Rng& rng) const;
  // `image` (f32, as host_image makes) in this matrix's element type, into the buffer.
  void upload(const std::vector<float>& image, cudaStream_t stream,
              std::vector<unsigned char>* staging) const;
  // The whole buffer back as f32 (16-bit poison stays poison).
  void download(cudaStream_t stream, std::vector<unsigned char>* staging,
                std::vector<float>* out) const;
};

// The matrix's host image (as host_image makes it) from its first element on, widened to
// double, in a new device buffer: the FP64 reference reads exactly the values the kernel reads.
DeviceBuffer widened(const GuardedMatrix& m, const std::vector<float>& image, cudaStream_t stream);

// A strided batch is measured as one tall matrix per operand: its members' rows one after the
// other (`stride` a whole number of rows), so the guards, the poison and every check see the
// whole batch at once. The rows of that matrix; throws Error for strides it cannot stack.
int64_t stacked_rows(const char* operand, int64_t rows, int64_t ld, int64_t stride, int64_t batch);

}  // namespace tgemm
