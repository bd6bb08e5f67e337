/**
 * Hybrid reference-count/expiry bookkeeping (thesis 5.5 with design.md's two corrections): turns
 * each GC operation (a committed snapshot's delta, a hold, a release, a retention extension) into
 * GMA updates logged through BOSC as one atomic, idempotent group.
 */
package org.holdfast.gc.bookkeeping;
