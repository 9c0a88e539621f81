package dev.irisjvm.kernels.attention;

import dev.irisjvm.core.DeviceContext;
import dev.irisjvm.core.internal.DeviceAddress;
import dev.irisjvm.runtime.abi.iris_flash_decode_args;
import org.bytedeco.javacpp.BytePointer;

/**
 * The one argument of the four flash-decode kernels ({@code iris_flash_decode_args},
 * iris/abi/flash_decode.h), kept for the life of a {@link FlashDecode}: the context is set once,
 * each call fills the fields its kernel reads and launches; the launch copies the struct, so the
 * next call may refill it at once. Filling it allocates nothing. Not thread-safe (FlashDecode's
 * calls are synchronized).
 */
final class FlashDecodeArgs implements AutoCloseable {
    private final iris_flash_decode_args args = new iris_flash_decode_args();
    private final DeviceAddress q = new DeviceAddress();
    private final DeviceAddress k = new DeviceAddress();
    private final DeviceAddress v = new DeviceAddress();
    private final DeviceAddress o = new DeviceAddress();
    private final DeviceAddress partials = new DeviceAddress();
    private final DeviceAddress arrived = new DeviceAddress();
    private final DeviceAddress merged = new DeviceAddress();

    /** @param ctx the rank's context ({@link DeviceContext#bytes()}), which the fused kernel reads */
    FlashDecodeArgs(byte[] ctx) {
        new BytePointer(args.ctx()).put(ctx);
    }

    /** The fused kernel: inputs, output, the two sets of partials and counters, the call's epoch. */
    iris_flash_decode_args fused(FlashDecodeProblem p, long qAddress, long kAddress, long vAddress, long oAddress,
                                 long partialsAddress, long arrivedAddress, long epoch) {
        return inputs(p, qAddress, kAddress, vAddress).o(o.at(oAddress)).partials(partials.at(partialsAddress))
                .arrived(arrived.at(arrivedAddress)).epoch(epoch);
    }

    /** The partial kernel: inputs, and the slot its partials go to. */
    iris_flash_decode_args partial(FlashDecodeProblem p, long qAddress, long kAddress, long vAddress, long out) {
        return inputs(p, qAddress, kAddress, vAddress).partials(partials.at(out));
    }

    /** The merge kernel: this rank's slot of partials into one entry per query head at {@code out}. */
    iris_flash_decode_args merge(FlashDecodeProblem p, long partialsAddress, long out) {
        return shapes(p).partials(partials.at(partialsAddress)).merged(merged.at(out));
    }

    /**
     * The combine kernel: {@code world} gathered slots of {@code slotChunks} chunks each into o
     * ({@code p.chunks()} after the partial kernel, 1 after the merge).
     */
    iris_flash_decode_args combine(FlashDecodeProblem p, long gathered, int world, int slotChunks, long oAddress) {
        return shapes(p).partials(partials.at(gathered)).o(o.at(oAddress)).world(world).slot_chunks(slotChunks);
    }

    private iris_flash_decode_args inputs(FlashDecodeProblem p, long qAddress, long kAddress, long vAddress) {
        return shapes(p).q(q.at(qAddress)).k(k.at(kAddress)).v(v.at(vAddress)).scale_log2(p.scaleLog2());
    }

    private iris_flash_decode_args shapes(FlashDecodeProblem p) {
        return args.b(p.batch()).hq(p.qHeads()).hkv(p.kvHeads()).len(p.len()).chunk_len(p.chunkLen());
    }

    @Override
    public void close() {
        args.close();
    }
}
