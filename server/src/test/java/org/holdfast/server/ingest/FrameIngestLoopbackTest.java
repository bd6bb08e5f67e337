package org.holdfast.server.ingest;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Path;
import java.util.Random;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.id.VolumeId;
import org.holdfast.common.protocol.Blocks;
import org.holdfast.common.protocol.Commit;
import org.holdfast.common.protocol.Committed;
import org.holdfast.common.protocol.Entries;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.Hello;
import org.holdfast.common.protocol.HelloOk;
import org.holdfast.common.protocol.Need;
import org.holdfast.common.protocol.PayloadCodec;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Compressed frames (protocol 4) through a real ingest server: stored when every member verifies,
 * refused whole (nothing stored) when one member is forged or was not asked for, refused on a
 * connection that agreed on version 3, and a frame of unproven duplicates handled member by member.
 */
class FrameIngestLoopbackTest {
    private static final int BS = 4096;
    private static final int BLOCKS = 64;
    private static final int FRAME = 16;

    @TempDir
    Path dir;

    private IngestHarness harness;
    private final BlockHasher hasher = new BlockHasher();

    @BeforeEach
    void start() {
        harness = new IngestHarness(dir);
    }

    @AfterEach
    void stop() {
        harness.close();
    }

    /** Compressible, unique blocks: text-like bytes from a small alphabet, the LBN at the front. */
    static byte[] image(long seed, int blocks) {
        byte[] b = new byte[blocks * BS];
        Random r = new Random(seed);
        for (int i = 0; i < b.length; i++) {
            b[i] = (byte) ('a' + r.nextInt(12));
        }
        for (int k = 0; k < blocks; k++) {
            b[k * BS] = (byte) k;
            b[k * BS + 1] = (byte) (seed * 31);
        }
        return b;
    }

    /** ENTRIES for all of {@code image}; returns the NEED. */
    private Need entries(AgentDriver a, byte[] image) {
        int n = image.length / BS;
        byte[] fps = new byte[n * 32];
        long[] tags = new long[n];
        for (int i = 0; i < n; i++) {
            hasher.fingerprint(image, i * BS, BS, fps, i * 32);
            tags[i] = a.tagOf(image, i * BS, BS, false);
        }
        a.send(new Entries(0, n, fps, tags));
        return a.expect(Need.class);
    }

    /**
     * One BLOCKS message of frames of {@link #FRAME} asked-for blocks; the bytes of {@code forgedLbn}
     * (if not -1) are replaced inside its frame, and {@code extraLbn} (if not -1) is appended to the
     * last frame. Returns the payload bytes sent.
     */
    private long sendFrames(AgentDriver a, byte[] image, Need need, long forgedLbn, long extraLbn) {
        long bytes = 0;
        byte[] raw = new byte[(FRAME + 1) * BS];
        byte[] z = new byte[BlockCodec.maxCompressedLength(raw.length)];
        long[] members = new long[FRAME + 1];
        Blocks.Builder b = Blocks.builder(a.alloc(), 1 << 20);
        try (BlockCodec codec = new BlockCodec()) {
            int m = 0;
            for (int i = 0; i <= need.count(); i++) {
                boolean last = i == need.count();
                if (!last && need.isNeeded(i)) {
                    System.arraycopy(image, i * BS, raw, m * BS, BS);
                    if (i == forgedLbn) {
                        raw[m * BS + 100] ^= 1;
                    }
                    members[m++] = i;
                }
                if (m == FRAME || (last && m > 0)) {
                    if (last && extraLbn >= 0) {
                        System.arraycopy(image, (int) extraLbn * BS, raw, m * BS, BS);
                        members[m++] = extraLbn;
                    }
                    int n = codec.compress(raw, 0, m * BS, z, 0);
                    assertThat(n).as("a frame of text pays").isPositive();
                    b.addFrame(members[0], z, 0, n);
                    for (int k = 1; k < m; k++) {
                        b.addFrameMember(members[k]);
                    }
                    bytes += n;
                    m = 0;
                }
            }
        }
        a.send(b.build());
        return bytes;
    }

    @Test
    void frames_allNew_storedVerifiedAndRestoreByteIdentical() {
        byte[] image = image(1, BLOCKS);
        long before = harness.store().nextPbn();
        try (AgentDriver a = harness.agent()) {
            assertThat(a.hello().protocolVersion()).isGreaterThanOrEqualTo(4); // frames from 4 on
            a.begin("vol", BS, image.length, 0);
            Need need = entries(a, image);
            assertThat(need.neededCount()).isEqualTo(BLOCKS);
            long sent = sendFrames(a, image, need, -1, -1);
            a.send(new Commit(image.length));
            Committed c = a.expect(Committed.class);
            assertThat(c.newBlocks()).isEqualTo(BLOCKS);
            assertThat(c.storedBytes()).as("the frames' bytes, stored as they came").isEqualTo(sent);
            assertThat(sent).isLessThan(BLOCKS * BS / 2);
            assertThat(a.restore("vol", 1).image()).isEqualTo(image);
        }
        assertThat(harness.store().nextPbn() - before).isEqualTo(BLOCKS);
    }

    @Test
    void frame_oneForgedMember_refusedWholeNamingTheLbnAndNothingStored() {
        byte[] image = image(2, BLOCKS);
        long before = harness.store().nextPbn();
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.begin("forged", BS, image.length, 0);
            Need need = entries(a, image);
            sendFrames(a, image, need, 5, -1); // member 5 of the first frame
            ErrorMessage e = a.expectErrorAndStop();
            assertThat(e.code()).isEqualTo(ErrorCode.FINGERPRINT_MISMATCH);
            assertThat(e.message()).contains("LBN 5 ").contains("frame of LBN 0").contains("nothing of it is stored");
        }
        assertThat(harness.store().nextPbn()).as("no PBN handed out: nothing of the frame, nor of the session, stored").isEqualTo(before);
        assertThat(harness.catalog().volume(new VolumeId("forged")).map(v -> v.latestSequence()).orElse(0L)).as("no snapshot").isZero();
    }

    @Test
    void frame_memberNotAskedFor_refusedWholeNamingTheLbn() {
        byte[] image = image(3, BLOCKS);
        long before = harness.store().nextPbn();
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.begin("vol", BS, image.length, 0);
            a.send(new Entries(0, 1, fingerprint(image, 0), new long[] {a.tagOf(image, 0, BS, false)}));
            Need need = a.expect(Need.class);
            sendFrames(a, image, need, -1, 7); // a frame of LBN 0 and LBN 7, which no ENTRIES announced
            ErrorMessage e = a.expectErrorAndStop();
            assertThat(e.code()).isEqualTo(ErrorCode.BAD_STATE);
            assertThat(e.message()).contains("LBN 7").contains("whole frame is refused");
        }
        assertThat(harness.store().nextPbn()).isEqualTo(before);
    }

    @Test
    void frames_fromAVersion3Agent_refusedAsBadFrame() {
        byte[] image = image(4, BLOCKS);
        try (AgentDriver a = harness.agent()) {
            a.send(new Hello(3, "old-agent", TestTokens.DEFAULT_AGENT));
            assertThat(a.expect(HelloOk.class).protocolVersion()).isEqualTo(3);
            a.begin("vol", BS, image.length, 0);
            Need need = entries(a, image);
            sendFrames(a, image, need, -1, -1);
            ErrorMessage e = a.expectErrorAndClose();
            assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME);
            assertThat(e.message()).contains("protocol version 4").contains("agreed on version 3");
        }
    }

    @Test
    void frame_ofUnprovenDuplicates_provesThemMemberByMemberAndStoresNothingNew() {
        byte[] image = image(5, BLOCKS);
        backUpInFrames("first", image);
        long before = harness.store().nextPbn();
        try (AgentDriver a = harness.agent()) {
            a.tags(AgentDriver.TagMode.WRONG).hello();
            a.begin("second", BS, image.length, 0);
            Need need = entries(a, image);
            assertThat(need.neededCount()).as("matches without proof are asked for").isEqualTo(BLOCKS);
            sendFrames(a, image, need, -1, -1);
            a.send(new Commit(image.length));
            Committed c = a.expect(Committed.class);
            assertThat(c.newBlocks()).as("the frame proved every candidate").isZero();
            assertThat(a.restore("second", 1).image()).isEqualTo(image);
        }
        assertThat(harness.store().nextPbn()).isEqualTo(before);
    }

    @Test
    void frame_holdingBadBlocksContent_repairsThemInPlaceMemberByMember() {
        byte[] image = image(6, BLOCKS);
        backUpInFrames("first", image);
        java.util.List<Long> stored = new java.util.ArrayList<>();
        harness.store().locations().forEach((pbn, logId, offset, len, fps, fpOff) -> stored.add(pbn) && stored.size() < 3);
        stored.forEach(p -> assertThat(harness.store().markDamaged(p, "bit rot (test)")).isTrue());
        long repairedBefore = harness.store().repairedBlocks();
        long before = harness.store().nextPbn();
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.begin("second", BS, image.length, 0);
            Need need = entries(a, image);
            assertThat(need.neededCount()).as("only the bad blocks are asked for").isEqualTo(3);
            sendFrames(a, image, need, -1, -1);
            a.send(new Commit(image.length));
            assertThat(a.expect(Committed.class).newBlocks()).isEqualTo(3);
            assertThat(a.restore("first", 1).image()).as("the old snapshot heals").isEqualTo(image);
        }
        assertThat(harness.store().repairedBlocks() - repairedBefore).isEqualTo(3);
        assertThat(harness.store().badBlocks().isEmpty()).isTrue();
        assertThat(harness.store().nextPbn()).as("repaired in place: no new PBN").isEqualTo(before);
    }

    /** A first backup of {@code image} to {@code volume}, every block asked for and sent in frames. */
    private void backUpInFrames(String volume, byte[] image) {
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.begin(volume, BS, image.length, 0);
            sendFrames(a, image, entries(a, image), -1, -1);
            a.send(new Commit(image.length));
            a.expect(Committed.class);
        }
    }

    private byte[] fingerprint(byte[] image, int lbn) {
        byte[] fp = new byte[32];
        hasher.fingerprint(image, lbn * BS, BS, fp, 0);
        return fp;
    }

    @Test
    void restore_sendsStoredFramesAsTheyAre_andDecodesThemForAProtocol3Agent() {
        byte[] image = image(5, BLOCKS);
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.begin("vol", BS, image.length, 0);
            sendFrames(a, image, entries(a, image), -1, -1);
            a.send(new Commit(image.length));
            a.expect(Committed.class);
            AgentDriver.Restored r = a.restore("vol", 1);
            assertThat(r.image()).isEqualTo(image);
            assertThat(r.framedBlocks()).as("every block went out inside its stored frame").isEqualTo(BLOCKS);
        }
        try (AgentDriver old = harness.agent()) {
            assertThat(old.hello(3).protocolVersion()).isEqualTo(3);
            AgentDriver.Restored r = old.restore("vol", 1);
            assertThat(r.image()).isEqualTo(image);
            assertThat(r.framedBlocks()).as("a protocol 3 agent never sees a frame").isZero();
        }
    }

    @Test
    void restore_membersOfManyFramesInShuffledOrder_eachFrameOnceAMessageAndByteIdentical() {
        byte[] image = image(6, BLOCKS);
        // the same blocks in another order: every LBN of "shuffled" is a duplicate of some member of "vol"
        byte[] shuffled = new byte[image.length];
        for (int i = 0; i < BLOCKS; i++) {
            int from = (i * 37 + 11) % BLOCKS; // 37 is prime to 64: a permutation
            System.arraycopy(image, from * BS, shuffled, i * BS, BS);
        }
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.begin("vol", BS, image.length, 0);
            sendFrames(a, image, entries(a, image), -1, -1);
            a.send(new Commit(image.length));
            a.expect(Committed.class);
            long stored = harness.store().nextPbn();
            a.begin("shuffled", BS, shuffled.length, 0);
            Need need = entries(a, shuffled);
            if (need.neededCount() > 0) {
                sendFrames(a, shuffled, need, -1, -1); // unproven duplicates: proven by their bytes, nothing new stored
            }
            a.send(new Commit(shuffled.length));
            assertThat(a.expect(Committed.class).newBlocks()).isZero();
            assertThat(harness.store().nextPbn()).isEqualTo(stored);
            AgentDriver.Restored r = a.restore("shuffled", 1);
            assertThat(r.image()).isEqualTo(shuffled);
            assertThat(r.framedBlocks()).isEqualTo(BLOCKS);
            assertThat(r.frames()).as("one message: each of the %d stored frames went once", BLOCKS / FRAME).isEqualTo(1);
        }
    }


    @Test
    void frame_notSmallerThanItsBlocks_refusedAsBadFrameAndNothingStored() {
        byte[] image = new byte[2 * BS];
        new Random(9).nextBytes(image); // incompressible: its zstd frame is a little larger than the blocks
        long before = harness.store().nextPbn();
        try (AgentDriver a = harness.agent()) {
            a.hello();
            a.begin("vol", BS, image.length, 0);
            assertThat(entries(a, image).neededCount()).isEqualTo(2);
            byte[] z = com.github.luben.zstd.Zstd.compress(image, 1);
            assertThat(z.length).isGreaterThanOrEqualTo(image.length);
            Blocks.Builder b = Blocks.builder(a.alloc(), z.length);
            b.addFrame(0, z, 0, z.length).addFrameMember(1);
            a.send(b.build());
            ErrorMessage e = a.expectErrorAndStop();
            assertThat(e.code()).isEqualTo(ErrorCode.BAD_FRAME);
            assertThat(e.message()).contains("LBN 0").contains("smaller than its blocks");
        }
        assertThat(harness.store().nextPbn()).isEqualTo(before);
    }

}
