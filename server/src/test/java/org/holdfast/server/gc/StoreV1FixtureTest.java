package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.OutputStream;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.id.VolumeId;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.jobs.JobContext;
import org.holdfast.server.restore.SnapshotImage;
import org.holdfast.server.store.Compactor;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.DataLog;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.StoredBlock;
import org.holdfast.server.store.VerifyLedger;
import org.holdfast.server.verify.Verifier;
import org.holdfast.server.verify.VerifyScope;
import org.holdfast.server.verify.VerifySettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A data directory written by the v1 release (fixtures/store-v1, see its README.txt) opens with
 * today's code: offline fsck is clean, every snapshot restores byte-identical to the SHA-256
 * recorded with the fixture, and verify finds no bad block. Block records still go to the active
 * version 1 log, the first frame rolls to a version 2 log, and the sealed version 1 logs compact.
 */
class StoreV1FixtureTest {
    @TempDir
    Path dir;
    @TempDir
    Path scratch;

    @Test
    void v1Store_opensRestoresByteIdenticalAndChecksClean() throws Exception {
        Path fixture = fixture();
        copy(fixture, dir);
        Map<String, String> expected = StoreV1FixtureWriter.readExpected(dir.resolve("expected-sha256.txt"));
        assertThat(expected).hasSize(3);

        assertThat(FsckTool.run(dir, scratch)).as("offline fsck of the v1 store").isZero();
        try (DataDirectory dd = DataDirectory.open(dir);
             GcStoreFixture f = GcStoreFixture.open(dd.root(), Clock.systemUTC(), 1L << 16, Duration.ofHours(2), 8, h -> h)) {
            assertRestores(f, expected);
            Verifier.Report r = new Verifier(f.catalog, f.store, new VerifyLedger(f.db), new VerifySettings(2, 0, Duration.ZERO, null),
                    Clock.systemUTC()).run(VerifyScope.all(), JobContext.NONE);
            assertThat(r.blocksRead()).as("every stored block read").isPositive();
            assertThat(r.badBlocks()).isZero();
            assertThat(f.gc.fsck().clean()).as("online fsck").isTrue();

            // block records still go to the active v1 log; two of three are freed again at once
            long[] extra = new long[3];
            byte[] one = new byte[StoreV1FixtureWriter.BS];
            for (int i = 0; i < 3; i++) {
                new Random(100 + i).nextBytes(one);
                extra[i] = f.store.append(MessageDigest.getInstance("SHA-256").digest(one), 0, one, 0, one.length,
                        FormatVersions.CODEC_RAW, one.length);
            }
            f.store.sync();
            f.store.forget(extra, 2);

            // a frame goes to a new version 2 log: the v1 logs keep block records only
            int activeBefore = f.store.stats().activeLogId();
            byte[] fps = new byte[64];
            byte[] raw = new byte[2 * StoreV1FixtureWriter.BS];
            Arrays.fill(raw, (byte) 9);
            raw[5000] = 1;
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(raw, 0, StoreV1FixtureWriter.BS);
            System.arraycopy(sha.digest(), 0, fps, 0, 32);
            sha.update(raw, StoreV1FixtureWriter.BS, StoreV1FixtureWriter.BS);
            System.arraycopy(sha.digest(), 0, fps, 32, 32);
            byte[] z = new byte[raw.length + 4096];
            int n;
            try (BlockCodec c = new BlockCodec()) {
                n = c.compress(raw, 0, raw.length, z, 0);
            }
            long first = f.store.appendFrame(fps, 0, 2, z, 0, n, StoreV1FixtureWriter.BS);
            f.store.sync();
            assertThat(f.store.stats().activeLogId()).isEqualTo(activeBefore + 1);
            StoredBlock b = new StoredBlock();
            f.store.read(first + 1, b);
            assertThat(Arrays.copyOfRange(b.data(), b.dataOffset(), b.dataOffset() + b.storedLength()))
                    .isEqualTo(Arrays.copyOfRange(raw, StoreV1FixtureWriter.BS, raw.length));
            try (DataLog v1 = DataLog.openReadOnly(
                    f.store.dir().resolve(DataLog.fileName(activeBefore)), activeBefore);
                 DataLog v2 = DataLog.openReadOnly(
                    f.store.dir().resolve(DataLog.fileName(activeBefore + 1)), activeBefore + 1)) {
                assertThat(v1.version()).isEqualTo(1);
                assertThat(v2.version()).isEqualTo(2);
            }

            // the sealed v1 logs compact (their header copied as it is) and every snapshot still restores
            Compactor.Result compacted = new Compactor(f.store).run(1.0, Long.MAX_VALUE);
            assertThat(compacted.logsRewritten()).isPositive();
            assertRestores(f, expected);
            f.store.read(extra[2], b);
            try (DataLog v1 = DataLog.openReadOnly(
                    f.store.dir().resolve(DataLog.fileName(activeBefore)), activeBefore)) {
                assertThat(v1.version()).isEqualTo(1);
            }
        }
    }

    private static void assertRestores(GcStoreFixture f, Map<String, String> expected) throws Exception {
        for (Map.Entry<String, String> e : expected.entrySet()) {
            String[] vs = e.getKey().split("@");
            VolumeRecord v = f.catalog.volume(new VolumeId(vs[0])).orElseThrow();
            SnapshotRecord s = f.catalog.requireSnapshot(new VolumeId(vs[0]), Long.parseLong(vs[1]));
            SnapshotImage img = new SnapshotImage(f.catalog, f.store, v, s);
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            try (OutputStream out = new DigestOutputStream(OutputStream.nullOutputStream(), sha)) {
                img.write(0, img.length() - 1, out);
            }
            assertThat(img.length() + " " + HexFormat.of().formatHex(sha.digest())).as("image of %s", e.getKey()).isEqualTo(e.getValue());
        }
    }

    static Path fixture() throws URISyntaxException {
        return Path.of(StoreV1FixtureTest.class.getResource("/fixtures/store-v1/expected-sha256.txt").toURI()).getParent();
    }

    static void copy(Path from, Path to) throws java.io.IOException {
        try (Stream<Path> s = Files.walk(from)) {
            for (Path p : s.toList()) {
                Path t = to.resolve(from.relativize(p).toString());
                if (Files.isDirectory(p)) {
                    Files.createDirectories(t);
                } else {
                    Files.copy(p, t);
                }
            }
        }
    }
}
