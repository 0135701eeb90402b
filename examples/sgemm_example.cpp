// Multiplies two random matrices with tgemm (the kernel tuned for the shape, as stored in
// $TGEMM_DB or tgemm.db) and checks the result against a plain CPU loop.
//   sgemm_example [m n k]
#include <tgemm/tgemm.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

int main(int argc, char** argv) {
  const int m = argc > 3 ? std::atoi(argv[1]) : 256;
  const int n = argc > 3 ? std::atoi(argv[2]) : 192;
  const int k = argc > 3 ? std::atoi(argv[3]) : 320;
  std::vector<float> a(size_t(m) * k), b(size_t(k) * n), c(size_t(m) * n);
  std::mt19937 rng(42);
  std::uniform_real_distribution<float> dist(-1, 1);
  for (float& x : a) x = dist(rng);
  for (float& x : b) x = dist(rng);

  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    std::printf("no CUDA device: nothing to run (tgemm loaded fine)\n");
    return 2;
  }
  void *va = nullptr, *vb = nullptr, *vc = nullptr;
  cudaMalloc(&va, a.size() * 4);
  cudaMalloc(&vb, b.size() * 4);
  cudaMalloc(&vc, c.size() * 4);
  float *da = static_cast<float*>(va), *db = static_cast<float*>(vb), *dc = static_cast<float*>(vc);
  cudaMemcpy(da, a.data(), a.size() * 4, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice);
  try {
    tgemm::Handle handle;  // $TGEMM_DB, else tgemm.db; works through defaults without one
    // Row-major: C (m x n) = A (m x k) * B (k x n).
    handle.sgemm('N', 'N', m, n, k, 1.0f, da, k, db, n, 0.0f, dc, n);
    const tgemm::Selection path = handle.selection('N', 'N', m, n, k, da, k, db, n, dc, n);
    cudaMemcpy(c.data(), dc, c.size() * 4, cudaMemcpyDeviceToHost);
    double err = 0, norm = 0;
    for (int i = 0; i < m; ++i)
      for (int j = 0; j < n; ++j) {
        double ref = 0;
        for (int p = 0; p < k; ++p) ref += double(a[size_t(i) * k + p]) * b[size_t(p) * n + j];
        err += (c[size_t(i) * n + j] - ref) * (c[size_t(i) * n + j] - ref);
        norm += ref * ref;
      }
    std::printf("%dx%dx%d via %s: relative error %.2e\n", m, n, k, tgemm::to_string(path),
                std::sqrt(err / norm));
    cudaFree(va);
    cudaFree(vb);
    cudaFree(vc);
    return std::sqrt(err / norm) < 1e-5 ? 0 : 1;
  } catch (const tgemm::Error& e) {
    std::printf("tgemm error: %s\n", e.what());
    return 1;
  }
}
