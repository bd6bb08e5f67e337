package org.holdfast.common.id;

/**
 * Physical block number: names one stored unique block. Allocated in increasing order and never
 * reused; {@link #ZERO} stands for the all-zero block, which is never stored. Hot paths use the raw
 * {@code long}; this type is for APIs and messages.
 */
public record Pbn(long value) {
    /** The all-zero block. */
    public static final Pbn ZERO = new Pbn(0);

    public Pbn {
        if (value < 0) {
            throw new IllegalArgumentException("PBN must not be negative: " + value);
        }
    }

    public boolean isZero() {
        return value == 0;
    }
}
