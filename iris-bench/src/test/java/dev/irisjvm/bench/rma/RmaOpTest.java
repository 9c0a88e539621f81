package dev.irisjvm.bench.rma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.List;
import org.junit.jupiter.api.Test;

class RmaOpTest {
    @Test
    void namesAndFamilies() {
        assertEquals("all_load", RmaOp.ALL_LOAD.id());
        assertEquals(RmaOp.ATOMIC_CAS, RmaOp.parse("Atomic-CAS"));
        assertEquals(RmaOp.Family.NCCL, RmaOp.SEND_RECV.family());
        assertEquals(List.of("copy_engine_pull", "copy_engine_push"), RmaOp.COPY_ENGINE.recordedOps());
        assertEquals(List.of("ping_pong", "ping_pong_relaxed"), RmaOp.PING_PONG.recordedOps());
        assertEquals(List.of("load_bulk"), RmaOp.LOAD_BULK.recordedOps());
    }

    @Test
    void listsKeepOrderAndDropRepeats() {
        assertEquals(List.of(RmaOp.STORE, RmaOp.LOAD), RmaOp.parseList("store,load,store"));
        assertEquals(RmaOp.values().length, RmaOp.parseList("all").size());
        assertEquals(RmaOp.PING_PONG, RmaOp.parseList("ping_pong,all").get(0));
        assertThrows(IllegalArgumentException.class, () -> RmaOp.parseList(" , "));
        assertThrows(IllegalArgumentException.class, () -> RmaOp.parse("nope"));
    }
}
