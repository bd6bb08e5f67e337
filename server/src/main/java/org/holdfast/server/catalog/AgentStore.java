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
 * first, then who connected from where with which agent, first and last contact, and the last
 * backup result of each volume ({@link #encode}; docs/architecture.md has the byte table).
 *
 * <p>Bounded: at most {@link #MAX_RESULTS} volumes per token (the least recently backed up is
 * dropped), text fields cut to {@link #MAX_FIELD_BYTES}, at most {@link #MAX_AGENTS} tokens (a new
 * one replaces the one with the oldest contact). Writes are unsynced (the WAL keeps them; a crash
 * loses at most the last ones) and serialised on this object: each is a read and a write of one entry.
 */
public final class AgentStore {
    static final int VERSION = 1;
    /** Longest stored text field, in UTF-8 bytes. */
    public static final int MAX_FIELD_BYTES = 512;
    /** Volumes whose last result is kept per token. */
    public static final int MAX_RESULTS = 64;
    /** Tokens recorded at most. */
    public static final int MAX_AGENTS = 1000;

    /** The last backup of one volume: ok or the error's message, bytes received, and when it ended. */
    public record VolumeResult(String volume, boolean ok, String message, long bytes, long atMillis) {
    }

    /**
     * One token's connections: its name, the address and agent (name and version, empty if the
     * agent did not say) of the last connection, first and last contact, connections counted, and
     * the last result per volume (most recent first).
     */
    public record Agent(String tokenId, String tokenName, String remoteAddress, String agentName, String agentVersion,
                        long firstContactMillis, long lastContactMillis, long connections, List<VolumeResult> results) {
        public Agent {
            results = List.copyOf(results);
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
                        atMillis, o.connections() + 1, o.results()))
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
                o.connections(), results)));
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
     * u8 version 1, str tokenName, str remoteAddress, str agentName, str agentVersion, u64 firstContact,
     * u64 lastContact, u64 connections, u16 n, n × (str volume, u8 ok, str message, u64 bytes, u64 at);
     * str = u16 length + UTF-8.
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
        return b.array();
    }

    static Agent decode(String tokenId, byte[] v, String path) {
        if (v.length < 1 || (v[0] & 0xff) != VERSION) {
            throw new CorruptDataException("agents", path, tokenId, "agent record of version " + (v.length < 1 ? "none" : v[0] & 0xff)
                    + " (this server reads " + VERSION + ")");
        }
        try {
            ByteBuffer b = ByteBuffer.wrap(v, 1, v.length - 1);
            String name = getStr(b);
            String address = getStr(b);
            String agent = getStr(b);
            String version = getStr(b);
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
            if (b.hasRemaining()) {
                throw new CorruptDataException("agents", path, tokenId, b.remaining() + " bytes after the agent record");
            }
            return new Agent(tokenId, name, address, agent, version, first, last, connections, results);
        } catch (BufferUnderflowException e) {
            throw new CorruptDataException("agents", path, tokenId, "agent record is truncated");
        }
    }

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
