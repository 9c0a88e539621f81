package dev.irisjvm.core;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The host side of iris::DeviceStatus (ctx.cuh) without a GPU: what a kernel records becomes an
 * exception with the facts, the abort word survives the clearing, and a checked-mode bad address
 * names the kernel, the source line, the target rank and the offset.
 */
class DeviceStatusRecordTest {
    private static final long FILE_ADDRESS = 0x7000_0000L;
    private static final long FUNCTION_ADDRESS = 0x7000_1000L;
    private static final Map<Long, String> DEVICE_STRINGS = Map.of(
            FILE_ADDRESS, "/build/iris-kernels/src/test/cuda/fault_test.cu", FUNCTION_ADDRESS, "ft_store_at");
    private static final DeviceStatusRecord.DeviceStrings STRINGS = (address, max) -> DEVICE_STRINGS.get(address);

    private final ByteBuffer status = ByteBuffer.allocateDirect(DeviceStatusRecord.BYTES).order(ByteOrder.nativeOrder());

    @Test
    void aCleanRecordRaisesNothing() {
        DeviceStatusRecord.check(status, 2, 1000, STRINGS, null);
    }

    @Test
    void aWaitTimeoutNamesRankSitePeerAndFlag() {
        record(1, 7, 1, 0, 3, 4, 2_500_000_000L);
        IrisDeviceException e = assertThrows(IrisDeviceException.class, () -> DeviceStatusRecord.check(status, 2, 2000, STRINGS, null));
        assertEquals("rank 1: a device wait (wait_until) timed out in wait site 7 after 2500 ms (deadline 2000 ms), waiting for"
                + " rank 0: flag was 3, expected 4; rank 0 may have failed or stopped calling the same operations", e.getMessage());
        assertEquals(1, e.code());
        assertEquals(0, e.peer());
        DeviceStatusRecord.check(status, 2, 2000, STRINGS, null);  // cleared: raised once
    }

    @Test
    void aBarrierTimeoutNamesTheBarrier() {
        record(2, CoreKernels.SITE_BARRIER, 0, 1, 0, 1, 3_000_000_000L);
        IrisDeviceException e = assertThrows(IrisDeviceException.class, () -> DeviceStatusRecord.check(status, 2, 2000, STRINGS, null));
        assertTrue(e.getMessage().startsWith("rank 0: a device barrier timed out in Iris.barrier() after 3000 ms"), e.getMessage());
    }

    @Test
    void abortIsStickyAndAnAbortedWaitNamesTheLostRank() {
        assertFalse(DeviceStatusRecord.aborted(status));
        DeviceStatusRecord.abort(status, 3);
        assertTrue(DeviceStatusRecord.aborted(status));
        assertEquals(3, status.getInt(DeviceStatusRecord.LOST_RANK));
        record(4, CoreKernels.SITE_BARRIER, 1, 3, 5, 6, 12_000_000L);
        IrisRankLostException e = assertThrows(IrisRankLostException.class,
                () -> DeviceStatusRecord.check(status, 4, 30_000, STRINGS, "its watchdog connection closed (noticed by rank 0)"));
        assertEquals("rank 1: Iris.barrier() stopped after 12 ms waiting for rank 3 because rank 3 was lost: its watchdog "
                + "connection closed (noticed by rank 0); the job cannot go on without it", e.getMessage());
        assertEquals(1, e.rank());
        assertEquals(3, e.lostRank());
        assertTrue(DeviceStatusRecord.aborted(status), "the abort word is never cleared");
        assertEquals(0, status.getInt(DeviceStatusRecord.CODE));
    }

    @Test
    void aBadAddressOutsideTheHeapNamesKernelLineTargetAndOffset() {
        long heap = 1L << 30;
        record(5, 31, 0, 1, heap + 4096, heap, 4);
        status.putLong(DeviceStatusRecord.FILE, FILE_ADDRESS).putLong(DeviceStatusRecord.FUNCTION, FUNCTION_ADDRESS);
        IrisDeviceException e = assertThrows(IrisDeviceException.class, () -> DeviceStatusRecord.check(status, 2, 1000, STRINGS, null));
        assertEquals("rank 0: checked mode: ft_store_at (fault_test.cu:31) translated an address for target rank 1: offset "
                + (heap + 4096) + " lies outside the heap of " + heap + " bytes; the thread that made the call stopped and the "
                + "kernel's waits gave up", e.getMessage());
        assertEquals(DeviceStatusRecord.BAD_ADDRESS, e.code());
        assertEquals(1, e.peer());
        assertEquals(0L, status.getLong(DeviceStatusRecord.FILE), "cleared");
    }

    @Test
    void aRefusedLaunchNamesTheCheckAndWhatTheLaunchGave() {
        record(6, 9006, 1, -1, 1024, 216064, 0);
        IrisDeviceException e = assertThrows(IrisDeviceException.class, () -> DeviceStatusRecord.check(status, 2, 1000, STRINGS, null));
        assertEquals("rank 1: a kernel refused its launch at launch check 9006: the launch gave 1024 where the kernel needs "
                + "216064; it returned without computing, so its outputs are not written (a launch that does not match the "
                + "kernel: a bug in the code that launched it)", e.getMessage());
        assertEquals(DeviceStatusRecord.BAD_LAUNCH, e.code());
        DeviceStatusRecord.check(status, 2, 1000, STRINGS, null);  // cleared: raised once
    }

    @Test
    void anMoeExpertOverCapacityNamesTheExpertItsRankAndTheCounts() {
        record(DeviceStatusRecord.MOE_OVER_CAPACITY, 9305, 1, 2, 40, 32, 5);
        IrisDeviceException e = assertThrows(IrisDeviceException.class, () -> DeviceStatusRecord.check(status, 4, 1000, STRINGS, null));
        assertEquals("rank 1: MoE dispatch, check 9305: expert 5 (on rank 2) was routed 40 rows by all ranks, more than its "
                + "capacity of 32; the 8 rows past it were not delivered and add nothing in combine (overflow policy FAIL: "
                + "raise the capacity, or choose the DROP policy to count such rows instead)", e.getMessage());
        assertEquals(16, e.code());
        assertEquals(2, e.peer());
        DeviceStatusRecord.check(status, 4, 1000, STRINGS, null);  // cleared: raised once
    }

    @Test
    void anMoeBadExpertIdNamesTheRouteAndTheId() {
        record(DeviceStatusRecord.MOE_BAD_EXPERT, 9306, 0, -1, -3L, 64, 13);
        IrisDeviceException e = assertThrows(IrisDeviceException.class, () -> DeviceStatusRecord.check(status, 2, 1000, STRINGS, null));
        assertTrue(e.getMessage().startsWith("rank 0: MoE dispatch, check 9306: route 13 (token * topK + k) names expert -3, "
                + "outside [0, 64)"), e.getMessage());
        assertEquals(17, e.code());
        assertEquals(-1, e.peer());
    }

    @Test
    void badAddressesSayWhatWasWrong() {
        long heap = 1 << 20;
        assertTrue(DeviceStatusRecord.badAddress(0, 2, 9, 2, 64, heap, 4, "k", "a/b.cu")
                .contains("k (b.cu:9) translated an address for target rank 2: target rank 2 is out of range [0, 2)"));
        assertTrue(DeviceStatusRecord.badAddress(0, 2, 9, -1, 64, heap, 4, "k", null)
                .contains("k translated an address for target rank -1: target rank -1 is out of range [0, 2)"));
        assertTrue(DeviceStatusRecord.badAddress(1, 2, 9, 0, heap - 16, heap, 64, "k", "b.cu")
                .contains("an access of 64 bytes at offset " + (heap - 16) + " runs past the end of the heap of " + heap + " bytes"));
        assertTrue(DeviceStatusRecord.badAddress(1, 2, 9, 0, -4096, heap, 4, "k", "b.cu")
                .contains("offset -4096 (before the heap's start) lies outside the heap"));
    }

    @Test
    void unreadableNamesFallBackToAKernel() {
        record(5, 12, 0, 0, 1L << 40, 1L << 20, 4);
        status.putLong(DeviceStatusRecord.FUNCTION, 0xdeadL);
        IrisDeviceException e = assertThrows(IrisDeviceException.class,
                () -> DeviceStatusRecord.check(status, 2, 1000, (a, m) -> null, null));
        assertTrue(e.getMessage().startsWith("rank 0: checked mode: a kernel translated an address"), e.getMessage());
    }

    @Test
    void onSeveralNodesTheNodeRanksTheDeviceRecordsAreNamedAsWorldRanks() {
        Team node = new Team("node 1", new int[] {2, 3}, 1);
        record(1, 7, 1, 0, 3, 4, 2_500_000_000L);
        IrisDeviceException e = assertThrows(IrisDeviceException.class, () -> DeviceStatusRecord.check(status, node, 2000, STRINGS, null));
        assertEquals("rank 3: a device wait (wait_until) timed out in wait site 7 after 2500 ms (deadline 2000 ms), waiting for"
                + " rank 2: flag was 3, expected 4; rank 2 may have failed or stopped calling the same operations", e.getMessage());
        assertEquals(2, e.peer());
        // A bad address keeps the rank the kernel asked for: here one outside the node.
        record(5, 31, 1, 2, 4096, 1L << 30, 8);
        e = assertThrows(IrisDeviceException.class, () -> DeviceStatusRecord.check(status, node, 2000, STRINGS, null));
        assertTrue(e.getMessage().startsWith("rank 3: checked mode: a kernel translated an address for target rank 2: target"
                + " rank 2 is out of range [0, 2)"), e.getMessage());
        assertEquals(2, e.peer());
    }

    private void record(int code, int site, int rank, int peer, long observed, long expected, long elapsed) {
        status.putInt(DeviceStatusRecord.CODE, code).putInt(DeviceStatusRecord.SITE, site)
                .putInt(DeviceStatusRecord.RANK, rank).putInt(DeviceStatusRecord.PEER, peer)
                .putLong(DeviceStatusRecord.OBSERVED, observed).putLong(DeviceStatusRecord.EXPECTED, expected)
                .putLong(DeviceStatusRecord.ELAPSED, elapsed);
    }
}
