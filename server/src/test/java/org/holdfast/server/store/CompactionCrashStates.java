package org.holdfast.server.store;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** On-disk states a crash in the middle of a compaction leaves, rebuilt for the compaction tests. */
final class CompactionCrashStates {
    private CompactionCrashStates() {
    }

    /**
     * Compacts log 1 of {@code data} at {@code threshold}, then rebuilds the state of a crash
     * between the synced location batch and the rename: the locations name the compacted offsets,
     * the intent is set, the old log is still in place beside its {@code .compact}. Returns the old
     * log's size.
     */
    static long afterLocationBatchBeforeRename(Path data, MetadataDb db, double threshold) throws IOException {
        Path log1 = data.resolve(DataLog.fileName(1));
        byte[] oldLog = Files.readAllBytes(log1);
        Compactor.compact(data, db, threshold);
        byte[] compacted = Files.readAllBytes(log1);
        assertThat(compacted.length).isLessThan(oldLog.length);
        Files.write(data.resolve(DataLog.fileName(1) + ".compact"), compacted);
        Files.write(log1, oldLog);
        try (MetadataBatch b = new MetadataBatch()) {
            db.putMetaLong(b, Compactor.META_INTENT, 1);
            db.write(b, true);
        }
        return oldLog.length;
    }
}
