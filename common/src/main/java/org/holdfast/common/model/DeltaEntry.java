package org.holdfast.common.model;

/**
 * One change a committed snapshot makes to its volume's map: logical block {@code lbn} moved from
 * {@code beforePbn} (mapped since snapshot {@code beforeBirthSequence}, 0 if never mapped) to
 * {@code newPbn}. PBN 0 is the zero block. This is the unit of GC bookkeeping: RC(before) -1,
 * RC(new) +1, ET(before) raised.
 */
public record DeltaEntry(long lbn, long beforePbn, long beforeBirthSequence, long newPbn) {
}
