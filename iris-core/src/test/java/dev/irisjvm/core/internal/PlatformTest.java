package dev.irisjvm.core.internal;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.irisjvm.core.IrisException;
import dev.irisjvm.core.IrisPlatformException;
import dev.irisjvm.core.gpu.Gpu;
import dev.irisjvm.core.gpu.Platform;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * The platform choice and the "not available on this platform" paths, none of which needs a GPU:
 * module resources come from src/test/resources/dev/irisjvm/core/internal/platform-test (a portable
 * module with both forms, an NVIDIA-only one with its .unavailable-hip marker, a CUDA-only one).
 */
class PlatformTest {
    private static final String LINUX = "linux-x86_64";

    @Test
    void versionsReadAsEachPlatformEncodesThem() {
        assertEquals("13.0", Platform.CUDA.formatVersion(13000));
        assertEquals("12.8", Platform.CUDA.formatVersion(12080));
        assertEquals("5.2.21153", Platform.HIP.formatVersion(50221153));
        assertEquals("6.2.41133", Platform.HIP.formatVersion(60241133));
        assertEquals("4", Platform.HIP.formatVersion(4), "not in HIP_VERSION form: as reported");
    }

    @Test
    void namesClassifiersAndSuffixes() {
        assertEquals(Platform.CUDA, Platform.fromName("CUDA"));
        assertEquals(Platform.HIP, Platform.fromName("HIP"));
        assertEquals(Platform.HIP, Platform.fromName(" rocm "));
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> Platform.fromName("opencl"));
        assertTrue(e.getMessage().contains("expected cuda or hip"), e.getMessage());
        assertEquals("linux-x86_64", Platform.CUDA.nativeClassifier(LINUX));
        assertEquals("linux-x86_64-hip", Platform.HIP.nativeClassifier(LINUX));
        assertEquals(".unavailable-hip", Platform.HIP.unavailableSuffix());
        assertEquals("hip", Platform.HIP.apiPrefix());
    }

    @Test
    void codeObjectResourcesFollowThePlatform() {
        assertEquals("/k/iris_fill.hsaco", Platform.HIP.codeObjectResource("/k/iris_fill.fatbin"));
        assertEquals("/k/iris_fill.fatbin", Platform.CUDA.codeObjectResource("/k/iris_fill.fatbin"));
        assertEquals("/k/iris_fill.fatbin", Platform.CUDA.codeObjectResource("/k/iris_fill.hsaco"));
        assertEquals("/k/iris_fill.hsaco", Platform.HIP.codeObjectResource("/k/iris_fill"));
        assertEquals("mine.cubin", Platform.HIP.codeObjectResource("mine.cubin"), "other forms are kept");
        assertEquals("/a.b/mine.fatbin", Platform.CUDA.codeObjectResource("/a.b/mine"));
    }

    @Test
    void nvidiaOnlyCodeOnHipSaysWhatItNeeds() {
        IrisPlatformException e = Platform.HIP.unavailable("gemm_wgmma", "sm_90a (wgmma/TMA)");
        assertEquals("rank ?: not available on this platform (HIP): gemm_wgmma needs sm_90a (wgmma/TMA)", e.getMessage());
        assertEquals(Platform.HIP, e.platform());
        assertEquals("gemm_wgmma", e.what());
        assertEquals("sm_90a (wgmma/TMA)", e.requirement());

        NativeCalls.setRank(2);
        try {
            IrisPlatformException r = assertThrows(IrisPlatformException.class,
                    () -> Platform.requireOn(Platform.HIP, Platform.CUDA, "attention_tma", "sm_90a (wgmma/TMA)"));
            assertEquals("rank 2: not available on this platform (HIP): attention_tma needs sm_90a (wgmma/TMA)", r.getMessage());
        } finally {
            NativeCalls.setRank(-1);
        }
        Platform.requireOn(Platform.CUDA, Platform.CUDA, "attention_tma", "sm_90a (wgmma/TMA)");  // no exception
    }

    @Test
    void moduleMarkedNvidiaOnlyRaisesTheRecordedRequirementOnHip() {
        IrisPlatformException e = assertThrows(IrisPlatformException.class,
                () -> KernelModule.readImage(PlatformTest.class, "platform-test/wgmma_gemm.fatbin", Platform.HIP));
        assertEquals("rank ?: not available on this platform (HIP): wgmma_gemm needs sm_90a (wgmma/TMA)", e.getMessage());
        assertArrayEquals("fatbin bytes of wgmma_gemm".getBytes(StandardCharsets.UTF_8),
                KernelModule.readImage(PlatformTest.class, "platform-test/wgmma_gemm.fatbin", Platform.CUDA));
    }

    @Test
    void moduleBuiltForCudaOnlySaysSoOnHip() {
        IrisPlatformException e = assertThrows(IrisPlatformException.class,
                () -> KernelModule.readImage(PlatformTest.class, "platform-test/cuda_only.fatbin", Platform.HIP));
        assertTrue(e.getMessage().startsWith("rank ?: not available on this platform (HIP): cuda_only needs its HIP code "
                + "object cuda_only.hsaco"), e.getMessage());
        assertTrue(e.getMessage().contains("only cuda_only.fatbin, built for CUDA, is"), e.getMessage());
    }

    @Test
    void portableModuleLoadsTheFormOfEachPlatform() {
        assertArrayEquals("hsaco bytes of portable".getBytes(StandardCharsets.UTF_8),
                KernelModule.readImage(PlatformTest.class, "platform-test/portable.fatbin", Platform.HIP));
        assertArrayEquals("fatbin bytes of portable".getBytes(StandardCharsets.UTF_8),
                KernelModule.readImage(PlatformTest.class, "platform-test/portable", Platform.CUDA));
    }

    @Test
    void missingModuleIsNotAPlatformProblem() {
        IrisException e = assertThrows(IrisException.class,
                () -> KernelModule.readImage(PlatformTest.class, "platform-test/nothing.fatbin", Platform.HIP));
        assertFalse(e instanceof IrisPlatformException, e.getMessage());
        assertEquals("rank ?: kernel module resource 'platform-test/nothing.hsaco' (for 'platform-test/nothing.fatbin' on HIP)"
                + " not found next to dev.irisjvm.core.internal.PlatformTest (is the native build part of the class path?)", e.getMessage());
    }

    @Test
    void heapFlagsComeFromTheEnvironment() {
        assertEquals(0, Platform.heapFlags(Map.of()));
        assertEquals(1, Platform.heapFlags(Map.of("IRIS_HEAP_FINE_GRAINED", "1")));
        assertEquals(0, Platform.heapFlags(Map.of("IRIS_HEAP_FINE_GRAINED", "0")));
        if (NativeLibrary.isAvailable()) {  // the values are iris_runtime.h's
            assertEquals(dev.irisjvm.runtime.global.IrisRuntime.IRIS_HEAP_DEFAULT, Platform.heapFlags(Map.of()));
            assertEquals(dev.irisjvm.runtime.global.IrisRuntime.IRIS_HEAP_FINE_GRAINED,
                    Platform.heapFlags(Map.of("IRIS_HEAP_FINE_GRAINED", "true")));
        }
    }

    // ---- which native build a machine gets ------------------------------------------------------

    private static NativeLibrary.Selection select(String forced, boolean nvidia, boolean rocm, boolean cudaJar, boolean hipJar) {
        return NativeLibrary.select(forced == null ? null : "IRIS_PLATFORM=" + forced, forced, nvidia, rocm, cudaJar, hipJar, LINUX);
    }

    @Test
    void bothBuildsOnTheClassPathFollowTheDriver() {
        NativeLibrary.Selection nv = select(null, true, false, true, true);
        assertEquals(Platform.CUDA, nv.platform());
        assertEquals("NVIDIA driver found (/dev/nvidiactl); both builds on the class path", nv.reason());
        NativeLibrary.Selection amd = select(null, false, true, true, true);
        assertEquals(Platform.HIP, amd.platform());
        assertEquals("ROCm found (/dev/kfd), no NVIDIA driver; both builds on the class path", amd.reason());
        NativeLibrary.Selection none = select(null, false, false, true, true);
        assertEquals(Platform.CUDA, none.platform());
        assertTrue(none.reason().startsWith("no GPU driver found"), none.reason());
    }

    @Test
    void theOnlyBuildIsUsedAndAMismatchSaysWhichJarToAdd() {
        NativeLibrary.Selection s = select(null, false, true, true, false);
        assertEquals(Platform.CUDA, s.platform());
        assertEquals("the only build on the class path; ROCm found (/dev/kfd), no NVIDIA driver; this machine needs the HIP "
                + "build: put iris-native's linux-x86_64-hip jar on the class path", s.reason());
        NativeLibrary.Selection h = select(null, false, false, false, true);
        assertEquals(Platform.HIP, h.platform());
        assertFalse(h.reason().contains("needs the"), h.reason());
    }

    @Test
    void aForcedPlatformWinsAndAMissingJarIsNamed() {
        NativeLibrary.Selection s = select("hip", true, false, true, false);
        assertEquals(Platform.HIP, s.platform());
        assertEquals("IRIS_PLATFORM=hip; but iris-native's linux-x86_64-hip jar is not on the class path; "
                + "NVIDIA driver found (/dev/nvidiactl)", s.reason());
        assertEquals(Platform.CUDA, select("cuda", false, true, true, true).platform());
        assertThrows(IllegalArgumentException.class, () -> select("metal", false, false, true, true));
    }

    @Test
    void noBuildAtAll() {
        NativeLibrary.Selection s = select(null, false, false, false, false);
        assertEquals(Platform.CUDA, s.platform());
        assertTrue(s.reason().startsWith("no native build on the class path (iris-native's linux-x86_64 or linux-x86_64-hip jar)"),
                s.reason());
    }

    /** On the build machine this runs on: the loaded build and the description agree. */
    @Test
    void theLoadedBuildIsDescribed() {
        String d = NativeLibrary.description();
        System.out.println("native runtime: " + d);
        assertTrue(d.startsWith(NativeLibrary.selection().platform() + " build (iris-native "), d);
        if (NativeLibrary.isAvailable()) {
            assertEquals(NativeLibrary.selection().platform(), Gpu.platform(), d);
            assertInstanceOf(Platform.class, Platform.current());
        }
    }
}
