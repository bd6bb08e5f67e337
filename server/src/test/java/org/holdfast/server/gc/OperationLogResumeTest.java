package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.holdfast.gc.bookkeeping.GcOperation;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What waits for GC bookkeeping to be healthy ({@link OperationLog#whenHealthy}) runs only once the
 * operations that could not be logged are: a master ends a committed backup's protection on a worker
 * through it, and ended before the commit's counts are routed, the blocks would be held by their
 * expiry alone. Real catalog; the bookkeeping is a seam that refuses while the "disk" is full.
 */
class OperationLogResumeTest {
    @TempDir
    Path dir;
    private MetadataDb db;
    private OperationLog ops;
    private final List<Long> logged = new ArrayList<>();
    private volatile boolean full;

    @BeforeEach
    void open() {
        db = MetadataDb.open(dir.resolve("catalog"));
        GcBookkeeping bookkeeping = new GcBookkeeping() {
            @Override
            public void apply(long opId, GcOperation op) {
                if (full) {
                    throw new IllegalStateException("the GC log cannot be written (test)");
                }
                logged.add(opId);
            }

            @Override
            public long lastAppliedOp() {
                return logged.isEmpty() ? 0 : logged.get(logged.size() - 1);
            }
        };
        ops = new OperationLog(new Catalog(db), new GcRecords(db), bookkeeping);
        Object monitor = new Object();
        // the re-drive logs what the log lacks, as CrashRecovery does: here, operation 2
        ops.resumeWith(() -> {
            if (!logged.contains(2L)) {
                bookkeeping.apply(2, new GcOperation.Release(new long[] {7}));
            }
        }, () -> monitor);
    }

    @AfterEach
    void close() {
        db.close();
    }

    @Test
    void whenHealthy_bookkeepingHealthy_runsAtOnce() {
        ops.apply(1, new GcOperation.Release(new long[] {5}));
        AtomicInteger ran = new AtomicInteger();
        ops.whenHealthy(ran::incrementAndGet);
        assertThat(ran).hasValue(1);
    }

    @Test
    void whenHealthy_paused_waitsUntilTheWaitingOperationIsLogged() {
        ops.apply(1, new GcOperation.Release(new long[] {5}));
        full = true;
        ops.apply(2, new GcOperation.Release(new long[] {7})); // a commit's operation that cannot be logged
        assertThat(ops.failure()).isNotNull();
        List<Long> seenWhenRun = new ArrayList<>();
        ops.whenHealthy(() -> seenWhenRun.addAll(logged));
        ops.whenHealthy(() -> seenWhenRun.add(-1L));
        assertThat(seenWhenRun).as("nothing runs while operation 2 is in no log").isEmpty();

        assertThatThrownBy(ops::requireHealthy).as("a GC request while the disk is still full: still paused")
                .hasMessageContaining("paused");
        assertThat(seenWhenRun).isEmpty();

        full = false;
        ops.requireHealthy(); // the next GC request or commit resumes
        assertThat(ops.failure()).isNull();
        assertThat(seenWhenRun).as("both ran, after operation 2 was logged, in the order they came").containsExactly(1L, 2L, -1L);

        AtomicInteger later = new AtomicInteger();
        ops.whenHealthy(later::incrementAndGet);
        assertThat(later).as("healthy again: at once").hasValue(1);
    }

    @Test
    void whenHealthy_aWaiterThrows_theCommitResumingDoesNotAndTheOthersStillRun() {
        full = true;
        ops.apply(2, new GcOperation.Release(new long[] {7}));
        List<String> ran = new ArrayList<>();
        ops.whenHealthy(() -> {
            throw new IllegalStateException("the outbox cannot be read (test)");
        });
        ops.whenHealthy(() -> ran.add("second"));

        full = false;
        ops.apply(3, new GcOperation.Release(new long[] {9})); // a commit resumes: apply never throws, its catalog change stands

        assertThat(ops.failure()).isNull();
        assertThat(logged).as("the re-drive logged operation 2 (operation 3's is left to the real re-drive, as in CrashRecovery)")
                .containsExactly(2L);
        assertThat(ran).as("a waiter after the one that threw still ends its session").containsExactly("second");
    }
}
