package dev.irisjvm.bench.ccl;

import dev.irisjvm.core.DType;
import dev.irisjvm.core.HalfFloats;
import dev.irisjvm.core.Iris;
import dev.irisjvm.core.SymTensor;
import dev.irisjvm.core.gpu.Stream;
import dev.irisjvm.core.internal.Memcpy;
import dev.irisjvm.kernels.ccl.ReduceOp;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import org.bytedeco.javacpp.BytePointer;

/**
 * The reference output of a point when NCCL is unavailable, built without the collectives under
 * test: data movement by copies from the peers' inputs (through the heap's peer mappings), and
 * reductions on the host, chunk by chunk, in float in rank order, rounded once to the type (the
 * sum times 1/W for AVG). Every rank builds its own after all inputs are ready; nobody writes an
 * input afterwards.
 *
 * <pre>{@code
 * new HostReference(iris, stream).build(CclOp.ALL_REDUCE, shape, in, ref.deviceAddress(), DType.BF16, ReduceOp.SUM, 0);
 * }</pre>
 */
final class HostReference {
    static final int CHUNK_ELEMENTS = 1 << 20;

    private final Iris iris;
    private final Stream stream;
    private final int rank;
    private final int world;

    HostReference(Iris iris, Stream stream) {
        this.iris = iris;
        this.stream = stream;
        this.rank = iris.rank();
        this.world = iris.worldSize();
    }

    void build(CclOp op, CclOp.Shape shape, SymTensor in, long ref, DType t, ReduceOp reduce, int root) {
        long size = t.byteSize();
        switch (op) {
            case ALL_GATHER -> {
                long block = shape.inCount() * size;
                for (int p = 0; p < world; p++) {
                    Memcpy.deviceToDevice(ref + p * block, in.deviceAddress(p), block, stream);
                }
            }
            case ALL_TO_ALL -> {
                long block = shape.inCount() / world * size;
                for (int p = 0; p < world; p++) {
                    Memcpy.deviceToDevice(ref + p * block, in.deviceAddress(p) + rank * block, block, stream);
                }
            }
            case BROADCAST -> Memcpy.deviceToDevice(ref, in.deviceAddress(root), shape.inCount() * size, stream);
            case ALL_REDUCE -> reduce(in, 0, shape.outCount(), ref, t, reduce);
            case REDUCE_SCATTER -> reduce(in, rank * shape.outCount(), shape.outCount(), ref, t, reduce);
        }
        iris.synchronize(stream);
    }

    /** ref[i] = the reduction over ranks of in[from + i], i < n. */
    private void reduce(SymTensor in, long from, long n, long ref, DType t, ReduceOp op) {
        int size = t.byteSize();
        int chunk = (int) Math.min(CHUNK_ELEMENTS, n);
        BytePointer[] inputs = new BytePointer[world];
        try (BytePointer out = new BytePointer((long) chunk * size)) {
            for (int p = 0; p < world; p++) {
                inputs[p] = new BytePointer((long) chunk * size);
            }
            float[] acc = new float[chunk];
            for (long at = 0; at < n; at += chunk) {
                int len = (int) Math.min(chunk, n - at);
                for (int p = 0; p < world; p++) {
                    Memcpy.deviceToHost(inputs[p], in.deviceAddress(p) + (from + at) * size, (long) len * size, stream);
                }
                iris.synchronize(stream);
                for (int p = 0; p < world; p++) {
                    ByteBuffer b = inputs[p].position(0).limit((long) len * size).asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
                    for (int i = 0; i < len; i++) {
                        float x = (float) OutputCheck.read(b, i, t);
                        acc[i] = p == 0 ? x : combine(op, acc[i], x);
                    }
                }
                ByteBuffer o = out.position(0).limit((long) len * size).asByteBuffer().order(ByteOrder.LITTLE_ENDIAN);
                for (int i = 0; i < len; i++) {
                    float v = op == ReduceOp.AVG ? acc[i] * (1.0f / world) : acc[i];
                    write(o, i, t, v);
                }
                Memcpy.hostToDevice(ref + at * size, out.position(0), (long) len * size, stream);
                iris.synchronize(stream);
            }
        } finally {
            for (BytePointer p : inputs) {
                if (p != null) {
                    p.close();
                }
            }
        }
    }

    static float combine(ReduceOp op, float a, float b) {
        return switch (op) {
            case SUM, AVG -> a + b;
            case MAX -> Math.max(a, b);
            case MIN -> Math.min(a, b);
        };
    }

    static void write(ByteBuffer b, int i, DType t, float v) {
        switch (t) {
            case BF16 -> b.putShort(i * 2, HalfFloats.floatToBf16(v));
            case F16 -> b.putShort(i * 2, HalfFloats.floatToF16(v));
            case F32 -> b.putFloat(i * 4, v);
            default -> throw new IllegalArgumentException("not a reducible dtype: " + t);
        }
    }
}
