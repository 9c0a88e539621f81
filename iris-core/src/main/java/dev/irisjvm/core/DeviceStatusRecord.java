package dev.irisjvm.core;

import dev.irisjvm.core.internal.AbiLayout;
import dev.irisjvm.runtime.abi.global.KernelAbi;
import dev.irisjvm.runtime.abi.iris_device_status;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.function.IntUnaryOperator;

/**
 * Reads the rank's {@code iris_device_status} (iris/abi/ctx.h) from mapped host memory and turns a
 * recorded failure into an exception that names the rank, the wait and the peer, or for a bad
 * address in checked mode the kernel, the source line, the target rank and the offset. It also
 * writes the record's abort word, which every bounded device wait polls: set once a peer rank is
 * lost, so that spinning kernels stop within about a millisecond.
 */
final class DeviceStatusRecord {
    /** sizeof(iris_device_status), and its fields' offsets (iris/abi/ctx.h). */
    static final int BYTES = AbiLayout.size(iris_device_status.class);

    static final int CODE = field("code");
    static final int SITE = field("site");
    static final int RANK = field("rank");
    static final int PEER = field("peer");
    static final int OBSERVED = field("observed");
    static final int EXPECTED = field("expected");
    static final int ELAPSED = field("elapsed_ns");
    static final int ABORT = field("abort");
    static final int LOST_RANK = field("lost_rank");
    static final int FILE = field("file");
    static final int FUNCTION = field("function");

    /** iris_error_code values. */
    static final int WAIT_TIMEOUT = KernelAbi.IRIS_ERROR_CODE_WAIT_TIMEOUT;
    static final int BARRIER_TIMEOUT = KernelAbi.IRIS_ERROR_CODE_BARRIER_TIMEOUT;
    static final int ABORTED = KernelAbi.IRIS_ERROR_CODE_ABORTED;
    static final int BAD_ADDRESS = KernelAbi.IRIS_ERROR_CODE_BAD_ADDRESS;
    static final int BAD_LAUNCH = KernelAbi.IRIS_ERROR_CODE_BAD_LAUNCH;
    /** Kernel families' codes (iris/abi/moe.h): the MoE dispatch's checks. */
    static final int MOE_OVER_CAPACITY = KernelAbi.IRIS_MOE_ERROR_CODE_OVER_CAPACITY;
    static final int MOE_BAD_EXPERT = KernelAbi.IRIS_MOE_ERROR_CODE_BAD_EXPERT;

    private static final VarHandle INTS = MethodHandles.byteBufferViewVarHandle(int[].class, ByteOrder.nativeOrder());
    /** Longest file or function name read back from device memory. */
    private static final int MAX_NAME_CHARS = 256;

    /** Reads a NUL-terminated string the device recorded (checked mode's file and function names). */
    @FunctionalInterface
    interface DeviceStrings {
        /** The string at that device address, at most {@code maxChars} long, or null if it cannot be read. */
        String read(long address, int maxChars);
    }

    private DeviceStatusRecord() {}

    private static int field(String member) {
        return AbiLayout.offset(iris_device_status.class, member);
    }

    /**
     * Throws if the record holds an error, after clearing it so the next operation starts clean.
     * The abort word stays set.
     *
     * @param lossReason how the watchdog noticed the lost rank, for an aborted wait (null if unknown)
     */
    static void check(ByteBuffer status, int world, long deviceTimeoutMillis, DeviceStrings strings, String lossReason) {
        check(status, world, IntUnaryOperator.identity(), deviceTimeoutMillis, strings, lossReason);
    }

    /**
     * {@link #check(ByteBuffer, int, long, DeviceStrings, String)} for a job of several nodes: the
     * device records node ranks (its context's), which the messages name as world ranks.
     */
    static void check(ByteBuffer status, Team node, long deviceTimeoutMillis, DeviceStrings strings, String lossReason) {
        check(status, node.size(), i -> i >= 0 && i < node.size() ? node.worldRank(i) : i, deviceTimeoutMillis, strings,
                lossReason);
    }

    private static void check(ByteBuffer status, int world, IntUnaryOperator worldRankOf, long deviceTimeoutMillis,
                              DeviceStrings strings, String lossReason) {
        int code = status.getInt(CODE);
        if (code == 0) {
            return;
        }
        int site = status.getInt(SITE);
        int rank = worldRankOf.applyAsInt(status.getInt(RANK));
        int recordedPeer = status.getInt(PEER);
        // A bad address's peer is the rank the kernel asked for, outside the node when that was the fault.
        int peer = code == BAD_ADDRESS ? recordedPeer : worldRankOf.applyAsInt(recordedPeer);
        long observed = status.getLong(OBSERVED);
        long expected = status.getLong(EXPECTED);
        long elapsed = status.getLong(ELAPSED);
        int lostRank = status.getInt(LOST_RANK);
        long file = status.getLong(FILE);
        long function = status.getLong(FUNCTION);
        clear(status);
        String where = switch (site) {
            case CoreKernels.SITE_BARRIER -> "Iris.barrier()";
            case 0 -> "a kernel's wait";
            default -> "wait site " + site;
        };
        switch (code) {
            case ABORTED -> throw new IrisRankLostException("rank " + rank + ": " + where + " stopped after "
                    + elapsed / 1_000_000 + " ms" + (peer >= 0 ? " waiting for rank " + peer : "") + " because rank "
                    + lostRank + " was lost" + (lossReason == null ? "" : ": " + lossReason)
                    + "; the job cannot go on without it", rank, lostRank);
            case BAD_ADDRESS -> throw new IrisDeviceException(badAddress(rank, world, site, peer, observed, expected, elapsed,
                    name(strings, function, "a kernel"), name(strings, file, null)), code, peer);
            case BAD_LAUNCH -> throw new IrisDeviceException(badLaunch(rank, site, observed, expected), code, peer);
            case MOE_OVER_CAPACITY -> throw new IrisDeviceException(moeOverCapacity(rank, site, peer, observed, expected, elapsed),
                    code, peer);
            case MOE_BAD_EXPERT -> throw new IrisDeviceException(moeBadExpert(rank, site, observed, expected, elapsed), code, peer);
            default -> {
                String what = switch (code) {
                    case WAIT_TIMEOUT -> "a device wait (wait_until) timed out";
                    case BARRIER_TIMEOUT -> "a device barrier timed out";
                    default -> "device error code " + code;
                };
                String peerText = peer >= 0 ? "waiting for rank " + peer : "waiting for a flag";
                throw new IrisDeviceException("rank " + rank + ": " + what + " in " + where + " after "
                        + elapsed / 1_000_000 + " ms (deadline " + deviceTimeoutMillis + " ms), " + peerText
                        + ": flag was " + observed + ", expected " + expected
                        + (peer >= 0 ? "; rank " + peer + " may have failed or stopped calling the same operations" : ""),
                        code, peer);
            }
        }
    }

    /** "rank 0: checked mode: my_kernel (my_kernels.cu:42) translated an address for target rank 1: ...". */
    static String badAddress(int rank, int world, int line, int targetRank, long offset, long heapSize, long bytes,
                             String function, String file) {
        String at = function + (file == null ? "" : " (" + baseName(file) + (line > 0 ? ":" + line : "") + ")");
        String problem;
        if (targetRank < 0 || targetRank >= world) {
            problem = "target rank " + targetRank + " is out of range [0, " + world + ")";
        } else if (offset < 0 || offset > heapSize) {
            problem = "offset " + offsetText(offset) + " lies outside the heap of " + heapSize + " bytes";
        } else if (bytes > heapSize - offset) {
            problem = "an access of " + bytes + " bytes at offset " + offset + " runs past the end of the heap of "
                    + heapSize + " bytes";
        } else {
            problem = "an access of " + bytes + " bytes at offset " + offset + " of the heap of " + heapSize + " bytes";
        }
        return "rank " + rank + ": checked mode: " + at + " translated an address for target rank " + targetRank
                + ": " + problem + "; the thread that made the call stopped and the kernel's waits gave up";
    }

    /**
     * "rank 0: a kernel refused its launch at launch check 9006: ...": the kernel returned without
     * computing anything, and peers waiting on this rank's part of the call time out.
     */
    static String badLaunch(int rank, int check, long given, long needed) {
        return "rank " + rank + ": a kernel refused its launch at launch check " + check + ": the launch gave " + given
                + " where the kernel needs " + needed + "; it returned without computing, so its outputs are not written"
                + " (a launch that does not match the kernel: a bug in the code that launched it)";
    }

    /**
     * "rank 1: MoE dispatch, check 9305: expert 5 (on rank 2) was routed 40 rows by all ranks, more than its
     * capacity of 32; ...": the record's elapsed word holds the expert (iris/abi/moe.h).
     */
    static String moeOverCapacity(int rank, int check, int expertRank, long routed, long capacity, long expert) {
        return "rank " + rank + ": MoE dispatch, check " + check + ": expert " + expert + " (on rank " + expertRank
                + ") was routed " + routed + " rows by all ranks, more than its capacity of " + capacity + "; the "
                + (routed - capacity) + " rows past it were not delivered and add nothing in combine (overflow policy"
                + " FAIL: raise the capacity, or choose the DROP policy to count such rows instead)";
    }

    /**
     * "rank 0: MoE dispatch, check 9306: route 13 names expert -3, outside [0, 64); ...": observed is the id
     * (sign-extended), elapsed the route (token * topK + k), the first bad one of this rank.
     */
    static String moeBadExpert(int rank, int check, long id, long experts, long route) {
        return "rank " + rank + ": MoE dispatch, check " + check + ": route " + route + " (token * topK + k) names expert "
                + id + ", outside [0, " + experts + "); it was not delivered and adds nothing in combine (the first such"
                + " route of this rank; the dispatch's stats count them all)";
    }

    /** Sets the abort word: every bounded device wait of this rank gives up from now on. */
    static void abort(ByteBuffer status, int lostRank) {
        INTS.setVolatile(status, LOST_RANK, lostRank);
        INTS.setVolatile(status, ABORT, 1);
    }

    static boolean aborted(ByteBuffer status) {
        return (int) INTS.getVolatile(status, ABORT) != 0;
    }

    /** Clears everything but the abort word. */
    private static void clear(ByteBuffer status) {
        for (int i = 0; i < ABORT; i += 4) {
            status.putInt(i, 0);
        }
        status.putLong(FILE, 0L);
        status.putLong(FUNCTION, 0L);
    }

    private static String name(DeviceStrings strings, long address, String fallback) {
        if (address == 0) {
            return fallback;
        }
        String s = strings.read(address, MAX_NAME_CHARS);
        return s == null || s.isEmpty() ? fallback : s;
    }

    private static String baseName(String path) {
        int slash = path.lastIndexOf('/');
        return slash >= 0 ? path.substring(slash + 1) : path;
    }

    /** Offsets below the heap's start come back as huge unsigned numbers: show them as negative. */
    private static String offsetText(long offset) {
        return offset < 0 ? offset + " (before the heap's start)" : Long.toString(offset);
    }
}
