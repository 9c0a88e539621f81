package dev.irisjvm.core;

import dev.irisjvm.core.gpu.Platform;

/**
 * Something that the loaded GPU platform cannot do, e.g. an NVIDIA-only kernel on AMD:
 * {@code rank 0: not available on this platform (HIP): gemm_wgmma needs sm_90a (wgmma/TMA)}.
 * Raised before anything is loaded or launched.
 */
public class IrisPlatformException extends IrisException {
    private final Platform platform;
    private final String what;
    private final String requirement;

    public IrisPlatformException(String message, Platform platform, String what, String requirement) {
        super(message);
        this.platform = platform;
        this.what = what;
        this.requirement = requirement;
    }

    /** The platform that was loaded (and lacks what was asked for). */
    public Platform platform() {
        return platform;
    }

    /** The kernel module or operation that is not available, e.g. {@code gemm_wgmma}. */
    public String what() {
        return what;
    }

    /** What it needs, e.g. {@code sm_90a (wgmma/TMA)}. */
    public String requirement() {
        return requirement;
    }
}
