package dev.irisjvm.kernels.attention;

import dev.irisjvm.core.internal.DeviceAddress;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import dev.irisjvm.runtime.abi.iris_attention_args;
import dev.irisjvm.runtime.abi.iris_attention_chunks;
import org.bytedeco.javacpp.BytePointer;

/**
 * The one argument every attention kernel takes ({@code iris_attention_args}, iris/abi/attention.h),
 * kept for the life of an {@link Attention}: each call fills the fields its kernel reads and
 * launches; the launch copies the struct, so the next call may refill it at once. The views of the
 * members (maps, context, chunks, addresses) are made once, so filling the struct allocates nothing.
 * Not thread-safe (Attention's calls are synchronized).
 */
final class AttentionArgs implements AutoCloseable {
    private final iris_attention_args args = new iris_attention_args();
    private final BytePointer qMap = new BytePointer(args.q_map());
    private final BytePointer kMap = new BytePointer(args.k_map());
    private final BytePointer vMap = new BytePointer(args.v_map());
    private final BytePointer k2Map = new BytePointer(args.k2_map());
    private final BytePointer v2Map = new BytePointer(args.v2_map());
    private final BytePointer ctx = new BytePointer(args.ctx());
    private final iris_attention_chunks qChunks = args.q_chunks();
    private final iris_attention_chunks kvChunks = args.kv_chunks();
    private final iris_attention_chunks secondChunks = args.second_chunks();
    private final DeviceAddress o = new DeviceAddress();
    private final DeviceAddress lse = new DeviceAddress();
    private final DeviceAddress oAcc = new DeviceAddress();
    private final DeviceAddress rowMax = new DeviceAddress();
    private final DeviceAddress rowSum = new DeviceAddress();
    private final DeviceAddress secondReady = new DeviceAddress();
    private final DeviceAddress q = new DeviceAddress();
    private final DeviceAddress k = new DeviceAddress();
    private final DeviceAddress v = new DeviceAddress();

    /** Where Q's tensor map goes ({@code TensorMap.copyTo}). */
    BytePointer qMap() {
        return qMap;
    }

    /** Where the (first) K shard's tensor map goes. */
    BytePointer kMap() {
        return kMap;
    }

    /** Where the (first) V shard's tensor map goes. */
    BytePointer vMap() {
        return vMap;
    }

    /** Where the last steps' second K shard's tensor map goes. */
    BytePointer k2Map() {
        return k2Map;
    }

    /** Where the last steps' second V shard's tensor map goes. */
    BytePointer v2Map() {
        return v2Map;
    }

    /**
     * Q's and the (first) K/V shard's addresses, which the portable kernels read instead of the maps.
     * Filled for either mainloop, so that the struct describes the launch.
     */
    void inputs(long qAddress, long kAddress, long vAddress) {
        args.q(q.at(qAddress)).k(k.at(kAddress)).v(v.at(vAddress));
    }

    /**
     * The forward kernel's fields besides its maps: outputs and shapes ({@code lse} may be 0), and
     * the mode and chunks the kernel fixes for itself (it finalizes, one chunk each), so that the
     * struct describes the launch.
     */
    iris_attention_args forward(AttentionProblem p, long oAddress, long lseAddress) {
        fill(p, KernelAbi.IRIS_ATTENTION_FINALIZE, oAddress, lseAddress, 0, 0, 0);
        chunks(qChunks, p.qLen(), 0, 0);
        chunks(kvChunks, p.kvLen(), 0, 0);
        return args;
    }

    /** A ring step's fields besides its maps: outputs, state, mode, shapes, chunks. */
    iris_attention_args step(RingStep s) {
        fill(s.problem(), s.mode(), s.o(), s.lse(), s.oAcc(), s.rowMax(), s.rowSum());
        chunks(qChunks, s.qChunks());
        chunks(kvChunks, s.kvChunks());
        return args;
    }

    /**
     * The context the last steps read ({@code DeviceContext.bytes()}): it bounds the wait for the
     * second shard and records errors. It stays until replaced.
     */
    void context(byte[] packed) {
        ctx.put(packed);
    }

    /**
     * The last steps' fields besides their maps and the {@link #context}: the first step's, then
     * the second shard's chunks and flag.
     */
    iris_attention_args lastSteps(RingLastSteps steps) {
        step(steps.first());
        chunks(secondChunks, steps.kvChunks());
        args.second_ready(secondReady.at(steps.secondReady()));
        return args;
    }

    private void fill(AttentionProblem p, int mode, long oAddress, long lseAddress, long oAccAddress, long rowMaxAddress,
                      long rowSumAddress) {
        args.o(o.at(oAddress)).lse(lse.at(lseAddress)).o_acc(oAcc.at(oAccAddress)).row_max(rowMax.at(rowMaxAddress))
                .row_sum(rowSum.at(rowSumAddress)).mode(mode).sq(p.qLen()).skv(p.kvLen()).hq(p.qHeads()).hkv(p.kvHeads())
                .scale_log2(p.scaleLog2());
    }

    private static void chunks(iris_attention_chunks into, Chunks c) {
        chunks(into, c.length(), c.first(), c.second());
    }

    private static void chunks(iris_attention_chunks into, int length, int first, int second) {
        into.len(length).first(first).second(second);
    }

    @Override
    public void close() {
        args.close();
    }
}
