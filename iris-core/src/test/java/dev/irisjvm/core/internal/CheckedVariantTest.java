package dev.irisjvm.core.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.irisjvm.core.gpu.Platform;
import org.junit.jupiter.api.Test;

/**
 * Which module checked mode loads, without a GPU: the resources in
 * src/test/resources/dev/irisjvm/core/internal/checked-test stand for a module with its checked variant
 * (both platforms), one whose variant the build skipped (with the marker saying why) and one
 * without either.
 */
class CheckedVariantTest {
    @Test
    void theCheckedVariantWhereItExistsOnEachPlatform() {
        assertEquals("checked-test/with_checked.checked.fatbin",
                KernelModule.checkedVariant(getClass(), "checked-test/with_checked.fatbin", Platform.CUDA));
        assertEquals("checked-test/with_checked.checked.hsaco",
                KernelModule.checkedVariant(getClass(), "checked-test/with_checked.fatbin", Platform.HIP));
    }

    @Test
    void aSkippedVariantFallsBackToThePlainModule() {
        assertEquals("checked-test/skipped.fatbin",
                KernelModule.checkedVariant(getClass(), "checked-test/skipped.fatbin", Platform.CUDA));
    }

    @Test
    void aMissingVariantIsAskedForSoThatLoadingSaysItIsMissing() {
        assertEquals("checked-test/plain_only.checked.fatbin",
                KernelModule.checkedVariant(getClass(), "checked-test/plain_only.fatbin", Platform.CUDA));
        assertEquals("/abs/x.checked.hsaco", KernelModule.checkedVariant(getClass(), "/abs/x", Platform.HIP));
    }
}
