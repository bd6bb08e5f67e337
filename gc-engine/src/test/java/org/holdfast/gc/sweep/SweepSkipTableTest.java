package org.holdfast.gc.sweep;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import org.holdfast.gc.MutableClock;
import org.holdfast.gc.bookkeeping.GcBookkeeper;
import org.holdfast.gc.bookkeeping.GcOperation;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.gc.gma.GmaChunk.UpdateKinds;
import org.holdfast.gc.gma.GmaFormat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The persistent sweep skip table: after an orderly restart the first sweep reads only the chunks
 * that changed or came due; a table that is lost, damaged, stale or older than the log (crash,
 * restored copy) only costs reads: a sweep never leaves a freeable block behind.
 */
class SweepSkipTableTest {
    private static final long T0 = 1_800_000_000_000L;
    private static final long HOUR = 3_600_000L;
    private static final long PER = GmaFormat.PBNS_PER_CHUNK;

    @TempDir
    Path work;
    private Path dir; // the GC directory, inside work

    private final MutableClock clock = new MutableClock(T0);
    private final Set<Long> reclaimed = new HashSet<>();
    private BoscSettings settings = BoscSettings.defaults().withCommitIdle(Duration.ofMillis(1));
    private BoscPipeline pipeline;
    private GcBookkeeper bookkeeper;
    private GraceGuard guard;
    private Sweeper sweeper;
    private long opId;

    private void open() {
        dir = work.resolve("gc");
        pipeline = BoscPipeline.open(dir, settings);
        bookkeeper = new GcBookkeeper(pipeline);
        opId = Math.max(opId, bookkeeper.lastAppliedOp());
        guard = new GraceGuard(pipeline, clock, Duration.ofHours(6), Duration.ofMinutes(5));
        sweeper = new Sweeper(pipeline, guard, (pbns, n) -> {
            for (int i = 0; i < n; i++) {
                reclaimed.add(pbns[i]);
            }
        }, 3);
    }

    /** Orderly shutdown as the server's GC service does it. */
    private void closeOrderly() {
        assertThat(sweeper.saveSkipTable()).isTrue();
        pipeline.close();
    }

    private SweepReport sweep() {
        return sweeper.sweep(clock.millis());
    }

    /** {@code chunks} chunks, each with a referenced block and an unreferenced one expiring in 10 h. */
    private void fill(int chunks) {
        for (long c = 0; c < chunks; c++) {
            pipeline.appendSingle(UpdateKinds.RC_ADD, c * PER + 1, 1);
            pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, c * PER + 2, T0 + 10 * HOUR);
        }
    }

    @Test
    void restartAfterOrderlyClose_firstSweepReadsOnlyChangedChunks_withoutTableReadsAll() throws Exception {
        int chunks = 48;
        open();
        fill(chunks);
        assertThat(sweeper.skipTableState()).isEqualTo(Sweeper.SkipTableState.NONE);
        assertThat(sweep().chunksScanned()).isEqualTo(chunks);
        pipeline.appendSingle(UpdateKinds.RC_ADD, 7 * PER + 1, -1); // chunk 7 changes after the sweep
        pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 7 * PER + 1, T0 - 1);
        closeOrderly();
        Path table = dir.resolve(SweepSkipTable.FILE);
        Path copy = work.resolve("table-copy");
        Files.copy(table, copy);

        open();
        assertThat(sweeper.skipTableState()).isEqualTo(Sweeper.SkipTableState.LOADED);
        SweepReport first = sweep();
        System.out.println("[measure] first sweep after restart with the skip table: " + first.chunksScanned() + " of " + chunks
                + " GMA chunks read");
        assertThat(first.chunksScanned()).as("only the chunk changed before the shutdown").isEqualTo(1);
        assertThat(first.freed()).isEqualTo(1);
        assertThat(first.keptReferenced()).as("counts of skipped chunks carried over the restart").isEqualTo(chunks - 1);
        assertThat(first.keptUnexpired()).isEqualTo(chunks);
        closeOrderly();

        Files.delete(table); // lost
        open();
        assertThat(sweeper.skipTableState()).isEqualTo(Sweeper.SkipTableState.NONE);
        SweepReport without = sweep();
        System.out.println("[measure] first sweep after restart without it: " + without.chunksScanned() + " of " + chunks);
        assertThat(without.chunksScanned()).isEqualTo(chunks);
        pipeline.appendSingle(UpdateKinds.RC_ADD, 20 * PER + 3, 1); // the log moves on past the copied table
        closeOrderly();

        Files.copy(copy, table, StandardCopyOption.REPLACE_EXISTING); // an older table than the log: stale
        open();
        assertThat(sweeper.skipTableState()).isEqualTo(Sweeper.SkipTableState.STALE);
        assertThat(sweep().chunksScanned()).isEqualTo(chunks);
        closeOrderly();

        byte[] b = Files.readAllBytes(table);
        b[20] ^= 1; // damaged
        Files.write(table, b);
        open();
        assertThat(sweeper.skipTableState()).isEqualTo(Sweeper.SkipTableState.DAMAGED);
        assertThat(sweep().chunksScanned()).isEqualTo(chunks);
        closeOrderly();

        clock.advance(Duration.ofHours(11)); // every chunk's unreferenced block comes due, nothing was logged
        open();
        assertThat(sweeper.skipTableState()).isEqualTo(Sweeper.SkipTableState.LOADED);
        SweepReport due = sweep();
        assertThat(due.chunksScanned()).isEqualTo(chunks);
        assertThat(due.freed()).isEqualTo(chunks);
        pipeline.close();
    }

    @Test
    void crashAfterUpdates_tableFromLastSweep_neverHidesAFreeableBlock() {
        for (boolean advanceCheckpoint : new boolean[] {true, false}) {
            settings = settings.withAdvanceCheckpoint(advanceCheckpoint);
            open();
            fill(12);
            sweep();
            // after the table was written: blocks in chunks 3 and 9 become freeable, then the process dies
            pipeline.appendSingle(UpdateKinds.RC_ADD, 3 * PER + 1, -1);
            pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 3 * PER + 1, T0 - 1);
            bookkeeper.apply(++opId, new GcOperation.Release(new long[] {9 * PER + 1}));
            pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, 9 * PER + 1, T0 - 1);
            pipeline.awaitDurable();
            pipeline.commitAll();
            pipeline.abandon();
            open();
            assertThat(sweeper.skipTableState()).as("advance %s", advanceCheckpoint)
                    .isIn(Sweeper.SkipTableState.LOADED, Sweeper.SkipTableState.STALE);
            sweep();
            assertThat(reclaimed).as("advance %s, table %s", advanceCheckpoint, sweeper.skipTableState())
                    .contains(3 * PER + 1, 9 * PER + 1);
            pipeline.close();
            reclaimed.clear();
            // the whole GC directory: a gma.gen left behind would record chunks the new gma.dat never held
            for (Path p : List.of(dir.resolve("gma.dat"), dir.resolve("gma.gen"), dir.resolve("gma.dw"), dir.resolve("checkpoint"),
                    dir.resolve(SweepSkipTable.FILE))) {
                p.toFile().delete();
            }
            for (java.io.File f : dir.resolve("log").toFile().listFiles()) {
                f.delete();
            }
            opId = 0;
        }
    }

    /**
     * Random updates, time, sweeps and every kind of restart (orderly, crash, table lost, damaged,
     * replaced by an older copy); after every sweep the whole GMA is checked: no block is left that
     * the sweep should have freed.
     */
    @Test
    void randomHistoryWithRestarts_afterEverySweep_nothingFreeableLeft() throws Exception {
        Random r = new Random(42);
        open();
        Path table = work.resolve("gc").resolve(SweepSkipTable.FILE);
        Path old = work.resolve("old-table");
        List<Long> pbns = new ArrayList<>();
        for (int i = 0; i < 120; i++) {
            pbns.add(r.nextInt(20) * PER + 1 + r.nextInt(50));
        }
        long skipped = 0;
        int loaded = 0;
        for (int step = 0; step < 400; step++) {
            long p = pbns.get(r.nextInt(pbns.size()));
            int op = r.nextInt(100);
            if (op < 25) {
                pipeline.appendSingle(UpdateKinds.RC_ADD, p, 1);
            } else if (op < 45) {
                pipeline.appendSingle(UpdateKinds.RC_ADD, p, -1);
            } else if (op < 60) {
                pipeline.appendSingle(UpdateKinds.RAISE_EXPIRY, p, clock.millis() + (r.nextInt(8) - 2) * HOUR);
            } else if (op < 66) {
                bookkeeper.apply(++opId, new GcOperation.Pin(new long[] {p}));
            } else if (op < 72) {
                bookkeeper.apply(++opId, new GcOperation.Unpin(new long[] {p}));
            } else if (op < 76) {
                guard.protect(p);
            } else if (op < 84) {
                clock.advance(Duration.ofMinutes(r.nextInt(180)));
            } else if (op < 94) {
                long before = sweeper.chunksSkipped();
                sweep();
                skipped += sweeper.chunksSkipped() - before;
                assertNothingFreeable(step);
            } else {
                switch (r.nextInt(6)) {
                    case 0 -> closeOrderly();
                    case 1 -> {
                        pipeline.awaitDurable();
                        pipeline.abandon();
                    }
                    case 2 -> {
                        closeOrderly();
                        Files.deleteIfExists(table);
                    }
                    case 3 -> {
                        closeOrderly();
                        if (Files.exists(table)) {
                            byte[] b = Files.readAllBytes(table);
                            b[r.nextInt(b.length)] ^= (byte) (1 + r.nextInt(255));
                            Files.write(table, b);
                        }
                    }
                    case 4 -> {
                        closeOrderly();
                        if (Files.exists(old)) {
                            Files.copy(old, table, StandardCopyOption.REPLACE_EXISTING);
                        }
                    }
                    default -> {
                        closeOrderly();
                        Files.copy(table, old, StandardCopyOption.REPLACE_EXISTING);
                    }
                }
                open();
                if (sweeper.skipTableState() == Sweeper.SkipTableState.LOADED) {
                    loaded++;
                }
                long before = sweeper.chunksSkipped();
                sweep();
                skipped += sweeper.chunksSkipped() - before;
                assertNothingFreeable(step);
            }
        }
        assertThat(loaded).as("some restarts used the table").isPositive();
        assertThat(skipped).as("the table did let sweeps skip chunks").isPositive();
        assertThat(reclaimed).isNotEmpty();
        pipeline.close();
    }

    /** Oracle: a full read of the GMA right after a sweep at {@code now} finds nothing it should have freed. */
    private void assertNothingFreeable(int step) {
        long now = clock.millis();
        pipeline.commitAll();
        List<Long> left = new ArrayList<>();
        pipeline.gma().scan(pipeline.chunkLimit(), (pbn, rc, pins, flags, expiry) -> {
            if ((flags & GmaFormat.FLAG_FREED) == 0 && rc == 0 && pins == 0 && expiry < now && pbn != 0) {
                left.add(pbn);
            }
        });
        assertThat(left).as("step %d: freeable blocks the sweep skipped", step).isEmpty();
    }
}
