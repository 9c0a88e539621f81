package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.internal.DeviceAddress;
import dev.irisjvm.core.internal.TensorMap;
import dev.irisjvm.runtime.abi.iris_gemm_args;
import org.bytedeco.javacpp.BytePointer;

/**
 * The one argument of every {@code iris_gemm_*} kernel ({@code iris_gemm_args}, iris/abi/gemm.h),
 * kept for the life of a {@link Gemm} and refilled by each call; the launch copies it, so the next
 * call may refill it at once. A fill allocates nothing. Not thread-safe (Gemm's calls are
 * synchronized).
 */
final class GemmArgs implements AutoCloseable {
    private final iris_gemm_args args = new iris_gemm_args();
    private final BytePointer aMap = new BytePointer(args.a_map());
    private final BytePointer bMap = new BytePointer(args.b_map());
    private final BytePointer cMap = new BytePointer(args.c_map());
    private final DeviceAddress c = new DeviceAddress();
    private final DeviceAddress bias = new DeviceAddress();
    private final DeviceAddress partials = new DeviceAddress();
    private final DeviceAddress counters = new DeviceAddress();

    /** A's and B's maps of the next launch. */
    void maps(TensorMap a, TensorMap b) {
        a.copyTo(aMap);
        b.copyTo(bMap);
    }

    /**
     * C's map of the next launch, for a kernel that stores C by TMA; a swapped kernel reads none,
     * and its launch may keep an earlier call's.
     */
    void outputMap(TensorMap c) {
        c.copyTo(cMap);
    }

    /**
     * The struct of one call, its maps set by {@link #maps}: C, the bias (0: none), the shape, the
     * tile order's group and the scaling, C = alpha A B + beta C.
     */
    iris_gemm_args operands(long cAddress, long biasAddress, int m, int n, int k, int ldc, int groupM, float alpha, float beta) {
        return args.c(c.at(cAddress)).bias(bias.at(biasAddress)).m(m).n(n).k(k).ldc(ldc).group_m(groupM).alpha(alpha).beta(beta)
                .stream_k_tiles(0).stream_k_partials(partials.at(0)).stream_k_counters(counters.at(0));
    }

    /** {@link #operands(long, long, int, int, int, int, int, float, float)} of a checked problem, every tile whole. */
    iris_gemm_args operands(GemmProblem p, int groupM) {
        return operands(p, groupM, false);
    }

    /**
     * The same for a kernel of swapped tiles ({@code swapped}, iris/gemm/swapped.cuh), whose product
     * C^T = B A^T is N x M: m and n exchanged, C, its leading dimension and the bias as they are.
     */
    iris_gemm_args operands(GemmProblem p, int groupM, boolean swapped) {
        return operands(p.c().address(), p.bias(), swapped ? p.n() : p.m(), swapped ? p.m() : p.n(), p.k(), p.ldc(), groupM, p.alpha(),
                p.beta());
    }

    /**
     * The struct of a checked problem: {@link #operands(GemmProblem, int)}, with the plan's shared
     * tiles on the workspace's partials and counters (left 0 where the plan shares none).
     */
    iris_gemm_args operands(GemmProblem p, int groupM, StreamKPlan plan, long partialsAddress, long countersAddress) {
        operands(p, groupM, plan.tile().swapped());
        return plan.sharedTiles() == 0 ? args
                : args.stream_k_tiles(plan.sharedTiles()).stream_k_partials(partials.at(partialsAddress))
                        .stream_k_counters(counters.at(countersAddress));
    }

    @Override
    public void close() {
        args.close();
    }
}
