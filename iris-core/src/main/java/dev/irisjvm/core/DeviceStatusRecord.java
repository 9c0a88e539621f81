package dev.irisjvm.core;

import java.nio.ByteBuffer;

/**
 * Reads the rank's {@code iris::DeviceStatus} (ctx.cuh) from mapped host memory and turns a
 * recorded failure into an exception that names the rank, the wait and the peer.
 */
final class DeviceStatusRecord {
    /** sizeof(iris::DeviceStatus). */
    static final int BYTES = 40;

    private DeviceStatusRecord() {}

    /** Throws if the record holds an error, after clearing it so the next operation starts clean. */
    static void check(ByteBuffer status, long deviceTimeoutMillis) {
        int code = status.getInt(0);
        if (code == 0) {
            return;
        }
        int site = status.getInt(4);
        int rank = status.getInt(8);
        int peer = status.getInt(12);
        long observed = status.getLong(16);
        long expected = status.getLong(24);
        long elapsedNanos = status.getLong(32);
        for (int i = 0; i < BYTES; i += 4) {
            status.putInt(i, 0);
        }
        String what = switch (code) {
            case 1 -> "a device wait (wait_until) timed out";
            case 2 -> "a device barrier timed out";
            default -> "device error code " + code;
        };
        String where = switch (site) {
            case CoreKernels.SITE_BARRIER -> "Iris.barrier()";
            case 0 -> "a kernel's wait";
            default -> "wait site " + site;
        };
        String peerText = peer >= 0 ? "waiting for rank " + peer : "waiting for a flag";
        throw new IrisDeviceException("rank " + rank + ": " + what + " in " + where + " after "
                + elapsedNanos / 1_000_000 + " ms (deadline " + deviceTimeoutMillis + " ms), " + peerText
                + ": flag was " + observed + ", expected " + expected
                + (peer >= 0 ? "; rank " + peer + " may have failed or stopped calling the same operations" : ""), code, peer);
    }
}
