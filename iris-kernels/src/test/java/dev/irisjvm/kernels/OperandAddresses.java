package dev.irisjvm.kernels;

/**
 * Far apart, 16-byte aligned device addresses that the tests without a GPU give a kernel's
 * operands: the checks and the argument structs only compare and store them, nothing reads them.
 * Each family's operands are distinct; the families share addresses.
 */
public final class OperandAddresses {
    private OperandAddresses() {}

    // the GEMM's
    public static final long A = 0x7f10_0000_0000L;
    public static final long B = 0x7f20_0000_0000L;
    public static final long C = 0x7f30_0000_0000L;
    public static final long BIAS = 0x7f40_0000_0000L;

    // attention's
    public static final long Q = 0x7f10_0000_0000L;
    public static final long K = 0x7f20_0000_0000L;
    public static final long V = 0x7f30_0000_0000L;
    public static final long O = 0x7f40_0000_0000L;
    public static final long LSE = 0x7f50_0000_0000L;
    public static final long ACC = 0x7f60_0000_0000L;
    public static final long MAX = 0x7f70_0000_0000L;
    public static final long SUM = 0x7f80_0000_0000L;
    public static final long K2 = 0x7f90_0000_0000L;
    public static final long V2 = 0x7fa0_0000_0000L;
    public static final long READY = 0x7fb0_0000_0000L;
}
