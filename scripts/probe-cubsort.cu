// probe-cubsort: CUB's radix sort (cub::DeviceRadixSort, the sort under CuPy's and
// PyTorch's) called from C++ with nothing in between, beside the driver's copy of the same
// bytes, for issue 21's rows: 2^28 float32 and int32 keys, 2^28 float32 keys with int64
// indices (argsort), 2^27 float64 keys, and 512000 float32 keys plus a synchronize.
// On the device machine:
//
//   nvcc -O3 -arch=sm_90 -o /tmp/cubsort scripts/probe-cubsort.cu && /tmp/cubsort
//
// Each large figure is the median of 15 sorts timed by CUDA events (temporary storage
// allocated once, input copied back before each sort, outside the timing); the small one
// is the median wall time of 2000 sorts, each followed by cudaStreamSynchronize.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cub/device/device_radix_sort.cuh>
#include <cuda_runtime.h>

#define CK(x)                                                                      \
  do {                                                                             \
    cudaError_t r_ = (x);                                                          \
    if (r_ != cudaSuccess) {                                                       \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(r_)); \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

__global__ void fill(uint32_t *p, size_t n, uint32_t seed) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    uint32_t x = (uint32_t)i * 0x9E3779B9u ^ seed;
    x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
    p[i] = x;
  }
}

// uniform [0,1) floats from the random words (gpubench's input)
__global__ void tofloat(uint32_t *p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    float f = (p[i] >> 8) * (1.0f / 16777216.0f);
    p[i] = __float_as_uint(f);
  }
}

// uniform [0,1) doubles from pairs of random words
__global__ void todouble(uint64_t *p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    double d = (p[i] >> 11) * (1.0 / 9007199254740992.0);
    p[i] = __double_as_longlong(d);
  }
}

__global__ void iota64(int64_t *p, size_t n) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) p[i] = i;
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

template <typename K, typename V>
static void large(const char *name, size_t n, bool pairs, bool floats) {
  size_t kb = n * sizeof(K);
  K *kin, *kout, *ksrc;
  V *vin = nullptr, *vout = nullptr;
  CK(cudaMalloc(&kin, kb));
  CK(cudaMalloc(&kout, kb));
  CK(cudaMalloc(&ksrc, kb));
  fill<<<4096, 256>>>((uint32_t *)ksrc, kb / 4, 12345);
  if (floats && sizeof(K) == 4) tofloat<<<4096, 256>>>((uint32_t *)ksrc, n);
  if (floats && sizeof(K) == 8) todouble<<<4096, 256>>>((uint64_t *)ksrc, n);
  if (pairs) {
    CK(cudaMalloc(&vin, n * sizeof(V)));
    CK(cudaMalloc(&vout, n * sizeof(V)));
  }
  void *tmp = nullptr;
  size_t tb = 0;
  if (pairs)
    CK(cub::DeviceRadixSort::SortPairs(tmp, tb, kin, kout, vin, vout, n));
  else
    CK(cub::DeviceRadixSort::SortKeys(tmp, tb, kin, kout, n));
  CK(cudaMalloc(&tmp, tb));
  cudaEvent_t a, b;
  CK(cudaEventCreate(&a));
  CK(cudaEventCreate(&b));
  std::vector<double> t;
  for (int r = 0; r < 16; r++) {
    CK(cudaMemcpy(kin, ksrc, kb, cudaMemcpyDeviceToDevice));
    if (pairs) iota64<<<4096, 256>>>((int64_t *)vin, n * sizeof(V) / 8);
    CK(cudaDeviceSynchronize());
    CK(cudaEventRecord(a));
    if (pairs)
      CK(cub::DeviceRadixSort::SortPairs(tmp, tb, kin, kout, vin, vout, n));
    else
      CK(cub::DeviceRadixSort::SortKeys(tmp, tb, kin, kout, n));
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (r > 0) t.push_back(ms);
  }
  // the driver's copy of the keys, the same events
  std::vector<double> c;
  for (int r = 0; r < 16; r++) {
    CK(cudaEventRecord(a));
    CK(cudaMemcpyAsync(kout, kin, kb, cudaMemcpyDeviceToDevice));
    CK(cudaEventRecord(b));
    CK(cudaEventSynchronize(b));
    float ms;
    CK(cudaEventElapsedTime(&ms, a, b));
    if (r > 0) c.push_back(ms);
  }
  printf("%-34s cub %8.3f ms   copy of the keys %7.3f ms (%5.0f GB/s)   temp %zu MiB\n", name, median(t), median(c),
         2 * kb / median(c) / 1e6, tb >> 20);
  cudaFree(kin); cudaFree(kout); cudaFree(ksrc); cudaFree(tmp);
  if (pairs) { cudaFree(vin); cudaFree(vout); }
}

int main() {
  large<float, int64_t>("sort float32 2^28", 1 << 28, false, true);
  large<int32_t, int64_t>("sort int32 2^28", 1 << 28, false, false);
  large<float, int64_t>("argsort float32 2^28 (int64 values)", 1 << 28, true, true);
  large<double, int64_t>("sort float64 2^27", 1 << 27, false, true);
  // small: 512000 float32 plus a synchronize
  size_t n = 512000;
  float *kin, *kout;
  CK(cudaMalloc(&kin, n * 4));
  CK(cudaMalloc(&kout, n * 4));
  fill<<<512, 256>>>((uint32_t *)kin, n, 7);
  tofloat<<<512, 256>>>((uint32_t *)kin, n);
  void *tmp = nullptr;
  size_t tb = 0;
  CK(cub::DeviceRadixSort::SortKeys(tmp, tb, kin, kout, (int)n));
  CK(cudaMalloc(&tmp, tb));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  std::vector<double> w;
  for (int r = 0; r < 2100; r++) {
    auto t0 = std::chrono::steady_clock::now();
    CK(cub::DeviceRadixSort::SortKeys(tmp, tb, kin, kout, (int)n, 0, 32, s));
    CK(cudaStreamSynchronize(s));
    auto t1 = std::chrono::steady_clock::now();
    if (r >= 100) w.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
  }
  std::sort(w.begin(), w.end());
  printf("%-34s cub+sync median %.1f us (10th pct %.1f)\n", "sort float32 512000", w[w.size() / 2], w[w.size() / 10]);
  return 0;
}
