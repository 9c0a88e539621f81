package dev.irisjvm.bench.results;

/**
 * One timed point of a sweep: an operation, an implementation, a size and a pair of ranks.
 *
 * <p>{@code issuer} is the rank whose GPU runs the operation (whose SMs execute the kernel, or
 * whose stream carries the copy or the NCCL call); {@code peer} is the rank whose memory it
 * reaches, or -1 for collectives of all ranks. Times are over {@code reps} repetitions after
 * warm-up, measured with CUDA events: {@code medianUs} is the figure that counts.
 *
 * @param op          load, store, all_load, all_store, atomic_add, atomic_xchg, atomic_cas,
 *                    message_passing, ping_pong, copy_engine, local_copy, send_recv, all_reduce, ...
 * @param impl        iris, copy_engine, nccl, local
 * @param bytes       payload bytes per repetition (for atomics: 8 x operations)
 * @param gbps        bytes / median time, in GB/s (1e9 bytes per second); 0 for latency points
 * @param gops        operations per second in billions, for atomics; 0 otherwise
 * @param check       "ok" when the data was verified after the timed runs, else what was wrong
 */
public record Measurement(
        String op,
        String impl,
        long bytes,
        int issuer,
        int peer,
        int reps,
        double medianUs,
        double minUs,
        double maxUs,
        double gbps,
        double gops,
        String check) {}
