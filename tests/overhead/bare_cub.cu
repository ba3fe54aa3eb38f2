// bare_cub: the yardstick for kbench's own timing overhead.
//
// Times cub::DeviceReduce::Sum on n floats with nothing but a loop of CUDA
// events around each call, the way one would by hand, and prints the median.
// tests/overhead/run.sh runs it beside `kbench run` on the same size and
// compares the two medians: kbench's framework must cost nothing measurable.
//
//   kbench-bare-cub [N [WARMUP [RUNS [hold]]]]
// With `hold`, each timed call is preceded by a one-thread kernel that spins
// on a flag in mapped host memory until the host has enqueued the start
// event, the call and the stop event, as kbench's own hold does (docs/
// output.md "The hold"): the start event then fires when the GPU can start
// the call at once, not while the host is still launching it.  Without it,
// the loop is the plain one people write by hand, whose figure includes the
// host's launch time of CUB's kernels.
#include <cub/device/device_reduce.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#define CHECK(call)                                                                  \
    do {                                                                             \
        cudaError_t e_ = (call);                                                     \
        if (e_ != cudaSuccess) {                                                     \
            std::fprintf(stderr, "bare_cub: %s failed: %s\n", #call, cudaGetErrorString(e_)); \
            std::exit(1);                                                            \
        }                                                                            \
    } while (0)

// Spins until *flag is set by the host (or a second has passed, so that a
// lost flag cannot hang the machine).
__global__ void hold_kernel(volatile int *flag)
{
    long long start = clock64();
    while (*flag == 0 && clock64() - start < 2000000000LL) {
    }
}

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : (size_t(1) << 28);
    int warmup = argc > 2 ? std::atoi(argv[2]) : 5;
    int runs = argc > 3 ? std::atoi(argv[3]) : 100;
    bool hold = argc > 4 && std::string(argv[4]) == "hold";
    if (runs < 1) {
        std::fprintf(stderr, "bare_cub: RUNS must be at least 1\n");
        return 2;
    }

    std::vector<float> host(n);
    unsigned long long x = 42;
    for (size_t i = 0; i < n; i++) {  // any non-zero data; a simple LCG is enough here
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        host[i] = (float)((x >> 40) & 0xffff) / 65536.0f - 0.5f;
    }
    float *in = nullptr, *out = nullptr;
    void *tmp = nullptr;
    size_t tmp_bytes = 0;
    cudaStream_t s;
    CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    CHECK(cudaMalloc(&in, n * sizeof(float)));
    CHECK(cudaMalloc(&out, sizeof(float)));
    CHECK(cudaMemcpy(in, host.data(), n * sizeof(float), cudaMemcpyHostToDevice));
    CHECK(cub::DeviceReduce::Sum(nullptr, tmp_bytes, in, out, (int64_t)n, s));
    CHECK(cudaMalloc(&tmp, tmp_bytes));

    cudaEvent_t a, b;
    CHECK(cudaEventCreate(&a));
    CHECK(cudaEventCreate(&b));
    for (int i = 0; i < warmup; i++)
        CHECK(cub::DeviceReduce::Sum(tmp, tmp_bytes, in, out, (int64_t)n, s));
    CHECK(cudaStreamSynchronize(s));

    volatile int *flag = nullptr;
    int *flag_dev = nullptr;
    if (hold) {
        CHECK(cudaHostAlloc((void **)&flag, sizeof(int), cudaHostAllocMapped));
        CHECK(cudaHostGetDevicePointer((void **)&flag_dev, (void *)flag, 0));
    }

    std::vector<float> ms(runs);
    for (int i = 0; i < runs; i++) {
        if (hold) {
            *flag = 0;
            hold_kernel<<<1, 1, 0, s>>>(flag_dev);
            CHECK(cudaGetLastError());
        }
        CHECK(cudaEventRecord(a, s));
        CHECK(cub::DeviceReduce::Sum(tmp, tmp_bytes, in, out, (int64_t)n, s));
        CHECK(cudaEventRecord(b, s));
        if (hold) {
            std::atomic_thread_fence(std::memory_order_seq_cst);
            *flag = 1;
        }
        CHECK(cudaEventSynchronize(b));
        CHECK(cudaEventElapsedTime(&ms[i], a, b));
    }
    std::sort(ms.begin(), ms.end());
    double median = runs % 2 ? ms[runs / 2] : 0.5 * (ms[runs / 2 - 1] + ms[runs / 2]);
    float result = 0;
    CHECK(cudaMemcpy(&result, out, sizeof(float), cudaMemcpyDeviceToHost));
    std::printf("bare_cub%s n=%zu runs=%d median_ms=%.6f min_ms=%.6f max_ms=%.6f GB/s=%.1f sum=%g\n", hold ? "-hold" : "", n,
                runs, median, ms[0], ms[runs - 1], n * sizeof(float) / (median * 1e-3) / 1e9, result);
    return 0;
}
