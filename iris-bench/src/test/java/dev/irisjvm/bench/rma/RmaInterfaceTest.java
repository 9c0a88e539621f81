package dev.irisjvm.bench.rma;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.irisjvm.core.internal.AbiLayout;
import dev.irisjvm.core.testing.ContextBytes;
import dev.irisjvm.runtime.abi.iris_rma_bench_args;
import org.junit.jupiter.api.Test;

/**
 * The benchmark's side of iris/abi/rma_bench.h: the struct has the layout the header pins, and each
 * call fills the fields its kernel reads (rma_bench.cu). Runs without a GPU (the generated struct
 * is host memory).
 */
class RmaInterfaceTest {

    @Test
    void theStructHasTheLayoutTheHeaderPins() {
        assertEquals(256, AbiLayout.size(iris_rma_bench_args.class));
        assertEquals(112, AbiLayout.offset(iris_rma_bench_args.class, "dst"));
        assertEquals(152, AbiLayout.offset(iris_rma_bench_args.class, "result"));
        assertEquals(160, AbiLayout.offset(iris_rma_bench_args.class, "bytes"));
        assertEquals(224, AbiLayout.offset(iris_rma_bench_args.class, "iterations"));
        assertEquals(232, AbiLayout.offset(iris_rma_bench_args.class, "tile_rows"));
        assertEquals(240, AbiLayout.offset(iris_rma_bench_args.class, "peer"));
        assertEquals(248, AbiLayout.offset(iris_rma_bench_args.class, "initiator"));
    }

    @Test
    void theHostDerivesItsConstantsFromTheHeader() {
        assertEquals(8, RmaKernels.VECS_IN_FLIGHT);
        assertEquals(4, RmaKernels.ATOMICS_IN_FLIGHT);
        assertEquals(4 * 16384 + 4 * 8, RmaKernels.BULK_SMEM_BYTES, "four 16 KiB stages and their mbarriers");
        assertEquals(0, RmaKernels.AtomicOp.ADD_U64.code());
        assertEquals(1, RmaKernels.AtomicOp.XCHG_U64.code());
        assertEquals(2, RmaKernels.AtomicOp.CAS_U64.code());
        assertEquals(3, RmaKernels.AtomicOp.ADD_F32.code());
    }

    @Test
    void copiesFillTheFieldsTheirKernelsRead() {
        try (RmaArgs args = new RmaArgs(ContextBytes.of(1, 4))) {
            iris_rma_bench_args a = args.copy(0x1000, 0x2000, 77, 3);
            assertEquals(1, a.ctx().rank());
            assertEquals(4, a.ctx().world());
            assertEquals(0x1000, a.dst().address());
            assertEquals(0x2000, a.src().address());
            assertEquals(77, a.bytes());
            assertEquals(3, a.peer());

            a = args.allPeers(0x3000, 0x4000, 100, 112);
            assertEquals(0x3000, a.dst().address());
            assertEquals(0x4000, a.src().address());
            assertEquals(100, a.bytes());
            assertEquals(112, a.stride());

            a = args.tiles(0x5000, 0x6000, 256, 1024, 64, 128, 2);
            assertEquals(0x5000, a.dst().address());
            assertEquals(0x6000, a.src().address());
            assertEquals(256, a.rows());
            assertEquals(1024, a.ld());
            assertEquals(64, a.tile_rows());
            assertEquals(128, a.tile_cols());
            assertEquals(2, a.peer());
        }
    }

    @Test
    void atomicsAndChecksFillTheFieldsTheirKernelsRead() {
        try (RmaArgs args = new RmaArgs(ContextBytes.of(0, 2))) {
            iris_rma_bench_args a = args.atomics(0x1000, 4096, RmaKernels.AtomicOp.CAS_U64.code(), 42, 5, 1, 0x2000);
            assertEquals(0x1000, a.dst().address(), "the slots");
            assertEquals(4096, a.count());
            assertEquals(2, a.op());
            assertEquals(42, a.seed());
            assertEquals(5, a.value(), "the generation");
            assertEquals(1, a.peer());
            assertEquals(0x2000, a.result().address());

            a = args.compare(0x3000, 0x4000, 999, 0x5000);
            assertEquals(0x3000, a.dst().address(), "a");
            assertEquals(0x4000, a.src().address(), "b");
            assertEquals(999, a.bytes());
            assertEquals(0x5000, a.result().address());

            a = args.allReduceCheck(0x6000, 0x7000, 321, 0x8000);
            assertEquals(0x6000, a.src().address(), "in");
            assertEquals(0x7000, a.dst().address(), "out");
            assertEquals(321, a.count());
            assertEquals(0x8000, a.result().address());
        }
    }

    @Test
    void messagesAndHandshakesFillTheFieldsTheirKernelsRead() {
        try (RmaArgs args = new RmaArgs(ContextBytes.of(0, 2))) {
            iris_rma_bench_args a = args.message(0x1000, 0x2000, 4096, 0x3000, 0x4000, 10, 20, 1, 0x5000);
            assertEquals(0x1000, a.landing().address());
            assertEquals(0x2000, a.src().address(), "the producer's payload");
            assertEquals(0x2000, a.dst().address(), "the consumer's out");
            assertEquals(4096, a.bytes());
            assertEquals(0x3000, a.flags().address());
            assertEquals(0x4000, a.acks().address());
            assertEquals(10, a.seq0());
            assertEquals(20, a.iterations());
            assertEquals(1, a.peer());
            assertEquals(0x5000, a.result().address(), "done or errors");

            a = args.pingPong(0x6000, 30, 40, 1, true, 0x7000);
            assertEquals(0x6000, a.flags().address(), "the flag");
            assertEquals(30, a.seq0());
            assertEquals(40, a.iterations(), "the rounds");
            assertEquals(1, a.initiator());
            assertEquals(0x7000, a.result().address(), "done");
            assertEquals(0, args.pingPong(0x6000, 30, 40, 1, false, 0x7000).initiator());

            a = args.meet(0x8000, 7, 1);
            assertEquals(0x8000, a.flags().address());
            assertEquals(7, a.value());
            assertEquals(1, a.peer());
        }
    }
}
