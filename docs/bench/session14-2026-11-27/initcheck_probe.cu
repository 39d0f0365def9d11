// initcheck's behaviour apart from cuimg (session 14): host threads, each with its own
// stream, sharing one context and its default stream-ordered memory pool, in the pattern
// cuimg's resize tests follow. Each iteration: a source allocated on the stream and filled by
// a copy from pinned memory, a kernel that reads it and writes a second allocation; then, on
// a second stream of the thread ordered after the first by an event (as cuimg's tracked
// buffers order streams), a kernel that reads that and writes a third, a copy back, frees;
// every byte written before it is read. Every output is checked on the host, so a read of
// unwritten memory that mattered would show as a wrong byte too.
//
// nvcc -O2 -std=c++17 -arch=sm_90 initcheck_probe.cu -o probe
// compute-sanitizer --tool initcheck ./probe THREADS ITERATIONS
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>
#include <atomic>
#include <cuda_runtime.h>

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { \
    fprintf(stderr, "%s:%d %s\n", __FILE__, __LINE__, cudaGetErrorString(e)); exit(2); } } while (0)

__global__ void twice(const unsigned char* src, unsigned char* dst, size_t n) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = (unsigned char)(src[i] * 2 + 1);
}

__global__ void shrink(const unsigned char* src, unsigned char* dst, size_t n) {
    // dst[i] = src[2i] ^ src[2i+1]: reads every byte of src, writes every byte of dst.
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = src[2 * i] ^ src[2 * i + 1];
}

static std::atomic<long> wrong{0};

static void worker(int id, int iters) {
    cudaStream_t s, s2;
    cudaEvent_t ev;
    CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CK(cudaStreamCreateWithFlags(&s2, cudaStreamNonBlocking));
    CK(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming));
    const size_t most = 1 << 20;
    unsigned char* pin_in;
    unsigned char* pin_out;
    CK(cudaMallocHost(&pin_in, most));
    CK(cudaMallocHost(&pin_out, most / 2));
    unsigned state = 12345u + 977u * id;
    for (int it = 0; it < iters; ++it) {
        state = state * 1664525u + 1013904223u;
        size_t n = 2 * (1 + (state >> 8) % (most / 2 - 1));  // even, 2 .. most
        for (size_t i = 0; i < n; ++i) pin_in[i] = (unsigned char)(i * 7 + it + id);
        unsigned char *a, *b, *c;
        CK(cudaMallocAsync((void**)&a, n, s));
        CK(cudaMemcpyAsync(a, pin_in, n, cudaMemcpyHostToDevice, s));
        CK(cudaMallocAsync((void**)&b, n, s));
        twice<<<64, 256, 0, s>>>(a, b, n);
        CK(cudaFreeAsync(a, s));
        CK(cudaEventRecord(ev, s));
        CK(cudaStreamWaitEvent(s2, ev, 0));
        CK(cudaMallocAsync((void**)&c, n / 2, s2));
        shrink<<<64, 256, 0, s2>>>(b, c, n / 2);
        CK(cudaMemcpyAsync(pin_out, c, n / 2, cudaMemcpyDeviceToHost, s2));
        CK(cudaFreeAsync(b, s2));
        CK(cudaFreeAsync(c, s2));
        CK(cudaStreamSynchronize(s2));
        for (size_t i = 0; i < n / 2; ++i) {
            unsigned char x = (unsigned char)(pin_in[2 * i] * 2 + 1), y = (unsigned char)(pin_in[2 * i + 1] * 2 + 1);
            if (pin_out[i] != (unsigned char)(x ^ y)) { wrong++; break; }
        }
    }
    CK(cudaFreeHost(pin_in));
    CK(cudaFreeHost(pin_out));
    CK(cudaEventDestroy(ev));
    CK(cudaStreamDestroy(s2));
    CK(cudaStreamDestroy(s));
}

int main(int argc, char** argv) {
    int threads = argc > 1 ? atoi(argv[1]) : 8;
    int iters = argc > 2 ? atoi(argv[2]) : 200;
    CK(cudaFree(0));
    std::vector<std::thread> ts;
    for (int t = 0; t < threads; ++t) ts.emplace_back(worker, t, iters);
    for (auto& t : ts) t.join();
    printf("probe: %d threads x %d iterations, %ld wrong outputs\n", threads, iters, wrong.load());
    return wrong.load() ? 1 : 0;
}
