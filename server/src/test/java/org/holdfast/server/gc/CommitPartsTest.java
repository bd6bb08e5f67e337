package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.model.DeltaEntry;
import org.holdfast.gc.bookkeeping.GcOperation;
import org.holdfast.gc.retention.RangeMaxExpiry;
import org.holdfast.server.catalog.SnapshotDelta;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A commit's delta in memory is logged as views of its slices instead of copies: every operation id
 * must carry exactly the entries, and the kind, that the copying path (the re-drive's, reading the
 * map) gives it. A part with an entry too many or too few would leave a reference count wrong: a
 * block freed while a snapshot still maps it.
 */
class CommitPartsTest {
    private static final VolumeId VOL = new VolumeId("parts");
    private static final RangeMaxExpiry EXPIRIES = new RangeMaxExpiry();

    /** What one logged operation held when it was logged. */
    private record Logged(long id, boolean part, boolean decrements, List<DeltaEntry> entries) {
    }

    private static SnapshotDelta delta(int n) {
        SnapshotDelta d = new SnapshotDelta(16);
        for (int i = 0; i < n; i++) {
            d.add(3L * i, i % 4 == 0 ? 0 : 500 + i, i % 4 == 0 ? 0 : 1, 9000 + i);
        }
        return d;
    }

    private static List<Logged> log(SnapshotDelta d, int partEntries, long skipUpTo, boolean inMemory) {
        CommitParts.Source of = CommitParts.of(d);
        CommitParts.Source source = inMemory ? of : of::forEach; // the lambda has no in-memory list: the copying path
        assertThat(source.inMemory() != null).isEqualTo(inMemory);
        List<Logged> out = new ArrayList<>();
        int parts = CommitParts.partsFor(d.size(), partEntries);
        CommitParts.log(VOL, 7, EXPIRIES, 100, parts, partEntries, skipUpTo, source, (id, op) -> {
            if (op instanceof GcOperation.CommitPart p) {
                out.add(new Logged(id, true, p.decrements(), List.copyOf(p.slice())));
            } else {
                out.add(new Logged(id, false, false, List.copyOf(((GcOperation.Commit) op).delta())));
            }
        });
        return out;
    }

    @Test
    void inMemoryViews_sameIdsKindsAndEntriesAsCopies_atEveryBoundaryAndSkip() {
        int partEntries = 8;
        for (int n : new int[] {0, 1, 7, 8, 9, 16, 17, 63, 64, 65}) {
            SnapshotDelta d = delta(n);
            int parts = CommitParts.partsFor(n, partEntries);
            long lastSkip = parts == 1 ? 99 : 100 + parts; // a single operation is never skipped: it has no parts
            for (long skip = 99; skip <= lastSkip; skip++) {
                List<Logged> views = log(d, partEntries, skip, true);
                List<Logged> copies = log(d, partEntries, skip, false);
                assertThat(views).as("n=%d skip=%d", n, skip).isEqualTo(copies);
                assertThat(views).hasSize((int) Math.max(0, Math.min(parts, 100 + parts - 1 - skip)));
            }
            // with nothing skipped, each phase's parts together hold every entry once, in order
            List<Logged> all = log(d, partEntries, 99, true);
            List<DeltaEntry> increments = new ArrayList<>();
            List<DeltaEntry> decrements = new ArrayList<>();
            for (Logged l : all) {
                (l.decrements() ? decrements : increments).addAll(l.entries());
            }
            assertThat(increments).as("n=%d", n).isEqualTo(d.asList());
            if (parts > 1) {
                assertThat(decrements).isEqualTo(d.asList());
            }
        }
    }

    @Test
    void spilledDelta_hasNoInMemoryList_logsByCopies(@TempDir Path dir) {
        try (SnapshotDelta d = new SnapshotDelta(dir.resolve("d-delta.spill"), 4)) {
            for (int i = 0; i < 20; i++) {
                d.add(i, 0, 0, 100 + i);
            }
            assertThat(d.spilledEntries()).isPositive();
            assertThat(CommitParts.of(d).inMemory()).isNull();
            List<Logged> logged = log(d, 8, 99, false);
            assertThat(logged).extracting(Logged::id).containsExactly(100L, 101L, 102L, 103L, 104L, 105L);
            assertThat(logged.get(2).entries()).hasSize(4);
            assertThat(logged.get(2).entries().get(3).newPbn()).isEqualTo(119);
        }
    }
}
