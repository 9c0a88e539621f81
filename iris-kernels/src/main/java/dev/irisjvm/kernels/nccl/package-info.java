/**
 * NCCL underneath the world collectives: the world and rail communicators of a job
 * ({@link dev.irisjvm.kernels.nccl.NcclTeams}), created on first use and closed with
 * {@link dev.irisjvm.core.Iris}, every call checked and every wait bounded. Private plumbing of
 * iris-kernels (not exported); the public face is {@link dev.irisjvm.kernels.ccl.WorldCollectives}.
 */
package dev.irisjvm.kernels.nccl;
