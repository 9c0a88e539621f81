package dev.irisjvm.kernels.baselines;

import dev.irisjvm.core.Iris;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;
import org.bytedeco.cuda.global.nccl;
import org.bytedeco.cuda.nccl.ncclWindow_vidmem;
import org.bytedeco.javacpp.Pointer;

/**
 * Device buffers from {@code ncclMemAlloc}, each registered with the communicator of an {@link
 * NcclComm} as a symmetric window ({@code ncclCommWindowRegister(..., NCCL_WIN_COLL_SYMMETRIC)}),
 * so that NCCL (2.27 and later) may run its symmetric-memory kernels on them: NCCL's strongest
 * collectives, the second NCCL baseline beside its collectives on plain device buffers. Every
 * rank registers the same sizes in the same order, so a collective given the windows' addresses
 * finds them at the same offset on every rank.
 *
 * <p>Opening is collective and never throws for NCCL's sake: where NCCL is unavailable, older than
 * 2.27, cannot allocate or refuses a registration on some rank, every rank gets an instance that
 * holds no buffer and says why ({@link #refusal()}, {@link #reason()}), decided together after
 * every step so that no rank registers a window its peers gave up on. Closing deregisters every
 * window ({@code ncclCommWindowDeregister}, in the same order on every rank) and frees its memory
 * ({@code ncclMemFree}); it must come before the {@link NcclComm} is closed.
 *
 * <pre>{@code
 * try (NcclWindows w = NcclWindows.open(iris, nccl, inBytes, outBytes)) {
 *     if (w.available()) {
 *         nccl.allReduce(w.address(0), w.address(1), count, DType.BF16, ReduceOp.SUM, stream);
 *     } else {
 *         System.out.println("window-registered NCCL not available: " + w.reason());
 *     }
 * }
 * }</pre>
 */
public final class NcclWindows implements AutoCloseable {
    /** The first NCCL with symmetric kernels on registered windows: 2.27.0. */
    public static final int MIN_VERSION = 22700;

    /** Why there are no windows; the step of {@link #open} that gave up. */
    public enum Refusal {
        /** The communicator itself is unavailable. */
        NCCL_UNAVAILABLE,
        /** The NCCL loaded is older than {@link #MIN_VERSION}. */
        VERSION,
        /** {@code ncclMemAlloc} failed on some rank. */
        ALLOCATION,
        /** {@code ncclCommWindowRegister} failed on some rank. */
        REGISTRATION
    }

    private final NcclComm owner;
    private final long[] addresses;
    private final long[] sizes;
    private final ncclWindow_vidmem[] windows;
    private final Refusal refusal;
    private final String reason;
    private final AtomicBoolean closed = new AtomicBoolean();

    private NcclWindows(NcclComm owner, long[] addresses, long[] sizes, ncclWindow_vidmem[] windows, Refusal refusal, String reason) {
        this.owner = owner;
        this.addresses = addresses;
        this.sizes = sizes;
        this.windows = windows;
        this.refusal = refusal;
        this.reason = reason;
    }

    /**
     * Collective: one window of each size, in order (every rank passes the same sizes).
     *
     * @throws IllegalArgumentException where a size is not positive
     */
    public static NcclWindows open(Iris iris, NcclComm owner, long... sizes) {
        for (int i = 0; i < sizes.length; i++) {
            if (sizes[i] <= 0) {
                throw new IllegalArgumentException("rank " + iris.rank() + ": NcclWindows.open: size " + i + " must be > 0 bytes, got "
                        + sizes[i]);
            }
        }
        if (!owner.available()) {
            return refused(owner, sizes.length, Refusal.NCCL_UNAVAILABLE, "NCCL unavailable: " + owner.reason());
        }
        String why = NcclComm.firstReason(iris, versionProblem());
        if (why != null) {
            return refused(owner, sizes.length, Refusal.VERSION, why);
        }
        long[] addresses = new long[sizes.length];
        String mine = null;
        for (int i = 0; i < sizes.length && mine == null; i++) {
            Pointer p = new Pointer();
            int status = nccl.ncclMemAlloc(p, sizes[i]);
            if (status == nccl.ncclSuccess && !p.isNull()) {
                addresses[i] = p.address();
            } else {
                mine = "ncclMemAlloc(" + sizes[i] + " bytes) failed: " + NcclComm.errorString(status);
            }
        }
        why = NcclComm.firstReason(iris, mine);
        ncclWindow_vidmem[] windows = new ncclWindow_vidmem[sizes.length];
        NcclWindows w = new NcclWindows(owner, addresses, sizes.clone(), windows, null, null);
        if (why != null) {
            w.release();
            return refused(owner, sizes.length, Refusal.ALLOCATION, why);
        }
        for (int i = 0; i < sizes.length; i++) {
            ncclWindow_vidmem win = new ncclWindow_vidmem();
            int status = nccl.ncclCommWindowRegister(owner.comm(), new DevicePointer(addresses[i]), sizes[i], win,
                    nccl.NCCL_WIN_COLL_SYMMETRIC);
            mine = null;
            if (status != nccl.ncclSuccess) {
                mine = "ncclCommWindowRegister(" + sizes[i] + " bytes, NCCL_WIN_COLL_SYMMETRIC) failed: " + NcclComm.errorString(status);
            } else if (win.isNull()) {
                mine = "ncclCommWindowRegister(" + sizes[i] + " bytes, NCCL_WIN_COLL_SYMMETRIC) returned no window";
            } else {
                windows[i] = win;
            }
            // Agreed after every window: registration is collective, and no rank may go on to the
            // next one while a peer has given up on this one.
            why = NcclComm.firstReason(iris, mine);
            if (why != null) {
                w.release();
                return refused(owner, sizes.length, Refusal.REGISTRATION, why);
            }
        }
        return w;
    }

    private static NcclWindows refused(NcclComm owner, int count, Refusal refusal, String reason) {
        NcclWindows w = new NcclWindows(owner, new long[count], new long[count], new ncclWindow_vidmem[count], refusal, reason);
        w.closed.set(true);
        return w;
    }

    /** Null when the NCCL loaded here has symmetric kernels, else why not. */
    private static String versionProblem() {
        int[] v = new int[1];
        int status = nccl.ncclGetVersion(v);
        if (status != nccl.ncclSuccess) {
            return "ncclGetVersion failed: " + NcclComm.errorString(status);
        }
        return v[0] >= MIN_VERSION ? null : NcclComm.formatVersion(v[0]) + " has no symmetric kernels (they need NCCL 2.27 or later)";
    }

    /** Whether every rank holds its windows; otherwise {@link #refusal()} and {@link #reason()} say why not. */
    public boolean available() {
        return refusal == null;
    }

    /** Null where {@link #available()}. */
    public Refusal refusal() {
        return refusal;
    }

    /** Why there are no windows ("rank r: ..."), or null where {@link #available()}. */
    public String reason() {
        return reason;
    }

    /** The device address of window {@code i}. */
    public long address(int i) {
        if (!available()) {
            throw new IllegalStateException("window-registered NCCL not available: " + reason);
        }
        if (closed.get()) {
            throw new IllegalStateException("NcclWindows: address(" + i + ") after close()");
        }
        return addresses[i];
    }

    /** The size window {@code i} was registered with. */
    public long bytes(int i) {
        return sizes[i];
    }

    /** Collective: deregisters every window and frees its memory. Safe to call twice. */
    @Override
    public void close() {
        if (closed.compareAndSet(false, true)) {
            release();
        }
    }

    /**
     * Deregisters what was registered, frees what was allocated; tries all of it, then throws the
     * failures. After a refused registration the ranks that did register deregister alone: NCCL
     * needs a window deregistered before its memory goes, and a peer that refused holds none.
     */
    private void release() {
        List<String> failures = new ArrayList<>();
        for (int i = 0; i < windows.length; i++) {
            if (windows[i] != null) {
                int status = nccl.ncclCommWindowDeregister(owner.comm(), windows[i]);
                if (status != nccl.ncclSuccess) {
                    failures.add("ncclCommWindowDeregister(window " + i + ") failed: " + NcclComm.errorString(status));
                }
                windows[i] = null;
            }
        }
        for (int i = 0; i < addresses.length; i++) {
            if (addresses[i] != 0) {
                int status = nccl.ncclMemFree(new DevicePointer(addresses[i]));
                if (status != nccl.ncclSuccess) {
                    failures.add("ncclMemFree(window " + i + ") failed: " + NcclComm.errorString(status));
                }
                addresses[i] = 0;
            }
        }
        if (!failures.isEmpty()) {
            throw new IllegalStateException(String.join("; ", failures));
        }
    }
}
