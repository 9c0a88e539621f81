package dev.irisjvm.kernels.nccl;

import dev.irisjvm.core.DType;
import dev.irisjvm.kernels.ccl.ReduceOp;
import org.bytedeco.cuda.global.nccl;

/** This library's element types and reductions as NCCL's (an unexported package: the tests' NCCL reference uses it too). */
public final class NcclTypes {
    private NcclTypes() {}

    public static int type(DType t) {
        return switch (t) {
            case BF16 -> nccl.ncclBfloat16;
            case F16 -> nccl.ncclFloat16;
            case F32 -> nccl.ncclFloat32;
            case F64 -> nccl.ncclFloat64;
            case I32 -> nccl.ncclInt32;
            case I64 -> nccl.ncclInt64;
            case U8 -> nccl.ncclUint8;
        };
    }

    public static int op(ReduceOp op) {
        return switch (op) {
            case SUM -> nccl.ncclSum;
            case MAX -> nccl.ncclMax;
            case MIN -> nccl.ncclMin;
            case AVG -> nccl.ncclAvg;
        };
    }
}
