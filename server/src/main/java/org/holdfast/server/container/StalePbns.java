package org.holdfast.server.container;

/** The PBNs freed by GC that containers must purge when they are next loaded (lazy deletion, thesis 5.7). */
public interface StalePbns {

    /** Sequence number of the newest stale mark; a container purged through it holds none of them. */
    long lastSeq();

    /** True if {@code pbn} was freed and may still sit in some container. */
    boolean contains(long pbn);
}
