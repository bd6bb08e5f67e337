/**
 * Hybrid reference-count/expiry bookkeeping (thesis 5.5 with design.md's two corrections): turns
 * each GC operation (a committed snapshot's delta, a hold, a release, a retention extension) into
 * GMA updates logged through BOSC as one atomic, idempotent group. In master/worker mode the
 * {@link org.holdfast.gc.bookkeeping.UpdateRouter} splits an operation's updates by PBN range, so
 * that each node logs the share of the PBNs it owns (distributed GC, thesis 7.2.4).
 */
package org.holdfast.gc.bookkeeping;
