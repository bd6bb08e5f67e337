package org.holdfast.server.catalog;

import java.nio.BufferUnderflowException;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import org.holdfast.server.store.CheckedIterator;
import org.holdfast.server.store.CorruptDataException;
import org.holdfast.server.store.MetadataBatch;
import org.holdfast.server.store.MetadataDb;
import org.rocksdb.ColumnFamilyHandle;

/**
 * The record of agent connections in the catalog (column family {@code agents}): one entry per
 * API token that connected to the ingest port. Key: the token id (UTF-8). Value: a version byte
 * first, then who connected from where with which agent, first and last contact, the last
 * backup result of each volume, and (record version 2) the last runs the agent's daemon reported
 * ({@link #encode}; docs/architecture.md has the byte table). Version 1 records read with no runs.
 *
 * <p>Bounded: at most {@link #MAX_RESULTS} volumes per token (the least recently backed up is
 * dropped), at most {@link #MAX_RUNS_PER_VOLUME} reported runs per volume for at most {@link #MAX_RESULTS}
 * volumes, text fields cut to {@link #MAX_FIELD_BYTES}, at most {@link #MAX_AGENTS} tokens (a new
 * one replaces the one with the oldest contact). Writes are unsynced (the WAL keeps them; a crash
 * loses at most the last ones) and serialised on this object: each is a read and a write of one entry.
 */
public final class AgentStore {
    /** The record version written; version 1 (no runs) is still read. */
    static final int VERSION = 2;
    /** Longest stored text field, in UTF-8 bytes. */
    public static final int MAX_FIELD_BYTES = 512;
    /** Volumes whose last result is kept per token. */
    public static final int MAX_RESULTS = 64;
    /** Daemon runs kept per volume and token (most recent first). */
    public static final int MAX_RUNS_PER_VOLUME = 10;
    /** Tokens recorded at most. */
    public static final int MAX_AGENTS = 1000;

    /** The last backup of one volume: ok or the error's message, bytes received, and when it ended. */
    public record VolumeResult(String volume, boolean ok, String message, long bytes, long atMillis) {
    }

    /**
     * One run of the agent daemon's backup of a volume, as the daemon reported it (RUN_REPORT): its
     * trigger ({@code schedule}, {@code run-now}, {@code restart}), start and end, result
     * ({@code succeeded}, {@code failed}, {@code interrupted}), the agent's exit code, backup tries,
     * bytes read and sent, the committed snapshot's sequence (0 for none), the snapshot's consistency
     * code, the daemon's message, the reporting agent's version, and when the server received it.
     */
    public record Run(String volume, String trigger, long startMillis, long endMillis, String result, int exitCode,
                      int attempts, long bytesRead, long bytesSent, long snapshotSequence, int consistency, String message,
                      String agentVersion, long receivedMillis) {
    }

    /**
     * One token's connections: its name, the address and agent (name and version, empty if the
     * agent did not say) of the last connection, first and last contact, connections counted, the
     * last result per volume (most recent first), and the daemon's last runs (most recent first).
     */
    public record Agent(String tokenId, String tokenName, String remoteAddress, String agentName, String agentVersion,
                        long firstContactMillis, long lastContactMillis, long connections, List<VolumeResult> results,
                        List<Run> runs) {
        public Agent {
            results = List.copyOf(results);
            runs = List.copyOf(runs);
        }

        /** A token's record without daemon runs. */
        public Agent(String tokenId, String tokenName, String remoteAddress, String agentName, String agentVersion,
                     long firstContactMillis, long lastContactMillis, long connections, List<VolumeResult> results) {
            this(tokenId, tokenName, remoteAddress, agentName, agentVersion, firstContactMillis, lastContactMillis, connections,
                    results, List.of());
        }
    }

    private final MetadataDb db;
    private final ColumnFamilyHandle cf;

    public AgentStore(MetadataDb db) {
        this.db = db;
        this.cf = db.handle(MetadataDb.Column.AGENTS);
    }

    /** Records a connection of token {@code tokenId} at {@code atMillis}. */
    public synchronized void contact(String tokenId, String tokenName, String remoteAddress, String agentName,
                                     String agentVersion, long atMillis) {
        Optional<Agent> old = get(tokenId);
        if (old.isEmpty()) {
            makeRoom();
        }
        Agent a = old.map(o -> new Agent(tokenId, tokenName, remoteAddress, agentName, agentVersion, o.firstContactMillis(),
                        atMillis, o.connections() + 1, o.results(), o.runs()))
                .orElseGet(() -> new Agent(tokenId, tokenName, remoteAddress, agentName, agentVersion, atMillis, atMillis, 1,
                        List.of()));
        db.put(cf, key(tokenId), encode(a));
    }

    /** Records the end of a backup of {@code result.volume()} by token {@code tokenId} (ignored if the token never connected). */
    public synchronized void result(String tokenId, VolumeResult result) {
        Optional<Agent> old = get(tokenId);
        if (old.isEmpty()) {
            return;
        }
        Agent o = old.get();
        List<VolumeResult> results = new ArrayList<>(o.results().size() + 1);
        results.add(result);
        for (VolumeResult r : o.results()) {
            if (!r.volume().equals(result.volume()) && results.size() < MAX_RESULTS) {
                results.add(r);
            }
        }
        db.put(cf, key(tokenId), encode(new Agent(o.tokenId(), o.tokenName(), o.remoteAddress(), o.agentName(),
                o.agentVersion(), o.firstContactMillis(), Math.max(o.lastContactMillis(), result.atMillis()),
                o.connections(), results, o.runs())));
    }

    /**
     * Records a run the daemon of token {@code tokenId} reported; false (nothing written) if the
     * token never connected. Keeps the newest {@link #MAX_RUNS_PER_VOLUME} of each volume, for the
     * {@link #MAX_RESULTS} volumes reported most recently.
     */
    public synchronized boolean run(String tokenId, Run run) {
        Optional<Agent> old = get(tokenId);
        if (old.isEmpty()) {
            return false;
        }
        Agent o = old.get();
        List<Run> runs = new ArrayList<>(o.runs().size() + 1);
        runs.add(run);
        java.util.Map<String, Integer> perVolume = new java.util.HashMap<>();
        perVolume.put(run.volume(), 1);
        for (Run r : o.runs()) {
            int n = perVolume.getOrDefault(r.volume(), 0);
            boolean newVolume = n == 0;
            if (n < MAX_RUNS_PER_VOLUME && (!newVolume || perVolume.size() < MAX_RESULTS)) {
                perVolume.put(r.volume(), n + 1);
                runs.add(r);
            }
        }
        db.put(cf, key(tokenId), encode(new Agent(o.tokenId(), o.tokenName(), o.remoteAddress(), o.agentName(),
                o.agentVersion(), o.firstContactMillis(), Math.max(o.lastContactMillis(), run.receivedMillis()),
                o.connections(), o.results(), runs)));
        return true;
    }

    public Optional<Agent> get(String tokenId) {
        byte[] v = db.get(cf, key(tokenId));
        return v == null ? Optional.empty() : Optional.of(decode(tokenId, v, db.path()));
    }

    /** Every recorded token, most recent contact first. */
    public List<Agent> list() {
        List<Agent> out = new ArrayList<>();
        try (CheckedIterator it = db.iterator(cf)) {
            for (it.seekToFirst(); it.isValid(); it.next()) {
                out.add(decode(new String(it.key(), StandardCharsets.UTF_8), it.value(), db.path()));
            }
        }
        out.sort(Comparator.comparingLong(Agent::lastContactMillis).reversed());
        return out;
    }

    private void makeRoom() {
        List<Agent> all = list();
        if (all.size() < MAX_AGENTS) {
            return;
        }
        try (MetadataBatch b = new MetadataBatch()) {
            for (Agent a : all.subList(MAX_AGENTS - 1, all.size())) {
                db.delete(b, cf, key(a.tokenId()));
            }
            db.write(b, false);
        }
    }

    private static byte[] key(String tokenId) {
        return tokenId.getBytes(StandardCharsets.UTF_8);
    }

    /**
     * u8 version 2, str tokenName, str remoteAddress, str agentName, str agentVersion, u64 firstContact,
     * u64 lastContact, u64 connections, u16 n, n × (str volume, u8 ok, str message, u64 bytes, u64 at),
     * u16 m, m × (str volume, str trigger, u64 start, u64 end, str result, u8 exitCode, u16 attempts,
     * u64 bytesRead, u64 bytesSent, u64 snapshotSequence, u8 consistency, str message, str agentVersion,
     * u64 received); str = u16 length + UTF-8. Version 1 ends after the results.
     */
    static byte[] encode(Agent a) {
        List<byte[]> strs = new ArrayList<>();
        int size = 1 + 3 * 8 + 2;
        for (String s : new String[] {a.tokenName(), a.remoteAddress(), a.agentName(), a.agentVersion()}) {
            strs.add(cut(s));
        }
        for (VolumeResult r : a.results()) {
            strs.add(cut(r.volume()));
            strs.add(cut(r.message()));
            size += 1 + 8 + 8;
        }
        for (Run r : a.runs()) {
            for (String s : new String[] {r.volume(), r.trigger(), r.result(), r.message(), r.agentVersion()}) {
                strs.add(cut(s));
            }
            size += RUN_FIXED_BYTES;
        }
        size += 2;
        for (byte[] s : strs) {
            size += 2 + s.length;
        }
        ByteBuffer b = ByteBuffer.allocate(size).put((byte) VERSION);
        int i = 0;
        for (; i < 4; i++) {
            putStr(b, strs.get(i));
        }
        b.putLong(a.firstContactMillis()).putLong(a.lastContactMillis()).putLong(a.connections()).putShort((short) a.results().size());
        for (VolumeResult r : a.results()) {
            putStr(b, strs.get(i++));
            b.put((byte) (r.ok() ? 1 : 0));
            putStr(b, strs.get(i++));
            b.putLong(r.bytes()).putLong(r.atMillis());
        }
        b.putShort((short) a.runs().size());
        for (Run r : a.runs()) {
            putStr(b, strs.get(i++));
            putStr(b, strs.get(i++));
            b.putLong(r.startMillis()).putLong(r.endMillis());
            putStr(b, strs.get(i++));
            b.put((byte) r.exitCode()).putShort((short) r.attempts()).putLong(r.bytesRead()).putLong(r.bytesSent())
                    .putLong(r.snapshotSequence()).put((byte) r.consistency());
            putStr(b, strs.get(i++));
            putStr(b, strs.get(i++));
            b.putLong(r.receivedMillis());
        }
        return b.array();
    }

    static Agent decode(String tokenId, byte[] v, String path) {
        int version = v.length < 1 ? -1 : v[0] & 0xff;
        if (version != 1 && version != VERSION) {
            throw new CorruptDataException("agents", path, tokenId, "agent record of version " + (v.length < 1 ? "none" : version)
                    + " (this server reads 1 and " + VERSION + ")");
        }
        try {
            ByteBuffer b = ByteBuffer.wrap(v, 1, v.length - 1);
            String name = getStr(b);
            String address = getStr(b);
            String agent = getStr(b);
            String agentVersion = getStr(b);
            long first = b.getLong();
            long last = b.getLong();
            long connections = b.getLong();
            int n = b.getShort() & 0xffff;
            List<VolumeResult> results = new ArrayList<>(n);
            for (int i = 0; i < n; i++) {
                String volume = getStr(b);
                boolean ok = b.get() != 0;
                String message = getStr(b);
                results.add(new VolumeResult(volume, ok, message, b.getLong(), b.getLong()));
            }
            List<Run> runs = new ArrayList<>();
            int m = version == 1 ? 0 : b.getShort() & 0xffff;
            for (int i = 0; i < m; i++) {
                String volume = getStr(b);
                String trigger = getStr(b);
                long start = b.getLong();
                long end = b.getLong();
                String result = getStr(b);
                int exit = b.get() & 0xff;
                int attempts = b.getShort() & 0xffff;
                long read = b.getLong();
                long sent = b.getLong();
                long snapshot = b.getLong();
                int consistency = b.get() & 0xff;
                String message = getStr(b);
                String reporter = getStr(b);
                runs.add(new Run(volume, trigger, start, end, result, exit, attempts, read, sent, snapshot, consistency, message,
                        reporter, b.getLong()));
            }
            if (b.hasRemaining()) {
                throw new CorruptDataException("agents", path, tokenId, b.remaining() + " bytes after the agent record");
            }
            return new Agent(tokenId, name, address, agent, agentVersion, first, last, connections, results, runs);
        } catch (BufferUnderflowException e) {
            throw new CorruptDataException("agents", path, tokenId, "agent record is truncated");
        }
    }

    /** Bytes of a run besides its five strings (counted with theirs): 6 × u64, u8 exit, u16 attempts, u8 consistency. */
    private static final int RUN_FIXED_BYTES = 6 * 8 + 1 + 2 + 1;

    private static byte[] cut(String s) {
        byte[] b = (s == null ? "" : s).getBytes(StandardCharsets.UTF_8);
        if (b.length <= MAX_FIELD_BYTES) {
            return b;
        }
        int n = MAX_FIELD_BYTES;
        while (n > 0 && (b[n] & 0xC0) == 0x80) {
            n--; // do not split a UTF-8 sequence
        }
        return java.util.Arrays.copyOf(b, n);
    }

    private static void putStr(ByteBuffer b, byte[] s) {
        b.putShort((short) s.length).put(s);
    }

    private static String getStr(ByteBuffer b) {
        int n = b.getShort() & 0xffff;
        byte[] s = new byte[n];
        b.get(s);
        return new String(s, StandardCharsets.UTF_8);
    }
}
