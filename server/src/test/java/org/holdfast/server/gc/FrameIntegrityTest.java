package org.holdfast.server.gc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.RandomAccessFile;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Clock;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.id.VolumeId;
import org.holdfast.server.catalog.SessionMap;
import org.holdfast.server.catalog.SnapshotCommit;
import org.holdfast.server.catalog.SnapshotRecord;
import org.holdfast.server.catalog.VolumeRecord;
import org.holdfast.server.jobs.JobContext;
import org.holdfast.server.restore.SnapshotImage;
import org.holdfast.server.store.BadBlocks;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.DataLog;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.VerifyLedger;
import org.holdfast.server.verify.Verifier;
import org.holdfast.server.verify.VerifyScope;
import org.holdfast.server.verify.VerifySettings;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * fsck, verify and the image restore check every member of every frame record: a flipped byte in
 * a frame makes each of its members bad (and only those), the restore stops before the first one
 * with the block named, and a member whose bytes do not match its fingerprint is found alone.
 */
class FrameIntegrityTest {
    private static final int BS = 4096;
    private static final VolumeId VOL = new VolumeId("vol");

    @TempDir
    Path dir;
    @TempDir
    Path scratch;

    private static byte[] block(int seed) {
        byte[] b = new byte[BS];
        new Random(seed).nextBytes(b);
        Arrays.fill(b, 300, BS, (byte) seed);
        return b;
    }

    @Test
    void bitFlipInAFrame_fsckVerifyAndRestoreFindEveryMember_andOnlyThem() throws Exception {
        byte[] image = new byte[11 * BS];
        long[] pbns = new long[11];
        long frameOffset;
        int frameStored;
        try (DataDirectory dd = DataDirectory.open(dir);
             GcStoreFixture f = GcStoreFixture.open(dd.root(), Clock.systemUTC(), 1L << 20, Duration.ofHours(2), 8, h -> h);
             BlockCodec codec = new BlockCodec()) {
            for (int lbn = 0; lbn < 11; lbn++) {
                System.arraycopy(block(lbn + 1), 0, image, lbn * BS, BS);
            }
            long a = appendFrame(f, codec, image, 0, 6);
            long b = appendFrame(f, codec, image, 6, 4);
            long c = f.store.append(sha(image, 10), 0, image, 10 * BS, BS, FormatVersions.CODEC_RAW, BS);
            SessionMap m = new SessionMap(16);
            for (int lbn = 0; lbn < 11; lbn++) {
                pbns[lbn] = lbn < 6 ? a + lbn : lbn < 10 ? b + lbn - 6 : c;
                assertThat(f.gc.guard().protect(pbns[lbn])).isTrue();
                m.add(lbn, pbns[lbn]);
            }
            f.store.sync();
            f.commit.commit(new SnapshotCommit.Request(VOL, BS, image.length, 0, m, image.length, 11, 11, 0));
            assertThat(f.gc.fsck().clean()).isTrue();
            Verifier.Report clean = verifier(f).run(VerifyScope.all(), JobContext.NONE);
            assertThat(clean.blocksRead()).isEqualTo(11);
            assertThat(clean.badBlocks()).isZero();
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            image(f).write(0, image.length - 1, out);
            assertThat(out.toByteArray()).isEqualTo(image);
            long[] where = new long[2];
            f.store.locations().forEach((pbn, logId, offset, share, fps, fpOff) -> {
                if (pbn == b) {
                    where[0] = offset;
                    where[1] = share * 4L;
                }
                return true;
            });
            frameOffset = where[0];
            frameStored = (int) where[1];
        }
        assertThat(FsckTool.run(dir, scratch)).as("offline fsck of a store with frames, read-only").isZero();
        // flip a byte in the middle of the second frame's stored bytes
        try (RandomAccessFile raf = new RandomAccessFile(dir.resolve("data").resolve(DataLog.fileName(1)).toFile(), "rw")) {
            long at = frameOffset + FormatVersions.RECORD_HEADER_BYTES + frameStored / 2;
            raf.seek(at);
            int x = raf.read();
            raf.seek(at);
            raf.write(x ^ 0x10);
        }
        assertThat(FsckTool.run(dir, scratch)).as("offline fsck: data loss").isEqualTo(2);
        try (DataDirectory dd = DataDirectory.open(dir);
             GcStoreFixture f = GcStoreFixture.open(dd.root(), Clock.systemUTC(), 1L << 20, Duration.ofHours(2), 8, h -> h)) {
            Set<Long> members = Set.of(pbns[6], pbns[7], pbns[8], pbns[9]);
            assertThat(f.gc.fsck().corruptBlocks().count()).as("fsck names every member of the damaged frame").isEqualTo(4);
            Verifier.Report r = verifier(f).run(VerifyScope.all(), JobContext.NONE);
            assertThat(r.badBlocks()).isEqualTo(4);
            assertThat(bad(f.store.badBlocks())).isEqualTo(new TreeSet<>(members));
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            assertThatThrownBy(() -> image(f).write(0, image.length - 1, out)).isInstanceOf(CorruptDataException.class)
                    .hasMessageContaining("pbn " + pbns[6]);
            byte[] written = out.toByteArray();
            assertThat(written.length).isLessThanOrEqualTo(6 * BS);
            assertThat(written).as("only correct bytes were written").isEqualTo(Arrays.copyOf(image, written.length));
        }
    }

    @Test
    void memberNotMatchingItsFingerprint_verifyAndFsckFindItAlone() throws Exception {
        try (DataDirectory dd = DataDirectory.open(dir);
             GcStoreFixture f = GcStoreFixture.open(dd.root(), Clock.systemUTC(), 1L << 20, Duration.ofHours(2), 8, h -> h);
             BlockCodec codec = new BlockCodec()) {
            byte[] image = new byte[5 * BS];
            byte[] fps = new byte[5 * 32];
            for (int lbn = 0; lbn < 5; lbn++) {
                System.arraycopy(block(lbn + 1), 0, image, lbn * BS, BS);
                System.arraycopy(sha(image, lbn), 0, fps, lbn * 32, 32);
            }
            fps[3 * 32] ^= 1; // as if the location index held another block's fingerprint for member 3
            byte[] z = new byte[image.length + 4096];
            int n = codec.compress(image, 0, image.length, z, 0);
            long first = f.store.appendFrame(fps, 0, 5, z, 0, n, BS);
            SessionMap m = new SessionMap(8);
            for (int lbn = 0; lbn < 5; lbn++) {
                assertThat(f.gc.guard().protect(first + lbn)).isTrue();
                m.add(lbn, first + lbn);
            }
            f.store.sync();
            f.commit.commit(new SnapshotCommit.Request(VOL, BS, image.length, 0, m, image.length, 5, 5, 0));
            Verifier.Report r = verifier(f).run(VerifyScope.all(), JobContext.NONE);
            assertThat(bad(f.store.badBlocks())).containsExactly(first + 3);
            assertThat(r.badBlocks()).isEqualTo(1);
            assertThat(f.gc.fsck().corruptBlocks().count()).isEqualTo(1);
        }
    }

    private static Set<Long> bad(BadBlocks b) {
        return b.all().stream().map(BadBlocks.BadBlock::pbn).collect(Collectors.toCollection(TreeSet::new));
    }

    private static Verifier verifier(GcStoreFixture f) {
        return new Verifier(f.catalog, f.store, new VerifyLedger(f.db), new VerifySettings(2, 0, Duration.ZERO, null), Clock.systemUTC());
    }

    private static SnapshotImage image(GcStoreFixture f) {
        VolumeRecord v = f.catalog.volume(VOL).orElseThrow();
        SnapshotRecord s = f.catalog.requireSnapshot(VOL, 1);
        return new SnapshotImage(f.catalog, f.store, v, s);
    }

    private static byte[] sha(byte[] image, int lbn) throws Exception {
        MessageDigest d = MessageDigest.getInstance("SHA-256");
        d.update(image, lbn * BS, BS);
        return d.digest();
    }

    private static long appendFrame(GcStoreFixture f, BlockCodec codec, byte[] image, int fromLbn, int members) throws Exception {
        byte[] fps = new byte[members * 32];
        for (int k = 0; k < members; k++) {
            System.arraycopy(sha(image, fromLbn + k), 0, fps, k * 32, 32);
        }
        byte[] z = new byte[members * BS + 4096];
        int n = codec.compress(image, fromLbn * BS, members * BS, z, 0);
        assertThat(n).isPositive();
        return f.store.appendFrame(fps, 0, members, z, 0, n, BS);
    }
}
