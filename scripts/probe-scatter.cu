// probe-scatter: the memory pattern of one radix-sort pass without its ranking, beside a
// plain copy, for 2^28 4-byte keys on the device machine:
//
//   nvcc -O3 -arch=sm_90 -o /tmp/scatter scripts/probe-scatter.cu && /tmp/scatter
//
// A pass reads its tile's keys in order and writes them as 256 runs, one a digit, each
// to its digit's bucket (the buckets one after another in the output, each tile's run
// after the previous tile's). Here every run has the same length (tile/256 keys), so
// that tile t's run of digit d goes to d*tiles*run + t*run: the same bytes moved, the
// same sectors shared between neighbouring tiles' runs, none of the ranking's work.
// Each figure is the median of 21 launches timed by CUDA events.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <vector>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t r_ = (x); if (r_ != cudaSuccess) { \
  fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(r_)); return 1; } } while (0)

__global__ void copyk(const uint4 *in, uint4 *out, size_t n4) {
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n4; i += (size_t)gridDim.x * blockDim.x)
    out[i] = in[i];
}

// One tile a block of 256 threads; thread j of the block writes keys j, j+256, ... of
// the tile's order sorted by digit, key i of it being run i/run's key i%run.
template <int ITEMS>
__global__ void scatter(const uint32_t *in, uint32_t *out, int tiles) {
  constexpr int TILE = 256 * ITEMS, RUN = TILE / 256;
  int t = blockIdx.x;
  const uint32_t *src = in + (size_t)t * TILE;
  uint32_t v[ITEMS];
#pragma unroll
  for (int i = 0; i < ITEMS; i++) v[i] = __ldg(src + threadIdx.x + i * 256);
#pragma unroll
  for (int i = 0; i < ITEMS; i++) {
    int slot = threadIdx.x + i * 256, d = slot / RUN, r = slot % RUN;
    out[(size_t)d * tiles * RUN + (size_t)t * RUN + r] = v[i];
  }
}

__device__ __forceinline__ uint32_t mix(uint32_t x) {
  x ^= x >> 16; x *= 0x7feb352du; x ^= x >> 15; x *= 0x846ca68bu; x ^= x >> 16;
  return x;
}

// Runs of RUN keys on average, each boundary between tile t's and t+1's run of digit d
// moved by a pseudo-random J(t+1, d) = (mix & MASK) * STEP keys: the runs' lengths and
// their starts' alignment vary as a sort's do. Warp w writes digits w, w+8, ..., each
// run with one or two stores of consecutive lanes.
template <int MASK, int STEP, int RUN = 28>
__global__ void scatterj(const uint32_t *in, uint32_t *out, int tiles) {
  int t = blockIdx.x, w = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t *src = in + (size_t)t * 256 * RUN;
  for (int d = w; d < 256; d += 8) {
    uint32_t j0 = t == 0 ? 0 : (mix(t * 256u + d) & MASK) * STEP;
    uint32_t j1 = t == tiles - 1 ? 0 : (mix((t + 1) * 256u + d) & MASK) * STEP;
    uint32_t start = t * RUN + j0, end = (t + 1) * RUN + j1;
    uint32_t *dst = out + (size_t)d * tiles * RUN;
    for (uint32_t i = start + lane; i < end; i += 32) dst[i] = __ldg(src + d * RUN + (i - start) % RUN);
  }
}

// scatterj's runs (RUN 28, boundaries moved 0-MASK*STEP keys) written as a pass writes
// them: the tile's keys in the order sorted by digit, slot s by thread s%256, so that
// a warp's store covers 32 consecutive slots across the runs' boundaries.
template <int MASK, int STEP>
__global__ void scatters(const uint32_t *in, uint32_t *out, int tiles) {
  constexpr int RUN = 28;
  __shared__ uint32_t pre[256], gst[256], wsum[8];
  int t = blockIdx.x, d = threadIdx.x, w = d / 32, lane = d % 32;
  uint32_t j0 = t == 0 ? 0 : (mix(t * 256u + d) & MASK) * STEP;
  uint32_t j1 = t == tiles - 1 ? 0 : (mix((t + 1) * 256u + d) & MASK) * STEP;
  uint32_t len = RUN + j1 - j0, x = len;
  for (int o = 1; o < 32; o *= 2) { uint32_t y = __shfl_up_sync(~0u, x, o); if (lane >= o) x += y; }
  if (lane == 31) wsum[w] = x;
  __syncthreads();
  uint32_t before = 0;
  for (int i = 0; i < w; i++) before += wsum[i];
  pre[d] = before + x - len;
  gst[d] = t * RUN + j0;
  uint32_t count = 0;
  for (int i = 0; i < 8; i++) count += wsum[i];
  __syncthreads();
  const uint32_t *src = in + (size_t)t * 256 * RUN;
  for (uint32_t s = threadIdx.x; s < count; s += 256) {
    int lo = 0;
    for (int b = 128; b >= 1; b /= 2) if (pre[lo + b] <= s) lo += b;
    out[(size_t)lo * tiles * RUN + gst[lo] + (s - pre[lo])] = __ldg(src + s % (256 * RUN));
  }
}

// scatterj's runs with each store of a warp inside one 128-byte line: lanes of line
// addresses outside the run are idle.
template <int MASK, int STEP>
__global__ void scattera(const uint32_t *in, uint32_t *out, int tiles) {
  constexpr int RUN = 28;
  int t = blockIdx.x, w = threadIdx.x / 32, lane = threadIdx.x % 32;
  const uint32_t *src = in + (size_t)t * 256 * RUN;
  for (int d = w; d < 256; d += 8) {
    uint32_t j0 = t == 0 ? 0 : (mix(t * 256u + d) & MASK) * STEP;
    uint32_t j1 = t == tiles - 1 ? 0 : (mix((t + 1) * 256u + d) & MASK) * STEP;
    size_t g = (size_t)d * tiles * RUN + t * RUN + j0, e = (size_t)d * tiles * RUN + (t + 1) * RUN + j1;
    for (size_t a = g & ~(size_t)31; a < e; a += 32) {
      size_t i = a + lane;
      if (i >= g && i < e) out[i] = __ldg(src + d * RUN + (i - g) % RUN);
    }
  }
}

static int reps = 23; // (1 under Nsight Compute: the probe's argument "once")

// scatters with each warp's stores on whole 32-byte sectors: the runs laid out in a
// virtual tile where run d starts at V_d, a multiple of 8 keys, plus its global start's
// offset in its sector (a_d), and takes a whole number of sectors; thread s%256 writes
// virtual slot s, finding its run through a table of each virtual sector's run. Only
// the runs' boundaries write part of a sector.
template <int MASK, int STEP, int RUN = 28>
__global__ void scatterv(const uint32_t *in, uint32_t *out, int tiles) {
  __shared__ uint32_t pre[256], vst[257], gst[256], wsum[8], vsum[8];
  __shared__ uint8_t sec[256 * (RUN + 20) / 8];
  int t = blockIdx.x, d = threadIdx.x, w = d / 32, lane = d % 32;
  uint32_t j0 = t == 0 ? 0 : (mix(t * 256u + d) & MASK) * STEP;
  uint32_t j1 = t == tiles - 1 ? 0 : (mix((t + 1) * 256u + d) & MASK) * STEP;
  uint32_t len = RUN + j1 - j0, g = t * RUN + j0 + (uint32_t)((size_t)d * tiles * RUN % 8);
  uint32_t a = g % 8, vl = len ? (a + len + 7) / 8 * 8 : 0, x = len, y = vl;
  for (int o = 1; o < 32; o *= 2) {
    uint32_t u = __shfl_up_sync(~0u, x, o), v = __shfl_up_sync(~0u, y, o);
    if (lane >= o) x += u, y += v;
  }
  if (lane == 31) wsum[w] = x, vsum[w] = y;
  __syncthreads();
  uint32_t before = 0, vbefore = 0, vt = 0;
  for (int i = 0; i < w; i++) before += wsum[i], vbefore += vsum[i];
  for (int i = 0; i < 8; i++) vt += vsum[i];
  pre[d] = before + x - len;
  vst[d] = vbefore + y - vl;
  gst[d] = t * RUN + j0;
  if (d == 0) vst[256] = vt;
  __syncthreads();
  for (uint32_t q = threadIdx.x; q < vt / 8; q += 256) { // each virtual sector's run
    int lo = 0;
    for (int b = 128; b >= 1; b /= 2) if (vst[lo + b] <= q * 8) lo += b;
    sec[q] = lo;
  }
  __syncthreads();
  const uint32_t *src = in + (size_t)t * 256 * RUN;
  for (uint32_t v = threadIdx.x; v < vt; v += 256) {
    int r = sec[v / 8];
    size_t gs = (size_t)r * tiles * RUN + gst[r];
    uint32_t k = v - vst[r], ar = gs % 8, lr = (r == 255 ? 256 * RUN + 0 : pre[r + 1]) - pre[r];
    if (r == 255) { uint32_t c = 0; for (int i = 0; i < 8; i++) c += wsum[i]; lr = c - pre[r]; }
    if (k >= ar && k < ar + lr) out[gs - ar + k] = __ldg(src + (pre[r] + k - ar) % (256 * RUN));
  }
}


// scatterv's runs of RUN keys on average (random boundaries) padded to whole sectors, as
// a pass would write a padded intermediate buffer: run d of tile t starts on a sector
// (here at a fixed slot of PAD keys, (d*tiles + t)*PAD), its pad slots written too, so
// that no sector is shared between runs; the tile is read with pads in proportion
// (src's slots v < the tile's padded total, from an input 1/4 larger).
template <int RUN, int PAD>
__global__ void scatterp(const uint32_t *in, uint32_t *out, int tiles) {
  __shared__ uint32_t vst[257], vsum[8];
  __shared__ uint8_t sec[256 * PAD / 8];
  int t = blockIdx.x, d = threadIdx.x, w = d / 32, lane = d % 32;
  uint32_t j0 = t == 0 ? 0 : (mix(t * 256u + d) & 7);
  uint32_t j1 = t == tiles - 1 ? 0 : (mix((t + 1) * 256u + d) & 7);
  uint32_t len = RUN + j1 - j0, vl = (len + 7) / 8 * 8, y = vl;
  for (int o = 1; o < 32; o *= 2) { uint32_t v = __shfl_up_sync(~0u, y, o); if (lane >= o) y += v; }
  if (lane == 31) vsum[w] = y;
  __syncthreads();
  uint32_t vbefore = 0, vt = 0;
  for (int i = 0; i < w; i++) vbefore += vsum[i];
  for (int i = 0; i < 8; i++) vt += vsum[i];
  vst[d] = vbefore + y - vl;
  if (d == 0) vst[256] = vt;
  __syncthreads();
  for (uint32_t q = threadIdx.x; q < vt / 8; q += 256) {
    int lo = 0;
    for (int b = 128; b >= 1; b /= 2) if (vst[lo + b] <= q * 8) lo += b;
    sec[q] = lo;
  }
  __syncthreads();
  const uint32_t *src = in + (size_t)t * 256 * RUN * 5 / 4;
  for (uint32_t v = threadIdx.x; v < vt; v += 256) {
    int r = sec[v / 8];
    out[((size_t)r * tiles + t) * PAD + (v - vst[r])] = __ldg(src + v);
  }
}

template <typename F>
static float timeit(F f) {
  cudaEvent_t a, b;
  cudaEventCreate(&a); cudaEventCreate(&b);
  std::vector<float> ms;
  for (int i = 0; i < reps; i++) {
    cudaEventRecord(a); f(); cudaEventRecord(b); cudaEventSynchronize(b);
    float x; cudaEventElapsedTime(&x, a, b); if (i >= 2 || reps == 1) ms.push_back(x);
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

int main(int argc, char **argv) {
  if (argc > 1) reps = 1;
  const size_t n = (size_t)1 << 28;
  uint32_t *in, *out;
  CK(cudaMalloc(&in, n * 6)); CK(cudaMalloc(&out, n * 6));
  CK(cudaMemset(in, 1, n * 6));
  cudaDeviceProp p; CK(cudaGetDeviceProperties(&p, 0));
  printf("%s: 2^28 4-byte keys, 2 GiB read + written\n", p.name);
  float c = timeit([&] { copyk<<<p.multiProcessorCount * 8, 512>>>((const uint4 *)in, (uint4 *)out, n / 4); });
  printf("copy kernel             %.3f ms  %.0f GB/s\n", c, 2.0 * n * 4 / c / 1e6);
  float m = timeit([&] { cudaMemcpyAsync(out, in, n * 4, cudaMemcpyDeviceToDevice); });
  printf("cudaMemcpy DtoD         %.3f ms  %.0f GB/s\n", m, 2.0 * n * 4 / m / 1e6);
#define RUNS(I) { int tiles = n / (256 * I); \
    float s = timeit([&] { scatter<I><<<tiles, 256>>>(in, out, tiles); }); CK(cudaGetLastError()); \
    printf("scatter, runs of %2d     %.3f ms  %.0f GB/s  (%.2fx the copy kernel)\n", I, s, 2.0 * n * 4 / s / 1e6, s / c); }
  RUNS(8) RUNS(16) RUNS(24) RUNS(28) RUNS(30) RUNS(32) RUNS(56)
#define JIT(M, S, what) { int tiles = n / (256 * 28); \
    float s = timeit([&] { scatterj<M, S><<<tiles, 256>>>(in, out, tiles); }); CK(cudaGetLastError()); \
    printf("runs of 28 a warp, %-34s %.3f ms  (%.2fx the copy kernel)\n", what, s, s / c); }
  JIT(0, 1, "boundaries at 112-byte steps")
  JIT(7, 1, "moved 0-7 keys (any 4-byte alignment)")
  JIT(1, 8, "moved 0 or 8 keys (32-byte aligned)")
  JIT(3, 2, "moved 0-6 keys by 2 (8-byte aligned)")
  JIT(1, 4, "moved 0 or 4 keys (16-byte aligned)")
#define JITR(R, what) { int tiles = n / (256 * R); \
    float s = timeit([&] { scatterj<7, 1, R><<<tiles, 256>>>(in, out, tiles); }); CK(cudaGetLastError()); \
    printf("runs of %3d a warp, %-33s %.3f ms  (%.2fx the copy kernel)\n", R, what, s, s / c); }
#define STR(M, S, what) { int tiles = n / (256 * 28); \
    float s = timeit([&] { scatters<M, S><<<tiles, 256>>>(in, out, tiles); }); CK(cudaGetLastError()); \
    printf("runs of 28 striped, %-33s %.3f ms  (%.2fx the copy kernel)\n", what, s, s / c); }
  STR(0, 1, "boundaries at 112-byte steps")
  STR(7, 1, "moved 0-7 keys (any 4-byte alignment)")
  STR(1, 4, "moved 0 or 4 keys (16-byte aligned)")
#define ALN(M, S, what) { int tiles = n / (256 * 28); \
    float s = timeit([&] { scattera<M, S><<<tiles, 256>>>(in, out, tiles); }); CK(cudaGetLastError()); \
    printf("runs of 28 line-aligned, %-28s %.3f ms  (%.2fx the copy kernel)\n", what, s, s / c); }
#define VIR(M, S, what) { int tiles = n / (256 * 28); \
    float s = timeit([&] { scatterv<M, S><<<tiles, 256>>>(in, out, tiles); }); CK(cudaGetLastError()); \
    printf("runs of 28 sector-striped, %-26s %.3f ms  (%.2fx the copy kernel)\n", what, s, s / c); }
  VIR(0, 1, "boundaries at 112-byte steps")
  VIR(7, 1, "moved 0-7 keys (any 4-byte alignment)")
  ALN(0, 1, "boundaries at 112-byte steps")
  ALN(7, 1, "moved 0-7 keys (any 4-byte alignment)")
  JITR(56, "moved 0-7 keys (any 4-byte alignment)")
  JITR(112, "moved 0-7 keys (any 4-byte alignment)")
  JITR(224, "moved 0-7 keys (any 4-byte alignment)")
#define VIRR(R, what) { int tiles = n / (256 * R); \
    float s = timeit([&] { scatterv<7, 1, R><<<tiles, 256>>>(in, out, tiles); }); CK(cudaGetLastError()); \
    printf("runs of %3d sector-striped, %-25s %.3f ms  (%.2fx the copy kernel)\n", R, what, s, s / c); }
  VIRR(28, "moved 0-7 keys (any 4-byte alignment)")
  VIRR(56, "moved 0-7 keys (any 4-byte alignment)")
#define PADR(R, P, what) { int tiles = n / (256 * R); \
    float s = timeit([&] { scatterp<R, P><<<tiles, 256>>>(in, out, tiles); }); CK(cudaGetLastError()); \
    printf("runs of %3d padded to sectors, %-22s %.3f ms  (%.2fx the copy kernel)\n", R, what, s, s / c); }
  PADR(28, 40, "moved 0-7 keys, pads written")
  PADR(56, 64, "moved 0-7 keys, pads written")
  return 0;
}
