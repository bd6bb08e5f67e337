package org.holdfast.gc.gma;

/** Receives the USED slots of a GMA scan, in PBN order. */
@FunctionalInterface
public interface SlotVisitor {
    void visit(long pbn, int rc, int pins, int flags, long expiry);
}
