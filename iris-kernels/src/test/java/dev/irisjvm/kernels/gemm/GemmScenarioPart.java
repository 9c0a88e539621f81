package dev.irisjvm.kernels.gemm;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.SymmetricHeap;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.testing.Failures;
import dev.irisjvm.kernels.gemm.GemmReference.HostMatrix;

/**
 * What a group of {@link GemmScenarios}' cases in a class of its own works with: the scenarios'
 * shared helpers, the rank's Iris, heap and stream, and the Gemm under test.
 */
abstract class GemmScenarioPart {
    final GemmScenarios s;
    final Iris iris;
    final SymmetricHeap heap;
    final Stream stream;
    final Gemm gemm;

    GemmScenarioPart(GemmScenarios s, Iris iris, Gemm gemm) {
        this.s = s;
        this.iris = iris;
        this.heap = iris.heap();
        this.stream = iris.stream();
        this.gemm = gemm;
    }

    /**
     * m x n x k (bf16 in, F32 out, B stored N x K) twice on fresh outputs, which must agree bit for
     * bit: a schedule that shares a tile out adds its pieces in a fixed order, whichever arrives last.
     */
    void sameTwice(Failures f, String seedName, int m, int n, int k) {
        long seed = s.seed(seedName, m, n, k);
        HostMatrix a = HostMatrix.random(seed, DType.BF16, m, k);
        HostMatrix b = HostMatrix.random(seed + 1, DType.BF16, n, k);
        try (SymTensor ta = s.upload(a, k, 0, m, k); SymTensor tb = s.upload(b, k, 0, n, k);
             SymTensor first = heap.empty(DType.F32, m, n); SymTensor second = heap.empty(DType.F32, m, n)) {
            s.poison(first);
            s.poison(second);
            gemm.matmul(ta, tb, GemmLayout.NK, first, stream);
            gemm.matmul(ta, tb, GemmLayout.NK, second, stream);
            iris.synchronize();
            f.add(GemmScenarios.sameBits(m + " x " + n + " x " + k + " (" + gemm.schedule(m, n, k) + "): the second call's F32 output",
                    GemmScenarios.download(second), GemmScenarios.download(first)));
        }
    }
}
