package org.holdfast.server.ingest.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.netty.buffer.ByteBuf;
import io.netty.channel.embedded.EmbeddedChannel;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import org.holdfast.common.id.PbnRange;
import org.holdfast.common.protocol.CountsCheck;
import org.holdfast.common.protocol.CountsChecked;
import org.holdfast.common.protocol.ErrorCode;
import org.holdfast.common.protocol.ErrorMessage;
import org.holdfast.common.protocol.FrameDecoder;
import org.holdfast.common.protocol.FrameEncoder;
import org.holdfast.common.protocol.GcDelta;
import org.holdfast.common.protocol.MessageType;
import org.holdfast.gc.bosc.BoscPipeline;
import org.holdfast.gc.bosc.BoscSettings;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.FormatVersions;
import org.holdfast.server.store.FsyncPolicy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The worker's end of the online counts check over real range data and GC metadata on disk: a span
 * equal to its counts is clean; each kind of difference is found and named with its direction; the
 * check changes nothing; a span outside its range is refused and the link stays; malformed or
 * oversized frames are refused with one ERROR before anything runs.
 */
class CountsCheckServiceTest {
    private static final PbnRange RANGE = new PbnRange(1L << 40, (1L << 40) + (1L << 20));

    @TempDir
    Path dir;
    private WorkerRangeData data;
    private WorkerGcMetadata gc;
    private long[] pbn;

    @BeforeEach
    void open() {
        data = new WorkerRangeData(dir.resolve("range-data"), new DataStore.Settings(dir.resolve("unused"), 1L << 20, FsyncPolicy.COMMIT, 64, 0));
        gc = new WorkerGcMetadata(dir.resolve("range-data").resolve("gc"), BoscSettings.defaults().withCommitters(1), Duration.ofHours(1),
                Clock.systemUTC());
        DataStore store = data.claim(RANGE);
        gc.claim(RANGE);
        pbn = new long[3];
        byte[] block = new byte[4096];
        for (int i = 0; i < pbn.length; i++) {
            block[0] = (byte) i;
            byte[] fp = new byte[32];
            fp[0] = (byte) i;
            pbn[i] = store.append(fp, 0, block, 0, block.length, FormatVersions.CODEC_RAW, block.length);
        }
        store.sync();
        // what the master routed: one reference to each block, a pin on the last
        gc.log(new GcDelta(1, 0, 4, new byte[] {GcDelta.RC_ADD, GcDelta.RC_ADD, GcDelta.RC_ADD, GcDelta.PIN_ADD},
                new long[] {pbn[0], pbn[1], pbn[2], pbn[2]}, new long[] {1, 1, 1, 1}), RANGE);
    }

    @AfterEach
    void close() {
        data.close();
        gc.close();
    }

    private CountsCheckService service() {
        return new CountsCheckService(gc, data, RANGE);
    }

    private static CountsCheck span(long id, long[] pbns, int[] rc, int[] pins) {
        return new CountsCheck(id, RANGE.first(), RANGE.first() + CountsCheck.MAX_SPAN, 1_000, pbns, rc, pins, new long[pbns.length]);
    }

    @Test
    void check_countsAsTheCatalogs_cleanAndNothingChanged() {
        BoscPipeline p = gc.pipeline();
        long logged = p.updatesLogged();
        long lastOp = p.lastOpId();
        CountsChecked a = service().serve(span(1, pbn, new int[] {1, 1, 1}, new int[] {0, 0, 1}));
        assertThat(a.status()).isEqualTo(CountsChecked.COMPARED);
        assertThat(a.compared()).as("the three referenced blocks").isEqualTo(3);
        assertThat(new long[] {a.rcBelow(), a.rcAbove(), a.pinsDiffer(), a.notHeld()}).containsOnly(0);
        assertThat(a.samplePbns()).isEmpty();
        assertThat(p.updatesLogged()).as("the check logs nothing").isEqualTo(logged);
        assertThat(p.lastOpId()).isEqualTo(lastOp);
    }

    @Test
    void check_countsAlteredEachWay_foundWithTheirDirectionAndTheGmaKept() {
        long lost = pbn[2] + 1000; // referenced by the catalog, never stored here
        CountsCheck altered = span(2, new long[] {pbn[0], pbn[2], lost}, new int[] {2, 1, 1}, new int[] {0, 0, 0});
        CountsChecked a = service().serve(altered);
        // pbn[0]: the worker counts 1 of the catalog's 2 (under-count: a sweep could free it too early);
        // pbn[1]: the catalog counts none, the worker 1 (over-count: a leak); pbn[2]: pinned only on the worker;
        // lost: the catalog's 1 against nothing, and the block is not held
        assertThat(a.rcBelow()).isEqualTo(2);
        assertThat(a.rcAbove()).isEqualTo(1);
        assertThat(a.pinsDiffer()).isEqualTo(1);
        assertThat(a.notHeld()).isEqualTo(1);
        assertThat(a.compared()).isEqualTo(4);
        assertThat(a.samplePbns()).containsExactly(pbn[0], pbn[1], pbn[2], lost, lost);
        assertThat(a.sampleKinds()).containsExactly(CountsChecked.KIND_RC_BELOW, CountsChecked.KIND_RC_ABOVE, CountsChecked.KIND_PINS,
                CountsChecked.KIND_RC_BELOW, CountsChecked.KIND_NOT_HELD);
        // the worker's own counts are as they were: the catalog's true counts still compare clean
        CountsChecked again = service().serve(span(3, pbn, new int[] {1, 1, 1}, new int[] {0, 0, 1}));
        assertThat(new long[] {again.rcBelow(), again.rcAbove(), again.pinsDiffer(), again.notHeld()}).containsOnly(0);
    }

    @Test
    void check_rangeStoreNotOpen_refusedRatherThanEveryBlockCountedHeld() {
        // as after its open was refused (a range taken over by another node, a bucket that could not be listed): no store to look in
        data.close();
        long lost = pbn[2] + 1000; // referenced by the catalog, never stored here
        CountsChecked a = service().serve(span(6, new long[] {pbn[0], pbn[1], pbn[2], lost}, new int[] {1, 1, 1, 1},
                new int[] {0, 0, 1, 0}));
        assertThat(a.status()).as("a check that cannot look blocks up must not answer 'all held'").isEqualTo(CountsChecked.REFUSED);
        assertThat(a.message()).contains("range store").contains("nothing was compared");
    }

    @Test
    void check_expiredUnreferencedBlockNotHeld_notALoss() {
        long swept = pbn[2] + 5; // only an expired snapshot still maps it: a sweep may have freed it
        CountsCheck c = new CountsCheck(4, RANGE.first(), RANGE.first() + CountsCheck.MAX_SPAN, 1_000, new long[] {pbn[0], pbn[1], pbn[2],
            swept}, new int[] {1, 1, 1, 0}, new int[] {0, 0, 1, 0}, new long[] {0, 0, 0, 999});
        assertThat(service().serve(c).notHeld()).isZero();
        CountsCheck unexpired = new CountsCheck(5, c.first(), c.limit(), 1_000, c.pbns(), c.rc(), c.pins(), new long[] {0, 0, 0, 1_001});
        assertThat(service().serve(unexpired).notHeld()).as("kept by its expiry: it must be held").isEqualTo(1);
    }

    @Test
    void check_spanOutsideTheRange_refusedAndTheLinkStays() {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(), new FrameEncoder(), service());
        CountsCheck outside = new CountsCheck(6, RANGE.limit(), RANGE.limit() + 10, 1_000, new long[0], new int[0], new int[0], new long[0]);
        CountsChecked a = (CountsChecked) DedupFramesBadInputTest.served(ch, outside);
        assertThat(a.status()).isEqualTo(CountsChecked.REFUSED);
        assertThat(a.requestId()).isEqualTo(6);
        assertThat(a.message()).contains("not all in this worker's range " + RANGE).contains("nothing was compared");
        assertThat(ch.isOpen()).isTrue();
        ch.finishAndReleaseAll();
    }

    private void refused(ByteBuf bytes, ErrorCode code, String message) {
        EmbeddedChannel ch = new EmbeddedChannel(new FrameDecoder(), new FrameEncoder(), service());
        ErrorMessage e = WorkerEndFrames.errorAndClose(ch, bytes);
        assertThat(e.code()).isEqualTo(code);
        assertThat(e.message()).contains(message);
    }

    @Test
    void check_oversizedOrMalformedFrames_refusedWithOneErrorBeforeAnythingRuns() {
        int max = 36 + 24 * CountsCheck.MAX_RECORDS;
        refused(WorkerEndFrames.header(MessageType.COUNTS_CHECK, max + 24).writeLong(1), ErrorCode.LIMIT_EXCEEDED, "over its limit");
        refused(WorkerEndFrames.header(MessageType.COUNTS_CHECK, 36 + 24).writeLong(1).writeLong(RANGE.first())
                .writeLong(RANGE.first() + 10).writeLong(0).writeInt(2).writeLong(RANGE.first()).writeInt(1).writeInt(0).writeLong(0),
                ErrorCode.BAD_FRAME, "says 2 records");
        refused(WorkerEndFrames.header(MessageType.COUNTS_CHECK, 36 + 48).writeLong(1).writeLong(RANGE.first())
                .writeLong(RANGE.first() + 10).writeLong(0).writeInt(2).writeLong(RANGE.first() + 5).writeInt(1).writeInt(0).writeLong(0)
                .writeLong(RANGE.first() + 5).writeInt(1).writeInt(0).writeLong(0), ErrorCode.BAD_FRAME, "not ascending");
        refused(WorkerEndFrames.header(MessageType.COUNTS_CHECK, 36).writeLong(1).writeLong(RANGE.first())
                .writeLong(RANGE.first() + CountsCheck.MAX_SPAN + 1).writeLong(0).writeInt(0), ErrorCode.BAD_FRAME, "wider than");
    }

    /** A COUNTS_CHECKED body: fixed part, then {@code samples} (pbn 1, {@code kind}) and an empty message. */
    private static ByteBuf checked(int status, long count, int samples, int kind) {
        ByteBuf b = WorkerEndFrames.header(MessageType.COUNTS_CHECKED, 53 + 9L * samples).writeLong(1).writeByte(status).writeLong(count)
                .writeLong(0).writeLong(0).writeLong(0).writeLong(0).writeShort(samples);
        for (int i = 0; i < samples; i++) {
            b.writeLong(1).writeByte(kind);
        }
        return b.writeShort(0);
    }

    @Test
    void answers_badValues_refusedByTheMastersDecoder() {
        WorkerEndFrames.answerRefused(checked(2, 0, 0, 0), ErrorCode.BAD_FRAME, "COUNTS_CHECKED status 2 is unknown");
        WorkerEndFrames.answerRefused(checked(0, -1, 0, 0), ErrorCode.BAD_FRAME, "has a count above 2^63");
        WorkerEndFrames.answerRefused(checked(0, 0, 1, 5), ErrorCode.BAD_FRAME, "sample kind 5 is unknown");
        WorkerEndFrames.answerRefused(checked(0, 0, 17, 1), ErrorCode.BAD_FRAME, "names 17 samples (at most 16)");
    }
}
