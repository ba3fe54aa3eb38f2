// bare_cub: the yardstick for kbench's own timing overhead.
//
// Times cub::DeviceReduce::Sum on n floats with nothing but a loop of CUDA
// events around each call, the way one would by hand, and prints the median.
// tests/gpu/overhead.sh runs it beside `kbench run` on the same size and
// compares the two medians: kbench's framework must cost nothing measurable.
#include <cub/device/device_reduce.cuh>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK(call)                                                                  \
    do {                                                                             \
        cudaError_t e_ = (call);                                                     \
        if (e_ != cudaSuccess) {                                                     \
            std::fprintf(stderr, "bare_cub: %s failed: %s\n", #call, cudaGetErrorString(e_)); \
            std::exit(1);                                                            \
        }                                                                            \
    } while (0)

int main(int argc, char **argv)
{
    size_t n = argc > 1 ? std::strtoull(argv[1], nullptr, 0) : (size_t(1) << 28);
    int warmup = argc > 2 ? std::atoi(argv[2]) : 5;
    int runs = argc > 3 ? std::atoi(argv[3]) : 100;

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

    std::vector<float> ms(runs);
    for (int i = 0; i < runs; i++) {
        CHECK(cudaEventRecord(a, s));
        CHECK(cub::DeviceReduce::Sum(tmp, tmp_bytes, in, out, (int64_t)n, s));
        CHECK(cudaEventRecord(b, s));
        CHECK(cudaEventSynchronize(b));
        CHECK(cudaEventElapsedTime(&ms[i], a, b));
    }
    std::sort(ms.begin(), ms.end());
    double median = runs % 2 ? ms[runs / 2] : 0.5 * (ms[runs / 2 - 1] + ms[runs / 2]);
    float result = 0;
    CHECK(cudaMemcpy(&result, out, sizeof(float), cudaMemcpyDeviceToHost));
    std::printf("bare_cub n=%zu runs=%d median_ms=%.6f min_ms=%.6f max_ms=%.6f GB/s=%.1f sum=%g\n", n,
                runs, median, ms[0], ms[runs - 1], n * sizeof(float) / (median * 1e-3) / 1e9, result);
    return 0;
}
