package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.Comparator;
import java.util.Random;
import java.util.stream.Stream;
import org.holdfast.common.id.VolumeId;
import org.holdfast.gc.GcStoreException;
import org.holdfast.gc.check.FsckReport;
import org.holdfast.gc.gma.GmaFormat;
import org.holdfast.server.app.StoreFailureAnalyzer;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.MetadataDb;
import org.holdfast.server.store.StoredBlock;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Damage found when the storage opens, not later: a GMA chunk that fails its checks (and has no
 * copy in the double-write journal) refuses the GC's open with the rebuild command (and the rebuild then gives a clean store); a
 * flipped byte in a catalog table file refuses the catalog's start check, naming the file and the
 * repair, and the start-up report says the same.
 */
class DamageAtStartTest {
    private static final int BS = 4096;
    private static final VolumeId VOL = new VolumeId("vol");

    @TempDir
    Path dir;

    @Test
    void open_gmaChunkDamaged_refusedWithRebuildCommand_rebuildThenCleanAndReadable() throws Exception {
        long[] pbns = backup();
        Path gma = dir.resolve("gc").resolve("gma.dat");
        flip(gma, GmaFormat.chunkOffset(0) + 64);
        assertThatThrownBy(this::openFixture).isInstanceOf(GcStoreException.class)
                .hasMessageContaining("damaged GC metadata found at start").hasMessageContaining("gma.dat")
                .hasMessageContaining("chunk 0").hasMessageContaining("holdfast-server gc-rebuild --data-dir " + dir);

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int code = GcRebuildToolAccess.run(new String[] {"--data-dir", dir.toString(), "--grace", "2h"},
                new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8), Clock.systemUTC());
        assertThat(code).as(err.toString(StandardCharsets.UTF_8)).isZero();
        try (GcStoreFixture f = openFixture()) {
            FsckReport r = f.gc.fsck();
            assertThat(r.clean()).as(r.toText()).isTrue();
            StoredBlock b = new StoredBlock();
            for (long p : pbns) {
                f.store.read(p, b);
            }
        }
        try (Stream<Path> s = Files.list(dir)) {
            s.filter(p -> p.getFileName().toString().startsWith(GcMetadataRebuild.REPLACED_PREFIX)).forEach(DamageAtStartTest::deleteTree);
        }
    }

    @Test
    void verifyChecksums_catalogTableFileFlipped_corruptDataNamingTheFileAndTheRepair() throws Exception {
        backup();
        // reopening replays the write-ahead log into a table file
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            db.verifyChecksums();
        }
        Path sst;
        try (Stream<Path> s = Files.list(dir.resolve("catalog"))) {
            sst = s.filter(p -> p.toString().endsWith(".sst")).max(Comparator.comparingLong(DamageAtStartTest::size)).orElseThrow();
        }
        flip(sst, 20);
        Throwable t;
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            t = org.assertj.core.api.Assertions.catchThrowable(db::verifyChecksums);
        } catch (CorruptDataException e) {
            t = e; // the damage may already show when the file is opened
        }
        assertThat(t).isInstanceOf(CorruptDataException.class).hasMessageContaining(sst.getFileName().toString())
                .hasMessageContaining("restore <data-dir>/catalog");
        // a running server that reads the damaged file (fsck's scan of the maps) gets corrupt-data naming it, not "retry"
        Throwable scan;
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"))) {
            scan = org.assertj.core.api.Assertions.catchThrowable(() -> {
                for (MetadataDb.Column c : MetadataDb.Column.values()) {
                    try (var it = db.iterator(db.handle(c))) {
                        for (it.seekToFirst(); it.isValid(); it.next()) {
                            it.value();
                        }
                    }
                }
            });
        } catch (CorruptDataException e) {
            scan = e;
        }
        assertThat(scan).isInstanceOf(CorruptDataException.class).hasMessageContaining(sst.getFileName().toString());
        var analysis = new StoreFailureAnalyzer().analyze(new RuntimeException("bean creation", t));
        assertThat(analysis.getDescription()).contains("catalog damaged at start").contains(sst.getFileName().toString());
        assertThat(analysis.getAction()).contains("holdfast-server catalog-restore --data-dir <data-dir> --from")
                .contains("restore <data-dir>/catalog").contains("holdfast-server gc-rebuild --data-dir");
    }

    /** One snapshot of 64 random blocks, committed and closed as a stopped server leaves it; returns the PBNs. */
    private long[] backup() throws Exception {
        long[] pbns = new long[64];
        try (DataDirectory dd = DataDirectory.open(dir); GcStoreFixture f = openFixture()) {
            SessionMap m = new SessionMap(64);
            Random r = new Random(3);
            for (int lbn = 0; lbn < 64; lbn++) {
                byte[] payload = new byte[BS];
                r.nextBytes(payload);
                pbns[lbn] = f.store.append(MessageDigest.getInstance("SHA-256").digest(payload), 0, payload, 0, BS,
                        FormatVersions.CODEC_RAW, BS);
                assertThat(f.gc.guard().protect(pbns[lbn])).isTrue();
                m.add(lbn, pbns[lbn]);
            }
            f.store.sync();
            f.commit.commit(new SnapshotCommit.Request(VOL, BS, 64L * BS, 0, m, 64L * BS, 64, 64, 64L * BS));
        }
        return pbns;
    }

    private GcStoreFixture openFixture() {
        return GcStoreFixture.open(dir, Clock.systemUTC(), 1L << 20, Duration.ofHours(2), 8, h -> h);
    }

    private static void flip(Path file, long at) throws Exception {
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            ByteBuffer b = ByteBuffer.allocate(1);
            ch.read(b, at);
            b.put(0, (byte) (b.get(0) ^ 0xFF)).rewind();
            ch.write(b, at);
        }
    }

    private static long size(Path p) {
        try {
            return Files.size(p);
        } catch (java.io.IOException e) {
            return 0;
        }
    }

    private static void deleteTree(Path p) {
        try (Stream<Path> s = Files.walk(p)) {
            s.sorted(Comparator.reverseOrder()).forEach(q -> q.toFile().delete());
        } catch (java.io.IOException ignored) {
            // the temp dir goes away with the test
        }
    }
}
