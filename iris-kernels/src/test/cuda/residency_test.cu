// residency_test.cu: other work that holds SMs, driven by dev.irisjvm.kernels.SmHog for the
// scenarios that run the library's kernels while most of the GPU is taken (FusedScenarios,
// AttentionScenarios, DeviceApiScenarios): CUDA promises no kernel that all its blocks are resident at once, nor that
// they start in index order, when another stream, another process or an MPS limit holds SMs.
//
// Portable: only the device API, so the HIP build compiles it too (compile-only).
#include <iris/iris.cuh>

// Each block counts itself in status[0] as it starts, then holds its SM until the host sets
// status[1] or until max_ns have passed since it started; a block that ends by the deadline also
// counts itself in status[2], so that the host can tell that the hog let go before it was told to.
// status: mapped host memory, three u32, zeroed by the host; the host polls status[0] while the
// blocks start. Launched with the most dynamic shared memory a block may have, so one block fills an
// SM and no block of another kernel that uses shared memory fits beside it; one thread per block
// spins (sleeping between looks), the others leave at once.
extern "C" __global__ void rt_hold_sms(uint32_t* status, uint64_t max_ns) {
    if (threadIdx.x != 0) return;
    iris::arch::fetch_add<iris::Order::relaxed, iris::Scope::system>(status, 1u);
    const uint64_t start = iris::arch::now_ns();
    while (iris::arch::load<iris::Order::relaxed, iris::Scope::system>(status + 1) == 0) {
        if (iris::arch::now_ns() - start >= max_ns) {
            iris::arch::fetch_add<iris::Order::relaxed, iris::Scope::system>(status + 2, 1u);
            return;
        }
        iris::arch::sleep_ns(1000);
    }
}

// Stores value at out: a kernel that has never run, for the scenario that launches one for the first
// time beside held SMs (DeviceApiScenarios: its code must already be in the context).
extern "C" __global__ void rt_store(uint64_t* out, uint64_t value) {
    if (threadIdx.x == 0 && blockIdx.x == 0) *out = value;
}
