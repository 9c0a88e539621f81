package dev.irisjvm.bench.moe;

import dev.irisjvm.bench.rma.Verifier;
import dev.irisjvm.core.DType;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Resources;
import dev.irisjvm.kernels.moe.MoeCombine;
import dev.irisjvm.kernels.moe.MoeDispatch;
import dev.irisjvm.kernels.moe.MoeExpertGemm;
import java.util.List;

/**
 * The expert layer of one case, three ways, each from the same tokens, routing and weights (one H x H
 * weight per expert, uniform in [-1/sqrt(H), 1/sqrt(H)) from the case's seed, so that outputs stay
 * near the tokens' scale):
 * <ul>
 *   <li>{@link #sequence}: dispatch, the grouped GEMM ({@link MoeExpertGemm#gemm}) and {@link
 *       MoeCombine#combine}, one after the other: the unfused layer;</li>
 *   <li>{@link #fused}: dispatch, then the GEMM with combine as its epilogue ({@link
 *       MoeExpertGemm#gemmAndCombine});</li>
 *   <li>{@link #fed}: {@link MoeExpertGemm#forward}, the GEMM fed by the dispatch as its tiles
 *       arrive, combine as its epilogue.</li>
 * </ul>
 * All three give the same bits ({@link #check}). Collective: every rank creates and closes it alike.
 */
final class MoeLayer implements AutoCloseable {
    private final MoeDispatch dispatch;
    private final MoeCombine combine;
    private final MoeExpertGemm experts;
    private final SymTensor weights;  // [L, H, H]
    private final SymTensor rows;     // [L, capacity, H]: the sequence's expert outputs
    private final SymTensor other;    // [T, H]: a second output, for the check

    private MoeLayer(MoeDispatch dispatch, MoeCombine combine, MoeExpertGemm experts, SymTensor weights, SymTensor rows,
                     SymTensor other) {
        this.dispatch = dispatch;
        this.combine = combine;
        this.experts = experts;
        this.weights = weights;
        this.rows = rows;
        this.other = other;
    }

    /** Collective. {@code dispatch}'s capacity must be a multiple of 128 (the GEMM's tile). */
    static MoeLayer create(Iris iris, MoeDispatch dispatch, MoeCombine combine, long seed) {
        int hidden = dispatch.config().hidden();
        int local = dispatch.localExperts();
        double scale = 1 / Math.sqrt(hidden);
        MoeExpertGemm experts = null;
        SymTensor weights = null, rows = null, other = null;
        try {
            experts = MoeExpertGemm.create(dispatch, hidden);
            weights = iris.heap().uniform(seed, -scale, scale, DType.BF16, local, hidden, hidden);
            rows = iris.heap().empty(DType.BF16, local, dispatch.config().capacity(), hidden);
            other = iris.heap().empty(DType.BF16, dispatch.config().maxTokens(), hidden);
            return new MoeLayer(dispatch, combine, experts, weights, rows, other);
        } catch (RuntimeException | Error e) {
            Resources.closeAfter(e, other, rows, weights, experts);
            throw e;
        }
    }

    void sequence(SymTensor tokens, SymTensor ids, SymTensor routeWeights, SymTensor out, Stream stream) {
        dispatch.dispatch(tokens, ids, routeWeights, stream);
        experts.gemm(weights, rows, stream);
        combine.combine(rows, out, stream);
    }

    void fused(SymTensor tokens, SymTensor ids, SymTensor routeWeights, SymTensor out, Stream stream) {
        dispatch.dispatch(tokens, ids, routeWeights, stream);
        experts.gemmAndCombine(weights, out, stream);
    }

    void fed(SymTensor tokens, SymTensor ids, SymTensor routeWeights, SymTensor out, Stream stream) {
        experts.forward(tokens, ids, routeWeights, (int) tokens.shape()[0], weights, out, stream);
    }

    /**
     * Runs the three ways once each, every output poisoned first, and compares the fused and fed
     * outputs with the sequence's, byte for byte: {@link Verifier#OK} or what differed. (The
     * layer's values against a double reference are the GPU tests' MoeExpertGemmScenarios.)
     */
    String check(SymTensor tokens, SymTensor ids, SymTensor routeWeights, SymTensor out, Verifier verifier, Stream stream) {
        long bytes = out.byteSize();
        Verifier.poison(stream, out);
        sequence(tokens, ids, routeWeights, out, stream);
        Verifier.poison(stream, other);
        fused(tokens, ids, routeWeights, other, stream);
        String fusedCheck = verifier.sameBytes(out.deviceAddress(), other.deviceAddress(), bytes, "gemmAndCombine against the sequence");
        Verifier.poison(stream, other);
        fed(tokens, ids, routeWeights, other, stream);
        String fedCheck = verifier.sameBytes(out.deviceAddress(), other.deviceAddress(), bytes, "forward against the sequence");
        List<String> wrong = List.of(fusedCheck, fedCheck).stream().filter(c -> !Verifier.OK.equals(c)).toList();
        return wrong.isEmpty() ? Verifier.OK : String.join("; ", wrong);
    }

    @Override
    public void close() {
        Resources.closeAll(other, rows, weights, experts);
    }
}
