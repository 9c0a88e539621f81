package dev.irisjvm.bench.nodes;

import static dev.irisjvm.bench.OptionChecks.require;

import dev.irisjvm.bench.OptionChecks;
import dev.irisjvm.bench.ResultFileOption;
import dev.irisjvm.bench.RoundsOptions;
import dev.irisjvm.bench.ccl.CclOp;
import dev.irisjvm.bench.rma.SizeList;
import dev.irisjvm.core.DType;
import java.util.List;
import java.util.Locale;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * The command-line options of {@link NodesSweep}: the operations, sizes and type, the output, and
 * {@link RoundsOptions}.
 *
 * <pre>{@code
 * NodesOptions o = new NodesOptions();
 * new CommandLine(o).parseArgs("--sizes", "1m,16m", "--ops", "all_reduce");
 * o.validate();
 * o.sizes();   // [1048576, 16777216]
 * }</pre>
 */
public final class NodesOptions {
    /** The world collectives that have both a two-level and a flat NCCL form. */
    static final List<CclOp> OPS = List.of(CclOp.ALL_REDUCE, CclOp.ALL_GATHER, CclOp.REDUCE_SCATTER, CclOp.ALL_TO_ALL);

    @Mixin
    ResultFileOption out = new ResultFileOption("nodes-sweep.json");

    @Option(names = "--ops", defaultValue = "all_reduce,all_gather,reduce_scatter,all_to_all",
            description = "Comma-separated world collectives (default: ${DEFAULT-VALUE}).")
    String ops;

    @Option(names = "--sizes", defaultValue = "1m,16m,64m,256m",
            description = "Comma-separated sizes as nccl-tests names them (all-gather: the output per rank, reduce-scatter: the "
                    + "input per rank), with binary suffixes (default: ${DEFAULT-VALUE}).")
    String sizes;

    @Option(names = "--dtype", defaultValue = "bf16", description = "bf16, f16 or f32 (default: ${DEFAULT-VALUE}).")
    String dtype;

    /** The largest default point's three buffers and the world collectives' workspace fit in 8 GiB. */
    @Mixin
    RoundsOptions rounds = new RoundsOptions(8, 24);

    /** Throws IllegalArgumentException naming the bad option. */
    public void validate() {
        rounds.validate();
        ops();
        sizes();
        dtype();
    }

    List<CclOp> ops() {
        List<CclOp> list = OptionChecks.nonEmpty("--ops", CclOp.parseList(ops));
        for (CclOp op : list) {
            require(OPS.contains(op), "--ops: " + op.id() + " has no two-level form to compare; known: all_reduce, all_gather, "
                    + "reduce_scatter, all_to_all");
        }
        return list;
    }

    List<Long> sizes() {
        List<Long> list = OptionChecks.nonEmpty("--sizes", OptionChecks.items(sizes).stream().map(SizeList::parse).toList());
        for (long s : list) {
            require(s >= 8, "--sizes: " + SizeList.format(s) + " is below 8 bytes");
        }
        return list;
    }

    DType dtype() {
        return switch (dtype.trim().toLowerCase(Locale.ROOT)) {
            case "bf16" -> DType.BF16;
            case "f16" -> DType.F16;
            case "f32" -> DType.F32;
            default -> throw new IllegalArgumentException("--dtype '" + dtype + "': expected bf16, f16 or f32");
        };
    }

    RoundsOptions rounds() {
        return rounds;
    }
}
