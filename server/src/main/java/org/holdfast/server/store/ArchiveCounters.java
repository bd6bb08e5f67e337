package org.holdfast.server.store;

import java.util.concurrent.atomic.AtomicLong;

/** What a {@link LogArchive} counts since it opened: its {@link LogArchive.Stats}, the objects deleted, and the sealed-log report's cue. */
final class ArchiveCounters {
    final AtomicLong uploaded = new AtomicLong();
    final AtomicLong uploadFailures = new AtomicLong();
    final AtomicLong fetched = new AtomicLong();
    final AtomicLong objectsDeleted = new AtomicLong();
    // moves whenever the confirmed logs may have changed (upload, compaction settled, log retired): the sealed-log report's cue
    final AtomicLong confirmedChanges = new AtomicLong();
}
