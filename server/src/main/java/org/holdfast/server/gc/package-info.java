/**
 * The server side of garbage collection: drives the gc-engine from snapshot commits
 * ({@link org.holdfast.server.gc.GcCommitHook}), protects blocks of sessions in progress
 * ({@link org.holdfast.server.gc.GcReferenceGuard}), runs retention and sweeps
 * ({@link org.holdfast.server.gc.GcService}), frees blocks ({@link org.holdfast.server.gc.StoreReclaimer})
 * and checks everything ({@link org.holdfast.server.gc.CatalogFsck}; a stopped worker's range store and GC metadata against
 * its master's exported counts: {@link org.holdfast.server.gc.WorkerFsck}); on request, frees what no retained snapshot
 * references ({@link org.holdfast.server.gc.ReclaimNow}, {@link org.holdfast.server.gc.ExactMark}). Retention
 * policies can be named resources that volumes follow ({@link org.holdfast.server.gc.NamedPolicies}). Free of
 * Spring; wired in {@code app}.
 */
package org.holdfast.server.gc;
