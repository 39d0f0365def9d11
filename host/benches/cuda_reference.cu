// Hand-written CUDA C versions of cuimg's 8K kernels, timed exactly as `kernels --sweep`
// times cuimg: the reference that "as fast as tuned CUDA C" is measured against, in the same
// run, on the same GPU. Built on the GPU machine by `run.sh reference` (nvcc -O3 for the
// device's own architecture); the Rust side never links it.
//
// Each op is written the way an experienced CUDA programmer would write it without a
// library: 16-byte vector accesses, a grid of one wave of resident blocks looping
// grid-stride, `const __restrict__` inputs (read-only loads), shared-memory privatized
// histograms, a lane-replicated lookup table. The work per call is cuimg's: the histogram
// zeroes its bins first (a memset), the gather checks every index on the device.
//
// Timing, as in host/benches/common: "isolated" is the median of 30 calls, each between two
// events with the GPU idle before it; "back-to-back" the median over 7 rounds of 20 calls
// between two events, per call. Inputs rotate through 256 MiB so that L2 holds none of them.

#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <random>
#include <vector>

#define CHECK(x)                                                                           \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                             \
    }                                                                                      \
  } while (0)

constexpr int BLOCK = 256;
constexpr int W = 7680, H = 4320;
constexpr size_t N = size_t(W) * H;

// OpenCV's BT.601 fixed point (cvtColor RGB2GRAY): weights sum to 1 << 14.
__device__ __forceinline__ uint32_t luma(uint32_t r, uint32_t g, uint32_t b) {
  return (r * 4899 + g * 9617 + b * 1868 + (1 << 13)) >> 14;
}

__device__ __forceinline__ uint32_t byte_of(const uint32_t* w, int i) { return (w[i >> 2] >> (8 * (i & 3))) & 0xff; }

__global__ void gray_c3(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t groups) {
  for (size_t g = blockIdx.x * size_t(blockDim.x) + threadIdx.x; g < groups; g += size_t(gridDim.x) * blockDim.x) {
    uint4 a = src[3 * g], b = src[3 * g + 1], c = src[3 * g + 2];
    uint32_t w[12] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, c.x, c.y, c.z, c.w};
    uint32_t o[4] = {0, 0, 0, 0};
#pragma unroll
    for (int p = 0; p < 16; p++) o[p >> 2] |= luma(byte_of(w, 3 * p), byte_of(w, 3 * p + 1), byte_of(w, 3 * p + 2)) << (8 * (p & 3));
    dst[g] = make_uint4(o[0], o[1], o[2], o[3]);
  }
}

// Per-warp bins in shared memory, two 16-byte vectors in flight, merged with one global
// atomic per non-empty bin.
__global__ void histogram(const uint4* __restrict__ src, size_t vectors, uint32_t* hist) {
  __shared__ uint32_t bins[BLOCK / 32][256];
  for (int i = threadIdx.x; i < BLOCK / 32 * 256; i += BLOCK) (&bins[0][0])[i] = 0;
  __syncthreads();
  uint32_t* mine = bins[threadIdx.x / 32];
  size_t step = size_t(gridDim.x) * blockDim.x;
  size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x;
  for (; i + step < vectors; i += 2 * step) {
    uint4 a = src[i], b = src[i + step];
    uint32_t w[8] = {a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w};
#pragma unroll
    for (int k = 0; k < 32; k++) atomicAdd(&mine[byte_of(w, k)], 1u);
  }
  if (i < vectors) {
    uint4 a = src[i];
    uint32_t w[4] = {a.x, a.y, a.z, a.w};
#pragma unroll
    for (int k = 0; k < 16; k++) atomicAdd(&mine[byte_of(w, k)], 1u);
  }
  __syncthreads();
  for (int bin = threadIdx.x; bin < 256; bin += BLOCK) {
    uint32_t sum = 0;
    for (int w = 0; w < BLOCK / 32; w++) sum += bins[w][bin];
    if (sum) atomicAdd(&hist[bin], sum);
  }
}

// The table replicated per lane, [v >> 2][lane][v & 3]: every lane reads its own bank.
__device__ __forceinline__ void load_table(const uint8_t* lut, uint8_t* t) {
  for (int i = threadIdx.x; i < 256 * 32; i += blockDim.x) {
    int v = ((i >> 7) << 2) | (i & 3);
    t[i] = lut[v];
  }
  __syncthreads();
}

__device__ __forceinline__ uint32_t look(const uint8_t* t, uint32_t v, uint32_t lane) {
  return t[((v & 0xfc) << 5) | (lane << 2) | (v & 3)];
}

__device__ __forceinline__ uint4 look16(const uint8_t* t, uint4 v, uint32_t lane) {
  uint32_t w[4] = {v.x, v.y, v.z, v.w}, o[4] = {0, 0, 0, 0};
#pragma unroll
  for (int k = 0; k < 16; k++) o[k >> 2] |= look(t, byte_of(w, k), lane) << (8 * (k & 3));
  return make_uint4(o[0], o[1], o[2], o[3]);
}

__global__ void lut_apply(const uint4* __restrict__ src, uint4* __restrict__ dst, size_t vectors,
                          const uint8_t* __restrict__ lut) {
  __shared__ uint8_t t[256 * 32];
  load_table(lut, t);
  uint32_t lane = threadIdx.x & 31;
  size_t step = size_t(gridDim.x) * blockDim.x;
  for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < vectors; i += 4 * step) {
    uint4 v[4];
#pragma unroll
    for (int k = 0; k < 4; k++)
      if (i + k * step < vectors) v[k] = src[i + k * step];
#pragma unroll
    for (int k = 0; k < 4; k++)
      if (i + k * step < vectors) dst[i + k * step] = look16(t, v[k], lane);
  }
}

// Equalization's table from the histogram (OpenCV's equalizeHist): one block of 256.
__global__ void equalize_table(const uint32_t* hist, uint8_t* lut, uint32_t total) {
  __shared__ uint32_t s[256];
  __shared__ uint32_t first;
  int t = threadIdx.x;
  s[t] = hist[t];
  if (t == 0) {
    int i = 0;
    while (i < 255 && hist[i] == 0) i++;
    first = hist[i];
  }
  __syncthreads();
  for (int off = 1; off < 256; off *= 2) {
    uint32_t add = t >= off ? s[t - off] : 0;
    __syncthreads();
    s[t] += add;
    __syncthreads();
  }
  if (total == first) {
    lut[t] = t;  // one value: the identity, as OpenCV
  } else {
    float scale = 255.0f / float(total - first);
    int v = __float2int_rn(float(int(s[t]) - int(first)) * scale);  // saturate_cast<uchar>
    lut[t] = uint8_t(min(max(v, 0), 255));
  }
}

__global__ void gather_f32(const float* __restrict__ src, uint32_t src_len, const uint4* __restrict__ idx, size_t quads,
                           float4* __restrict__ out, unsigned long long* bad) {
  for (size_t q = blockIdx.x * size_t(blockDim.x) + threadIdx.x; q < quads; q += size_t(gridDim.x) * blockDim.x) {
    uint4 j = idx[q];
    uint32_t js[4] = {j.x, j.y, j.z, j.w};
    float v[4];
#pragma unroll
    for (int k = 0; k < 4; k++) {
      if (js[k] < src_len) {
        v[k] = __ldg(&src[js[k]]);
      } else {
        atomicMin(bad, (unsigned long long)(4 * q + k));
        v[k] = 0.0f;
      }
    }
    out[q] = make_float4(v[0], v[1], v[2], v[3]);
  }
}

static int sms;

template <typename K>
static int grid_of(K kernel, int smem = 0) {
  int per_sm = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, BLOCK, smem));
  return sms * std::max(per_sm, 1);
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

struct Modes {
  double isolated_us, queued_us;
};

static Modes time_modes(cudaStream_t s, int runs, int per_round, const std::function<void(int)>& f) {
  cudaEvent_t a, b;
  CHECK(cudaEventCreate(&a));
  CHECK(cudaEventCreate(&b));
  for (int i = 0; i < 8; i++) f(i);
  CHECK(cudaStreamSynchronize(s));
  std::vector<double> iso, q;
  for (int i = 0; i < runs; i++) {
    CHECK(cudaEventRecord(a, s));
    f(i);
    CHECK(cudaEventRecord(b, s));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    iso.push_back(ms * 1e3);
  }
  for (int r = 0; r < 7; r++) {
    CHECK(cudaStreamSynchronize(s));
    CHECK(cudaEventRecord(a, s));
    for (int k = 0; k < per_round; k++) f(runs + r * per_round + k);
    CHECK(cudaEventRecord(b, s));
    CHECK(cudaEventSynchronize(b));
    float ms;
    CHECK(cudaEventElapsedTime(&ms, a, b));
    q.push_back(ms * 1e3 / per_round);
  }
  CHECK(cudaGetLastError());
  cudaEventDestroy(a);
  cudaEventDestroy(b);
  return {median(iso), median(q)};
}

static double copy_gbps;

static void report(const char* op, const char* data, double bytes, Modes m) {
  double frac = bytes / (m.queued_us * 1e-6) / 1e9 / copy_gbps;
  printf("%-22s %9s %10.1f %12.1f %9.2f\n", op, data, m.isolated_us, m.queued_us, frac);
}

int main() {
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  sms = prop.multiProcessorCount;
  cudaStream_t s;
  CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  {
    size_t bytes = size_t(1) << 30;
    void *a, *b;
    CHECK(cudaMalloc(&a, bytes));
    CHECK(cudaMalloc(&b, bytes));
    CHECK(cudaMemset(a, 1, bytes));
    Modes m = time_modes(s, 20, 5, [&](int) { CHECK(cudaMemcpyAsync(b, a, bytes, cudaMemcpyDeviceToDevice, s)); });
    copy_gbps = 2.0 * bytes / (m.isolated_us * 1e-6) / 1e9;
    CHECK(cudaFree(a));
    CHECK(cudaFree(b));
  }
  printf("CUDA C reference, %s, %d SMs, copy %.0f GB/s (1 GiB device-to-device, read + write)\n", prop.name, sms,
         copy_gbps);
  printf("%-22s %9s %10s %12s %9s\n", "op", "data", "isolated", "back-to-back", "of copy");

  std::mt19937_64 rng(1);
  std::vector<uint8_t> rgb(3 * N), gray(N);
  for (auto& v : rgb) v = uint8_t(rng());
  for (auto& v : gray) v = uint8_t(rng());
  std::vector<uint8_t> table(256);
  for (int v = 0; v < 256; v++) table[v] = uint8_t(std::min(255.0, std::round(255.0 * std::pow(v / 255.0, 1 / 2.2))));
  uint8_t *d_lut, *d_table;
  uint32_t* d_hist;
  CHECK(cudaMalloc(&d_lut, 256));
  CHECK(cudaMalloc(&d_table, 256));
  CHECK(cudaMalloc(&d_hist, 1024));
  CHECK(cudaMemcpy(d_lut, table.data(), 256, cudaMemcpyHostToDevice));

  const int sets_rgb = 2, sets_gray = 4;  // 256 MiB / (4n) and / (2n), rounded up
  for (int constant = 0; constant < 2; constant++) {
    const char* data = constant ? "constant" : "random";
    if (constant) {
      std::fill(rgb.begin(), rgb.end(), 77);
      std::fill(gray.begin(), gray.end(), 77);
    }
    std::vector<uint8_t*> ins3(sets_rgb), outs3(sets_rgb), ins(sets_gray), outs(sets_gray);
    for (int k = 0; k < sets_rgb; k++) {
      CHECK(cudaMalloc(&ins3[k], 3 * N));
      CHECK(cudaMalloc(&outs3[k], N));
      CHECK(cudaMemcpy(ins3[k], rgb.data(), 3 * N, cudaMemcpyHostToDevice));
    }
    for (int k = 0; k < sets_gray; k++) {
      CHECK(cudaMalloc(&ins[k], N));
      CHECK(cudaMalloc(&outs[k], N));
      CHECK(cudaMemcpy(ins[k], gray.data(), N, cudaMemcpyHostToDevice));
    }
    int g_gray = grid_of(gray_c3), g_hist = grid_of(histogram), g_lut = grid_of(lut_apply);
    report("grayscale RGB8", data, 4.0 * N, time_modes(s, 30, 20, [&](int i) {
             int k = i % sets_rgb;
             gray_c3<<<g_gray, BLOCK, 0, s>>>((const uint4*)ins3[k], (uint4*)outs3[k], N / 16);
           }));
    auto hist = [&](const uint8_t* src) {
      CHECK(cudaMemsetAsync(d_hist, 0, 1024, s));
      histogram<<<g_hist, BLOCK, 0, s>>>((const uint4*)src, N / 16, d_hist);
    };
    report("histogram", data, 1.0 * N, time_modes(s, 30, 20, [&](int i) { hist(ins[i % sets_gray]); }));
    {
      std::vector<uint32_t> h(256), want(256, 0);
      CHECK(cudaMemcpy(h.data(), d_hist, 1024, cudaMemcpyDeviceToHost));
      for (uint8_t v : gray) want[v]++;
      if (h != want) {
        fprintf(stderr, "histogram: wrong counts\n");
        return 1;
      }
    }
    report("LUT", data, 2.0 * N, time_modes(s, 30, 20, [&](int i) {
             int k = i % sets_gray;
             lut_apply<<<g_lut, BLOCK, 0, s>>>((const uint4*)ins[k], (uint4*)outs[k], N / 16, d_lut);
           }));
    report("equalize", data, 3.0 * N, time_modes(s, 30, 20, [&](int i) {
             int k = i % sets_gray;
             hist(ins[k]);
             equalize_table<<<1, 256, 0, s>>>(d_hist, d_table, uint32_t(N));
             lut_apply<<<g_lut, BLOCK, 0, s>>>((const uint4*)ins[k], (uint4*)outs[k], N / 16, d_table);
           }));
    for (auto p : ins3) cudaFree(p);
    for (auto p : outs3) cudaFree(p);
    for (auto p : ins) cudaFree(p);
    for (auto p : outs) cudaFree(p);
  }

  float *d_src, *d_out;
  uint32_t* d_idx;
  unsigned long long* d_bad;
  std::vector<float> src(N);
  for (size_t i = 0; i < N; i++) src[i] = float(i % 251);
  CHECK(cudaMalloc(&d_src, 4 * N));
  CHECK(cudaMalloc(&d_out, 4 * N));
  CHECK(cudaMalloc(&d_idx, 4 * N));
  CHECK(cudaMalloc(&d_bad, 8));
  CHECK(cudaMemcpy(d_src, src.data(), 4 * N, cudaMemcpyHostToDevice));
  int g_gather = grid_of(gather_f32);
  for (int random = 0; random < 2; random++) {
    std::vector<uint32_t> idx(N);
    std::mt19937 r(4);
    for (size_t i = 0; i < N; i++) idx[i] = random ? uint32_t(r() % N) : uint32_t(i);
    CHECK(cudaMemcpy(d_idx, idx.data(), 4 * N, cudaMemcpyHostToDevice));
    report(random ? "gather f32 random" : "gather f32 identity", "alone", 12.0 * N, time_modes(s, 10, 5, [&](int) {
             CHECK(cudaMemsetAsync(d_bad, 0xff, 8, s));
             gather_f32<<<g_gather, BLOCK, 0, s>>>(d_src, uint32_t(N), (const uint4*)d_idx, N / 4, (float4*)d_out, d_bad);
           }));
    unsigned long long bad;
    CHECK(cudaMemcpy(&bad, d_bad, 8, cudaMemcpyDeviceToHost));
    if (bad != ~0ull) {
      fprintf(stderr, "gather: index check fired\n");
      return 1;
    }
  }
  printf("done\n");
  return 0;
}
