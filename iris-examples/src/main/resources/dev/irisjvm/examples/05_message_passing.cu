// 05 message passing: rank 0 produces n values straight into rank 1's inbox, then raises rank 1's
// flag with release order; rank 1 waits for the flag with acquire order (bounded: a rank that
// never sends is reported, not waited for forever) and consumes the message.
#include <iris/iris.cuh>

extern "C" __global__ void producer(const IRIS_GRID_CONSTANT iris::Ctx ctx, const float* message, float* inbox,
                                    uint64_t* flag, uint64_t n, uint64_t sequence) {
    iris::put(ctx, inbox, message, n, 1);
    __syncthreads();                                    // the whole block's stores precede the signal
    if (threadIdx.x == 0) iris::signal(ctx, flag, sequence, 1);
}

extern "C" __global__ void consumer(const IRIS_GRID_CONSTANT iris::Ctx ctx, const float* inbox, float* received,
                                    const uint64_t* flag, uint64_t n, uint64_t sequence) {
    __shared__ bool arrived;
    if (threadIdx.x == 0) arrived = iris::wait_until(ctx, flag, iris::Cmp::ge, sequence, /*site*/ 5, /*peer*/ 0);
    __syncthreads();
    if (!arrived) return;                               // the host raises the recorded timeout
    for (uint64_t i = threadIdx.x; i < n; i += blockDim.x) received[i] = inbox[i] * 2.0f;
}
