package org.holdfast.server.engine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.time.Clock;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import org.holdfast.server.store.MetadataDb;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Routing at lookup (issue 18, "Data on workers"): the storing worker of every entry is decided right
 * after the lookup's merge ({@link DedupStream#storingWorkers}), and the record sends each entry to
 * exactly that worker. Real in-process workers (a Sungem engine each, on disk), each behind a
 * {@link Recording} that notes which entries the record requests hand it and has member id
 * {@link #MEMBER_BASE} + its number, so a storing worker named by position would show; U_segment 256.
 */
class ClusterPlacementTest {
    private static final int SEG = 256;
    /** The recording workers' member ids are this plus their number: ids, not positions, name storing workers. */
    static final long MEMBER_BASE = 100;

    @TempDir
    Path dir;

    private ClusterFingerprintIndex index;
    private final List<Recording> recorders = new ArrayList<>();

    @AfterEach
    void close() {
        if (index != null) {
            index.close();
        }
    }

    /** Passes every call to a real worker; keeps, per record request, which entries it held (by fingerprint). */
    static final class Recording extends ForwardingDedupWorker {
        /** Fingerprints (as buffers) of the entries with a PBN in the record requests since the last {@link #clear}. */
        final Map<ByteBuffer, Long> held = new HashMap<>();
        private final long member;

        Recording(LocalDedupWorker real) {
            this(real, MEMBER_BASE + real.id());
        }

        Recording(LocalDedupWorker real, long member) {
            super(real);
            this.member = member;
        }

        @Override
        public long memberId() {
            return member;
        }

        void clear() {
            held.clear();
        }

        @Override
        public CompletableFuture<Void> record(SegmentRecord r) {
            for (int i = 0; i < r.count(); i++) {
                if (r.pbns()[i] != 0) {
                    held.put(ByteBuffer.wrap(Arrays.copyOfRange(r.fps(), i * 32, i * 32 + 32)), r.pbns()[i]);
                }
            }
            return delegate.record(r);
        }
    }

    private ClusterFingerprintIndex open(int workers, ClusterMode mode, ClusterBroadcast broadcast, int homeBudget) {
        List<Recording> ws = new ArrayList<>();
        for (int i = 0; i < workers; i++) {
            ws.add(new Recording(new LocalDedupWorker(i, dir.resolve("worker-" + i), SungemFingerprintIndexTest.smallSettings(),
                    Clock.systemUTC())));
        }
        recorders.addAll(ws);
        index = new ClusterFingerprintIndex(ws, mode, broadcast, SEG, homeBudget);
        return index;
    }

    private ClusterFingerprintIndex open(int workers, ClusterBroadcast broadcast) {
        return open(workers, ClusterMode.NEAREST, broadcast, 1 << 20);
    }

    /** What a lookup found and the storing workers it announced (their numbers, from the member ids it named). */
    record Looked(byte[] fps, int n, long[] found, int[] storing) {
    }

    static Looked lookup(DedupStream s, byte[] f, int n) {
        long[] found = new long[n];
        s.lookup(f, n, found);
        long[] ids = new long[n];
        s.storingWorkers(n, ids);
        return new Looked(f, n, found, numbers(ids, n));
    }

    /** The worker numbers of member ids {@code ids[0..n)}, each checked to be a recording worker's id. */
    static int[] numbers(long[] ids, int n) {
        int[] storing = new int[n];
        for (int i = 0; i < n; i++) {
            assertThat(ids[i]).as("entry %d named by member id", i).isBetween(MEMBER_BASE, MEMBER_BASE + ClusterFingerprintIndex.MAX_WORKERS);
            storing[i] = (int) (ids[i] - MEMBER_BASE);
        }
        return storing;
    }

    /**
     * Records {@code l} (misses get PBNs {@code next} on) and checks that each entry went to exactly
     * the worker its lookup announced, with its PBN.
     */
    void recordAndCheck(DedupStream s, Looked l, long next) {
        long[] pbns = new long[l.n()];
        boolean[] isNew = new boolean[l.n()];
        for (int i = 0; i < l.n(); i++) {
            isNew[i] = l.found()[i] == 0;
            pbns[i] = isNew[i] ? next++ : l.found()[i];
        }
        record(s, l, pbns, isNew);
    }

    void record(DedupStream s, Looked l, long[] pbns, boolean[] isNew) {
        recorders.forEach(Recording::clear);
        s.record(l.fps(), l.n(), pbns, isNew);
        for (int i = 0; i < l.n(); i++) {
            ByteBuffer fp = ByteBuffer.wrap(Arrays.copyOfRange(l.fps(), i * 32, i * 32 + 32));
            for (Recording w : recorders) {
                Long got = w.held.get(fp);
                if (w.id() == l.storing()[i]) {
                    assertThat(got).as("entry %d on its storing worker %d", i, w.id()).isEqualTo(pbns[i]);
                } else {
                    assertThat(got).as("entry %d on worker %d, not its storing worker %d", i, w.id(), l.storing()[i]).isNull();
                }
            }
        }
    }

    /** Looks up and records {@code f} on a new stream; returns the lookup. */
    Looked backup(byte[] f, int n, long next) {
        try (DedupStream s = index.openStream("v")) {
            Looked l = lookup(s, f, n);
            recordAndCheck(s, l, next);
            return l;
        }
    }

    static byte[] concat(byte[]... parts) {
        int len = 0;
        for (byte[] p : parts) {
            len += p.length;
        }
        byte[] out = new byte[len];
        int at = 0;
        for (byte[] p : parts) {
            System.arraycopy(p, 0, out, at, p.length);
            at += p.length;
        }
        return out;
    }

    static byte[] part(byte[] f, int from, int to) {
        return Arrays.copyOfRange(f, from * 32, to * 32);
    }

    /** Segment A (PBNs 1..256) stored on worker 0 and B (PBNs 1001..1256) on worker 1, each the least loaded when stored. */
    byte[][] storeAandB() {
        byte[] a = FingerprintIndexContractTest.fps(1, SEG);
        byte[] b = FingerprintIndexContractTest.fps(2, SEG);
        assertThat(backup(a, SEG, 1).storing()).as("A on the least loaded").containsOnly(0);
        assertThat(backup(b, SEG, 1001).storing()).as("B on the least loaded then").containsOnly(1);
        return new byte[][] {a, b};
    }

    /** The worker holding a PBN of {@link #storeAandB}. */
    static int holder(long pbn) {
        return pbn <= SEG ? 0 : 1;
    }

    static long count(long[] found, int from, int to) {
        return Arrays.stream(found, from, to).filter(p -> p > 0).count();
    }

    @ParameterizedTest
    @EnumSource(ClusterBroadcast.class)
    void storingWorkers_missesAfterAResolvedStretch_goToItsWorkerAndTheRecordSendsThemThere(ClusterBroadcast broadcast) {
        open(4, broadcast);
        byte[][] ab = storeAandB();
        byte[] x = concat(part(ab[0], 0, 128), FingerprintIndexContractTest.fps(10, 128));
        try (DedupStream s = index.openStream("w")) {
            Looked l = lookup(s, x, SEG);
            assertThat(count(l.found(), 0, 128)).as("A's half found").isGreaterThan(100);
            assertThat(count(l.found(), 128, SEG)).as("new half").isZero();
            assertThat(l.storing()).as("every entry beside A, on worker 0").containsOnly(0);
            recordAndCheck(s, l, 5000);
        }
        assertThat(index.routingCounts()[1]).as("misses routed to the nearest").isGreaterThanOrEqualTo(128);
    }

    @ParameterizedTest
    @EnumSource(ClusterBroadcast.class)
    void storingWorkers_missesBeforeAResolvedStretch_goToTheWorkerAfterThem(ClusterBroadcast broadcast) {
        open(4, broadcast);
        byte[][] ab = storeAandB();
        // new, B's second quarter, new, A's last quarter: the leading misses take B's worker (after),
        // the middle ones B's too (before them)
        byte[] x = concat(FingerprintIndexContractTest.fps(11, 64), part(ab[1], 64, 128), FingerprintIndexContractTest.fps(12, 64),
                part(ab[0], 192, 256));
        try (DedupStream s = index.openStream("w")) {
            Looked l = lookup(s, x, SEG);
            assertThat(count(l.found(), 64, 128)).as("B's quarter found").isGreaterThan(32);
            assertThat(count(l.found(), 192, 256)).as("A's quarter found").isGreaterThan(32);
            for (int i = 0; i < SEG; i++) {
                if (l.found()[i] > 0) {
                    assertThat(l.storing()[i]).as("resolved entry %d on the worker that resolved it", i).isEqualTo(holder(l.found()[i]));
                }
            }
            assertThat(Arrays.copyOfRange(l.storing(), 0, 64)).as("leading misses: the worker after them").containsOnly(1);
            assertThat(Arrays.copyOfRange(l.storing(), 128, 192)).as("middle misses: the worker before them").containsOnly(1);
            recordAndCheck(s, l, 5000);
        }
    }

    @Test
    void storingWorkers_segmentWithNothingResolved_goesToTheLeastLoadedHomeWhileAnotherSegmentStaysBesideItsAnchor() {
        open(4, ClusterBroadcast.FULL);
        byte[][] ab = storeAandB();
        // two input segments in one call: A again, then all new
        byte[] x = concat(ab[0], FingerprintIndexContractTest.fps(13, SEG));
        try (DedupStream s = index.openStream("w")) {
            Looked l = lookup(s, x, 2 * SEG);
            assertThat(count(l.found(), SEG, 2 * SEG)).isZero();
            assertThat(Arrays.copyOfRange(l.storing(), 0, SEG)).as("A's segment").containsOnly(0);
            assertThat(Arrays.copyOfRange(l.storing(), SEG, 2 * SEG)).as("new segment: home, the least loaded").containsOnly(2);
            recordAndCheck(s, l, 5000);
        }
        assertThat(index.routingCounts()[2]).as("routed home: A, B and the new segment").isEqualTo(3L * SEG);
        assertThat(storedPerWorker()).containsExactly(SEG, SEG, SEG, 0);
    }

    long[] storedPerWorker() {
        return index.workerLoads().stream().mapToLong(DedupLoad::storedEntries).toArray();
    }

    @Test
    void storingWorkers_homeBudgetSpent_nextHomeIsTheLeastLoadedAtThatLookup() {
        // a budget of 300: each home takes two segments of 256 (the second overdraws it), then the next is picked
        open(4, ClusterMode.NEAREST, ClusterBroadcast.FULL, 300);
        int[] homes = new int[8];
        try (DedupStream s = index.openStream("v")) {
            for (int k = 0; k < 8; k++) {
                Looked l = lookup(s, FingerprintIndexContractTest.fps(100 + k, SEG), SEG);
                assertThat(l.storing()).as("segment %d on one worker", k).containsOnly(l.storing()[0]);
                homes[k] = l.storing()[0];
                recordAndCheck(s, l, 1 + k * SEG);
            }
        }
        assertThat(homes).containsExactly(0, 0, 1, 1, 2, 2, 3, 3);
        assertThat(storedPerWorker()).containsExactly(2 * SEG, 2 * SEG, 2 * SEG, 2 * SEG);
        assertThat(index.routingCounts()[2]).isEqualTo(8L * SEG);
    }

    @Test
    void record_lookupsRecordedOutOfOrder_eachFollowsItsOwnLookupsPlacement() {
        open(4, ClusterBroadcast.FULL);
        byte[][] ab = storeAandB();
        try (DedupStream s = index.openStream("w")) {
            Looked beside = lookup(s, concat(part(ab[1], 0, 128), FingerprintIndexContractTest.fps(14, 128)), SEG);
            Looked alone = lookup(s, FingerprintIndexContractTest.fps(15, SEG), SEG);
            assertThat(beside.storing()).containsOnly(1);
            assertThat(alone.storing()).containsOnly(2);
            long sent = index.entriesSent()[0];
            recordAndCheck(s, alone, 5000);
            recordAndCheck(s, beside, 6000);
            assertThat(index.entriesSent()[0]).as("no lookup broadcast again").isEqualTo(sent);
        }
    }

    @Test
    void record_mergeDroppedPastTheBound_looksUpAgainAndSendsToTheSameWorkers() {
        open(4, ClusterBroadcast.FULL);
        byte[][] ab = storeAandB();
        byte[] x = concat(part(ab[0], 0, 128), FingerprintIndexContractTest.fps(16, 128));
        try (DedupStream s = index.openStream("w")) {
            Looked l = lookup(s, x, SEG);
            assertThat(l.storing()).containsOnly(0);
            // as many later lookups as the merges kept: x's is dropped (they all go home, worker 2)
            for (int k = 0; k < SavedMerges.MAX_LOOKUPS; k++) {
                s.lookup(FingerprintIndexContractTest.fps(100_000 + k, 1), 1, new long[1]);
            }
            long[] last = new long[1];
            s.storingWorkers(1, last);
            assertThat(numbers(last, 1)).containsExactly(2);
            long sent = index.entriesSent()[0];
            recordAndCheck(s, l, 5000);
            assertThat(index.entriesSent()[0] - sent).as("x broadcast again to 4 workers").isEqualTo(4L * SEG);
        }
        try (DedupStream s = index.openStream("again")) {
            Looked again = lookup(s, x, SEG);
            assertThat(again.found()).as("learnt by the record").doesNotContain(0L);
            assertThat(again.storing()).containsOnly(0);
        }
    }

    @Test
    void record_resolvedEntryStoredAnew_goesToTheWorkerThatResolvedIt() {
        // the reference guard refused a match, the block was bad, or an unproven candidate's payload differed
        open(4, ClusterBroadcast.FULL);
        byte[][] ab = storeAandB();
        try (DedupStream s = index.openStream("w")) {
            Looked l = lookup(s, ab[0], SEG);
            assertThat(l.found()).doesNotContain(0L);
            assertThat(l.storing()).containsOnly(0);
            long[] pbns = l.found().clone();
            boolean[] isNew = new boolean[SEG];
            for (int i = 0; i < 10; i++) {
                pbns[i] = 9000 + i;
                isNew[i] = true;
            }
            record(s, l, pbns, isNew);
        }
        assertThat(recorders.get(0).held).as("the new copies went to worker 0").containsValues(9000L, 9009L);
        long[] found = new long[SEG];
        try (DedupStream s = index.openStream("again")) {
            s.lookup(ab[0], SEG, found);
        }
        assertThat(Arrays.stream(found).allMatch(p -> p > 0 && (p <= SEG || p >= 9000))).as("still a worker-0 answer for every entry")
                .isTrue();
        assertThat(storedPerWorker()).as("nothing new on the other workers").containsExactly(SEG, SEG, 0, 0);
    }

    @Test
    void storingWorkers_hashMode_isTheHashOwnerOfEveryEntryMissOrResolved() {
        open(4, ClusterMode.HASH, ClusterBroadcast.FULL, 1 << 20);
        byte[] f = FingerprintIndexContractTest.fps(17, 300);
        Looked first = backup(f, 300, 1);
        byte[] g = concat(part(f, 0, 150), FingerprintIndexContractTest.fps(18, 150));
        try (DedupStream s = index.openStream("w")) {
            Looked l = lookup(s, g, 300);
            assertThat(count(l.found(), 0, 150)).as("the stored half found").isPositive();
            for (int i = 0; i < 300; i++) {
                assertThat(l.storing()[i]).as("entry %d", i).isEqualTo(HashSplitDedupStream.workerOf(g, i, 4));
            }
            assertThat(Arrays.copyOfRange(l.storing(), 0, 150)).containsExactly(Arrays.copyOfRange(first.storing(), 0, 150));
            recordAndCheck(s, l, 5000);
        }
        assertThat(first.storing()).as("spread over the workers").contains(0, 1, 2, 3);
    }

    @Test
    void storingWorkers_standaloneAndShadowedStreams_answerNoWorkerOrThePrimarys() {
        byte[] f = FingerprintIndexContractTest.fps(19, 64);
        long[] into = new long[70];
        Arrays.fill(into, 7);
        try (SungemFingerprintIndex sungem = new SungemFingerprintIndex(dir.resolve("sungem"), SungemFingerprintIndexTest.smallSettings(),
                Clock.systemUTC()); DedupStream s = sungem.openStream("v")) {
            s.lookup(f, 64, new long[64]);
            s.storingWorkers(64, into);
        }
        assertThat(Arrays.copyOfRange(into, 0, 64)).containsOnly(DedupStream.NO_WORKER);
        assertThat(into[64]).as("past count untouched").isEqualTo(7L);
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog"));
                ExactFingerprintIndex exact = new ExactFingerprintIndex(db);
                DedupStream s = exact.openStream("v")) {
            Arrays.fill(into, 7);
            s.lookup(f, 64, new long[64]);
            s.storingWorkers(64, into);
            assertThat(Arrays.copyOfRange(into, 0, 64)).containsOnly(DedupStream.NO_WORKER);
        }
        open(4, ClusterBroadcast.FULL);
        storeAandB();
        try (MetadataDb db = MetadataDb.open(dir.resolve("catalog2"));
                DedupStream s = new ShadowedFingerprintIndex(index, new ExactFingerprintIndex(db)).openStream("v")) {
            Looked l = lookup(s, FingerprintIndexContractTest.fps(20, SEG), SEG);
            assertThat(l.storing()).as("the cluster's home").containsOnly(2);
        }
    }

    /** PBNs {@code next..} for {@code n} new entries. */
    static long[] newPbns(int n, long next) {
        long[] p = new long[n];
        for (int i = 0; i < n; i++) {
            p[i] = next + i;
        }
        return p;
    }

    static boolean[] allNew(int n) {
        boolean[] b = new boolean[n];
        Arrays.fill(b, true);
        return b;
    }

    @Test
    void record_storersGivenWithoutASavedMerge_eachEntryGoesToTheWorkerNamedNotToANewPlacement() {
        open(4, ClusterBroadcast.FULL);
        byte[] f = FingerprintIndexContractTest.fps(22, SEG);
        long[] storers = new long[SEG];
        Arrays.fill(storers, 0, 200, MEMBER_BASE + 3); // a new placement would send them home: the least loaded, worker 0
        Arrays.fill(storers, 200, SEG, 999); // a worker this index does not have (the lookup ran over others)
        try (DedupStream s = index.openStream("never-looked-up")) {
            recorders.forEach(Recording::clear);
            s.record(f, SEG, newPbns(SEG, 7000), allNew(SEG), storers);
        }
        assertThat(recorders.get(3).held).as("worker 3 holds what the caller stored there").hasSize(200)
                .containsValues(7000L, 7199L).doesNotContainValue(7200L);
        for (int w = 0; w < 3; w++) {
            assertThat(recorders.get(w).held).as("worker %d learns nothing", w).isEmpty();
        }
    }

    @Test
    void storingWorkersAndRecord_indexWithoutTheLowestMember_nameAndFindWorkersByMemberIdNotByNumber() {
        // members 101 and 102 numbered 0 and 1 (as when member 100 dropped): a number is not an id
        List<Recording> two = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            two.add(new Recording(new LocalDedupWorker(i, dir.resolve("rest-" + i), SungemFingerprintIndexTest.smallSettings(),
                    Clock.systemUTC()), MEMBER_BASE + 1 + i));
        }
        try (ClusterFingerprintIndex rest = new ClusterFingerprintIndex(two, ClusterMode.NEAREST, ClusterBroadcast.FULL, SEG, 1 << 20)) {
            byte[] f = FingerprintIndexContractTest.fps(23, SEG);
            try (DedupStream s = rest.openStream("v")) {
                Looked l = lookup(s, f, SEG);
                assertThat(l.storing()).as("named by member id: 101 (the least loaded, number 0), never 100").containsOnly(1);
                long[] storers = new long[SEG];
                Arrays.fill(storers, 0, 100, MEMBER_BASE + 2);
                Arrays.fill(storers, 100, SEG, MEMBER_BASE); // member 100: not in this index
                s.record(f, SEG, newPbns(SEG, 8000), allNew(SEG), storers);
            }
            assertThat(two.get(1).held).as("member 102 holds the entries named for it").hasSize(100).containsValues(8000L, 8099L);
            assertThat(two.get(0).held).as("number 0 is member 101, not 100: it learns nothing").isEmpty();
        }
    }

    @Test
    void record_hashModeStorerIsNotTheHashOwner_recordedNowhere() {
        open(4, ClusterMode.HASH, ClusterBroadcast.FULL, 1 << 20);
        byte[] f = FingerprintIndexContractTest.fps(24, 64);
        long[] storers = new long[64];
        for (int i = 0; i < 64; i++) {
            int owner = HashSplitDedupStream.workerOf(f, i, 4);
            storers[i] = MEMBER_BASE + (i < 10 ? (owner + 1) % 4 : owner);
        }
        try (DedupStream s = index.openStream("v")) {
            recorders.forEach(Recording::clear);
            s.record(f, 64, newPbns(64, 9000), allNew(64), storers);
        }
        long held = recorders.stream().mapToLong(r -> r.held.size()).sum();
        assertThat(held).as("the 54 entries stored on their hash owner").isEqualTo(54);
        for (Recording r : recorders) {
            assertThat(r.held.values()).as("none of the 10 stored elsewhere").allMatch(p -> p >= 9010);
        }
    }

    @Test
    void newIndex_twoWorkersWithOneMemberIdOrTheNoWorkerId_refused() {
        List<DedupWorker> ws = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            ws.add(new ForwardingDedupWorker(new LocalDedupWorker(i, dir.resolve("same-" + i), SungemFingerprintIndexTest.smallSettings(),
                    Clock.systemUTC())) {
                @Override
                public long memberId() {
                    return 7;
                }
            });
        }
        try {
            assertThatThrownBy(() -> new ClusterFingerprintIndex(ws, ClusterMode.NEAREST, SEG, 1))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("the same member id 7");
            DedupWorker none = new ForwardingDedupWorker(ws.get(0)) {
                @Override
                public long memberId() {
                    return DedupStream.NO_WORKER;
                }
            };
            assertThatThrownBy(() -> new ClusterFingerprintIndex(List.of(none), ClusterMode.NEAREST, SEG, 1))
                    .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("means no worker");
        } finally {
            ws.forEach(DedupWorker::close);
        }
    }

    @Test
    void storingWorkers_noLookupOrAnotherCountOrShortArray_refused() {
        open(2, ClusterBroadcast.FULL);
        try (DedupStream s = index.openStream("v")) {
            assertThatThrownBy(() -> s.storingWorkers(4, new long[4])).isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("no completed lookup");
            s.lookup(FingerprintIndexContractTest.fps(21, 4), 4, new long[4]);
            assertThatThrownBy(() -> s.storingWorkers(5, new long[5])).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("the last lookup had 4 entries, not 5");
            assertThatThrownBy(() -> s.storingWorkers(4, new long[3])).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("do not fit an array of 3");
        }
    }
}
