package dev.irisjvm.core.testing;

import dev.irisjvm.core.Iris;
import dev.irisjvm.core.IrisDeviceException;

/**
 * What {@link Iris#synchronize()} raised when a device-side wait was meant to time out, and how
 * long it took from {@code startNanos}; {@code error} is null when it returned normally.
 */
public record ExpectedDeviceError(IrisDeviceException error, double seconds) {
    public static ExpectedDeviceError synchronize(Iris iris, long startNanos) {
        IrisDeviceException caught = null;
        try {
            iris.synchronize();
        } catch (IrisDeviceException e) {
            caught = e;
        }
        return new ExpectedDeviceError(caught, (System.nanoTime() - startNanos) / 1e9);
    }
}
