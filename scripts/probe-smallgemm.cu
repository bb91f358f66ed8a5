// probe-smallgemm: the least a 512x1000 @ 1000x512 float32 product plus a synchronize can
// take through cuBLAS and the CUDA runtime, called from C++ with nothing in between (issue
// 19's S-size row: gpubench's matmul/float32/512x1000x512+sync). On the device machine:
//
//   nvcc -O2 -o /tmp/smm scripts/probe-smallgemm.cu -lcublasLt -lcublas && /tmp/smm
//
// Each figure is the median (and 10th percentile) of the wall time of N calls, one at a
// time, each followed by its synchronize: an empty kernel; cublasSgemm; cublasGemmEx;
// cublasLtMatmul with each of the heuristic's first algorithms (descriptors, algorithm
// and workspace made once); the cublasSgemm call captured once in a CUDA graph and
// launched; the host time of the cublasSgemm call alone; and the kernels' time back to
// back (CUDA events around 1000 calls). Column-major m = n = 512, k = 1000: the row-major
// (512, 1000) @ (1000, 512) product.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#define CK(x)                                                                             \
  do {                                                                                  \
    auto r_ = (x);                                                                      \
    if ((int)r_ != 0) {                                                                 \
      fprintf(stderr, "%s:%d %s: %d\n", __FILE__, __LINE__, #x, (int)r_);               \
      exit(1);                                                                          \
    }                                                                                   \
  } while (0)

__global__ void empty() {}

static double now_us() {
  return std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

template <class F, class S>
static void timeit(const char *name, int n, F call, S sync) {
  std::vector<double> t;
  for (int i = 0; i < 200; i++) { call(); sync(); }
  for (int i = 0; i < n; i++) {
    double t0 = now_us();
    call();
    sync();
    t.push_back(now_us() - t0);
  }
  std::sort(t.begin(), t.end());
  printf("%-34s median %7.2f us  p10 %7.2f us  (n=%d)\n", name, t[n / 2], t[n / 10], n);
}

int main(int argc, char **argv) {
  const int M = 512, N = 512, K = 1000, n = argc > 1 ? atoi(argv[1]) : 3000;
  if (argc > 2 && atoi(argv[2]) == 1) CK(cudaSetDeviceFlags(cudaDeviceScheduleSpin));
  cudaStream_t s;
  CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  float *A, *B, *C;
  CK(cudaMalloc(&A, sizeof(float) * M * K));
  CK(cudaMalloc(&B, sizeof(float) * K * N));
  CK(cudaMalloc(&C, sizeof(float) * M * N));
  std::vector<float> h(K * 1024);
  for (auto &x : h) x = (float)rand() / RAND_MAX - 0.5f;
  CK(cudaMemcpy(A, h.data(), sizeof(float) * M * K, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(B, h.data(), sizeof(float) * K * N, cudaMemcpyHostToDevice));
  size_t wsSize = 32 << 20;
  void *ws;
  CK(cudaMalloc(&ws, wsSize));
  cublasHandle_t hd;
  CK(cublasCreate(&hd));
  CK(cublasSetStream(hd, s));
  CK(cublasSetWorkspace(hd, ws, wsSize));
  const float one = 1, zero = 0;
  auto sync = [&] { CK(cudaStreamSynchronize(s)); };
  cudaEvent_t ev;
  CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
  auto spin = [&] {
    CK(cudaEventRecord(ev, s));
    while (cudaEventQuery(ev) == cudaErrorNotReady) {
    }
  };

  timeit("empty kernel + sync", n, [&] { empty<<<1, 32, 0, s>>>(); }, sync);
  timeit("empty kernel + event spin", n, [&] { empty<<<1, 32, 0, s>>>(); }, spin);
  auto sgemm = [&] { CK(cublasSgemm(hd, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, A, M, B, K, &zero, C, M)); };
  timeit("cublasSgemm + sync", n, sgemm, sync);
  timeit("cublasSgemm + event spin", n, sgemm, spin);
  auto gemmex = [&] {
    CK(cublasGemmEx(hd, CUBLAS_OP_N, CUBLAS_OP_N, M, N, K, &one, A, CUDA_R_32F, M, B, CUDA_R_32F, K, &zero, C,
                    CUDA_R_32F, M, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  };
  timeit("cublasGemmEx + sync", n, gemmex, sync);

  // The host's part: the call alone, its kernels then waited for outside the clock.
  {
    std::vector<double> t;
    for (int i = 0; i < n; i++) {
      double t0 = now_us();
      sgemm();
      t.push_back(now_us() - t0);
      sync();
    }
    std::sort(t.begin(), t.end());
    printf("%-34s median %7.2f us  p10 %7.2f us  (n=%d)\n", "cublasSgemm call alone (host)", t[n / 2], t[n / 10], n);
  }
  // The kernels back to back.
  {
    cudaEvent_t e0, e1;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    for (int r = 0; r < 3; r++) {
      CK(cudaEventRecord(e0, s));
      for (int i = 0; i < 1000; i++) sgemm();
      CK(cudaEventRecord(e1, s));
      CK(cudaEventSynchronize(e1));
      float ms;
      CK(cudaEventElapsedTime(&ms, e0, e1));
      printf("%-34s %7.2f us a product\n", "cublasSgemm back to back (events)", ms);
    }
  }
  // A CUDA graph of one cublasSgemm, launched.
  {
    cudaGraph_t g;
    cudaGraphExec_t ge;
    CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
    sgemm();
    CK(cudaStreamEndCapture(s, &g));
    CK(cudaGraphInstantiate(&ge, g, 0));
    size_t nodes = 0;
    CK(cudaGraphGetNodes(g, nullptr, &nodes));
    printf("graph of cublasSgemm: %zu nodes\n", nodes);
    timeit("graph(cublasSgemm) + sync", n, [&] { CK(cudaGraphLaunch(ge, s)); }, sync);
    timeit("graph(cublasSgemm) + event spin", n, [&] { CK(cudaGraphLaunch(ge, s)); }, spin);
  }
  // cublasLt: everything made once, each of the heuristic's first algorithms.
  {
    cublasLtHandle_t lt;
    CK(cublasLtCreate(&lt));
    cublasLtMatmulDesc_t op;
    CK(cublasLtMatmulDescCreate(&op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    cublasLtMatrixLayout_t la, lb, lc;
    CK(cublasLtMatrixLayoutCreate(&la, CUDA_R_32F, M, K, M));
    CK(cublasLtMatrixLayoutCreate(&lb, CUDA_R_32F, K, N, K));
    CK(cublasLtMatrixLayoutCreate(&lc, CUDA_R_32F, M, N, M));
    cublasLtMatmulPreference_t pref;
    CK(cublasLtMatmulPreferenceCreate(&pref));
    CK(cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &wsSize, sizeof(wsSize)));
    cublasLtMatmulHeuristicResult_t res[8];
    int got = 0;
    CK(cublasLtMatmulAlgoGetHeuristic(lt, op, la, lb, lc, lc, pref, 8, res, &got));
    for (int i = 0; i < got && i < 4; i++) {
      char name[64];
      snprintf(name, sizeof name, "cublasLtMatmul heur %d + sync", i);
      timeit(name, n, [&] {
        CK(cublasLtMatmul(lt, op, &one, A, la, B, lb, &zero, C, lc, C, lc, &res[i].algo, ws, wsSize, s));
      }, sync);
    }
    std::vector<double> t;
    for (int i = 0; i < n; i++) {
      double t0 = now_us();
      CK(cublasLtMatmul(lt, op, &one, A, la, B, lb, &zero, C, lc, C, lc, &res[0].algo, ws, wsSize, s));
      t.push_back(now_us() - t0);
      sync();
    }
    std::sort(t.begin(), t.end());
    printf("%-34s median %7.2f us  p10 %7.2f us  (n=%d)\n", "cublasLtMatmul call alone (host)", t[n / 2], t[n / 10], n);
  }
  return 0;
}
