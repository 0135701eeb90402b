#include "tuner/evaluate/guarded_matrix.h"

#include <cstring>

#include "src/core/error.h"
#include "src/cuda/cuda_check.h"
#include "tuner/evaluate/host_elements.h"

namespace tgemm {

namespace {

int64_t worst_offset(int align_bytes, int element_bytes) {
  return align_bytes == 16 ? 0 : align_bytes / element_bytes;
}

}  // namespace

float poison_value() {
  float x;
  std::memcpy(&x, &kPoisonBits32, sizeof x);
  return x;
}

GuardedMatrix::GuardedMatrix(DType t, int64_t r, int64_t c, int64_t l, int align_bytes)
    : type(t),
      rows(r),
      cols(c),
      ld(l),
      offset(worst_offset(align_bytes, element_bytes(t))),
      elements(offset + r * l + kGuardElements),
      buffer(size_t(elements) * size_t(element_bytes(t))) {}

std::vector<float> GuardedMatrix::host_image(Rng& rng) const {
  std::vector<float> image(size_t(elements), poison_value());
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < cols; ++j)
      image[size_t(offset + i * ld + j)] = round_to(type, rng.uniform());
  return image;
}

void GuardedMatrix::upload(const std::vector<float>& image, cudaStream_t stream,
                           std::vector<unsigned char>* staging) const {
  *staging = to_bytes(type, image);
  TGEMM_CUDA_CHECK(cudaMemcpyAsync(buffer.get(), staging->data(), staging->size(),
                                   cudaMemcpyHostToDevice, stream));
  TGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));  // the staging buffer is reused
}

void GuardedMatrix::download(cudaStream_t stream, std::vector<unsigned char>* staging,
                             std::vector<float>* out) const {
  staging->resize(size_t(elements) * size_t(bytes_per_element()));
  TGEMM_CUDA_CHECK(cudaMemcpyAsync(staging->data(), buffer.get(), staging->size(),
                                   cudaMemcpyDeviceToHost, stream));
  TGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));
  *out = from_bytes(type, *staging);
}

DeviceBuffer widened(const GuardedMatrix& m, const std::vector<float>& image, cudaStream_t stream) {
  const std::vector<double> wide(image.begin() + m.offset, image.end());
  DeviceBuffer buffer(wide.size() * sizeof(double));
  TGEMM_CUDA_CHECK(
      cudaMemcpyAsync(buffer.get(), wide.data(), buffer.bytes(), cudaMemcpyHostToDevice, stream));
  TGEMM_CUDA_CHECK(cudaStreamSynchronize(stream));  // `wide` goes out of scope
  return buffer;
}

int64_t stacked_rows(const char* operand, int64_t rows, int64_t ld, int64_t stride, int64_t batch) {
  if (batch == 1) return rows;
  if (stride % ld != 0)
    fail("the tuner measures batches whose stride_{} is whole rows of {} (ld = {}), not {}",
         operand, operand, ld, stride);
  return (batch - 1) * (stride / ld) + rows;
}

}  // namespace tgemm
