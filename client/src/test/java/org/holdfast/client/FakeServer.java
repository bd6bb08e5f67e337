package org.holdfast.client;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import org.holdfast.common.compress.BlockCodec;
import org.holdfast.common.hash.BlockHasher;
import org.holdfast.common.id.Fingerprint;
import org.holdfast.common.protocol.*;

/**
 * An in-memory protocol peer for the agent's tests, speaking protocol v1 with the real codecs over
 * a real loopback socket. It keeps volumes, snapshots (a packed fingerprint per LBN) and payloads
 * by fingerprint, and records what each backup session sent, so tests can assert on the wire
 * traffic. Not the real server: no persistence, no dedup engine.
 */
public final class FakeServer implements AutoCloseable {
    /** One committed snapshot. */
    public record Snap(long sequence, long createdAt, long volumeBytes, int blockSize, byte[] fps, long changed, long stored) {
    }

    /** What one backup session sent. */
    public static final class SessionLog {
        public final List<Long> entryLbns = new ArrayList<>();
        public final List<Long> blockLbns = new ArrayList<>();
        public BackupMode mode;
        public long base;
        /** BACKUP_BEGIN's base snapshot id (protocol 5; 0 = unknown). */
        public long baseSnapshotId;
        /** Entries of blocks the server had whose possession tag was wrong (asked for instead). */
        public long badTags;
        /** Entries of blocks the server had whose possession tag was right (not asked for). */
        public long provenTags;
    }

    final Map<String, List<Snap>> volumes = new ConcurrentHashMap<>();
    final Map<Fingerprint, byte[]> store = new ConcurrentHashMap<>();
    public final List<SessionLog> sessions = new CopyOnWriteArrayList<>();
    /** The protocol version HELLO_OK grants (at most what HELLO offered); 2 by default, like a server before version 3. */
    public volatile int protocolVersion = ProtocolLimits.VERSION;
    /** As a real server of protocol 2 (the 2026-11-23 release): an offer other than 2 gets UNSUPPORTED_VERSION, not the lower version. */
    public volatile boolean refusesOtherVersions;
    /** The protocol version of every HELLO received, in order. */
    public final List<Integer> offers = new CopyOnWriteArrayList<>();
    /** The consistency of every COMMIT received, in order. */
    public final List<org.holdfast.common.model.Consistency> commits = new CopyOnWriteArrayList<>();
    /** Answer every BACKUP_BEGIN with mode FULL. */
    public volatile boolean forceFull;
    /** LIST_SNAPSHOTS is answered with this ERROR (UNKNOWN_VOLUME) and a hang-up, when set. */
    public volatile String listRefusal;
    /** Flip a bit in the first non-zero payload of every restore. */
    public volatile boolean corruptRestore;
    /** The server's STORAGE_FULL message (ErrorMapping.messageOf of a StorageFullException). */
    public static final String STORAGE_FULL_MESSAGE = "storage full: no space left on the data disk; delete snapshots or volumes,"
            + " then run reclaim-now (POST /api/v1/gc/reclaim), or grow the disk; nothing of this backup was committed,"
            + " and snapshots committed before are intact";
    /** Answer the first BLOCKS with ERROR STORAGE_FULL. */
    public volatile boolean storageFull;
    /** Close the connection without a word at the first BLOCKS, as a server that is stopped or killed mid-backup. */
    public volatile boolean hangUpOnBlocks;
    /** With {@link #hangUpOnBlocks}: reset it (RST), as the kernel does for a killed server with the agent's data unread. */
    public volatile boolean hangUpWithReset;
    /** Answer a HELLO without a token with ERROR UNAUTHORIZED and this message (null: no token needed). */
    public volatile String tokenRequired;
    /** Answer the first BLOCKS with ERROR WORKER_UNAVAILABLE and this message, as a master that lost a worker does (null: store). */
    public volatile String workerLost;
    /** When set, COMMIT is never answered (to kill an agent between reading and commit); counts those commits. */
    public volatile boolean stallCommit;
    public final java.util.concurrent.atomic.AtomicInteger stalledCommits = new java.util.concurrent.atomic.AtomicInteger();
    /** Answer BACKUP_BEGIN with ERROR QUOTA_EXCEEDED and this message (null: admit). */
    public volatile String quotaRefusal;
    /** When set, BACKUP_BEGIN is refused with LIMIT_EXCEEDED and this message (an agent-port limit). */
    public volatile String limitRefusal;
    /** Answer runs with a NEED for the wrong start LBN. */
    public volatile boolean wrongNeed;
    /** Send RESTORE_END one frame early. */
    public volatile boolean truncateRestore;
    /** Sends an empty RESTORE_DATA before each frame of a restore, as a server does while a frame is slow to build. */
    public volatile boolean keepAliveRestore;
    /** Answer RESTORE (after RESTORE_INFO) with ERROR CORRUPT_DATA and this message, as the server does for a bad block (null: restore). */
    public volatile String damagedRestore;
    /** Answer RESTORE (after RESTORE_INFO) with ERROR WORKER_UNAVAILABLE and this message, as a master that lost a worker does (null: restore). */
    public volatile String workerLostRestore;

    private final EventLoopGroup group = new NioEventLoopGroup(1);
    private final Channel server;

    public FakeServer() throws InterruptedException {
        server = new ServerBootstrap().group(group).channel(NioServerSocketChannel.class)
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast(new FrameDecoder(), new FrameEncoder(), new Session());
                    }
                }).bind("127.0.0.1", 0).sync().channel();
    }

    public String address() {
        return "127.0.0.1:" + ((InetSocketAddress) server.localAddress()).getPort();
    }

    public List<Snap> snapshots(String volume) {
        return volumes.getOrDefault(volume, List.of());
    }

    /** Each snapshot's random identity ("volume@sequence"), handed out at commit as the real server does (protocol 5). */
    public final Map<String, Long> snapshotIds = new ConcurrentHashMap<>();

    /** Forgets the snapshots of {@code volume} after {@code sequence}, as a catalog restore does: their sequences are handed out again. */
    public void rollBack(String volume, long sequence) {
        volumes.get(volume).removeIf(s -> s.sequence() > sequence);
    }

    /** Adds a snapshot behind the agent's back (as another agent would). */
    public void commitForeignSnapshot(String volume) {
        List<Snap> list = volumes.get(volume);
        commitForeignSnapshot(volume, list.get(list.size() - 1).volumeBytes());
    }

    /** Adds a snapshot of {@code volumeBytes} behind the agent's back (another agent, another source). */
    public void commitForeignSnapshot(String volume, long volumeBytes) {
        List<Snap> list = volumes.get(volume);
        Snap last = list.get(list.size() - 1);
        list.add(new Snap(last.sequence() + 1, System.currentTimeMillis(), volumeBytes, last.blockSize(),
                last.fps().clone(), 0, 0));
    }

    @Override
    public void close() {
        server.close().syncUninterruptibly();
        group.shutdownGracefully(0, 100, java.util.concurrent.TimeUnit.MILLISECONDS).syncUninterruptibly();
    }

    private final class Session extends SimpleChannelInboundHandler<Message> {
        private String volume;
        private int blockSize;
        private long volumeBytes;
        private byte[] fps;
        private long nextLbn;
        private final Map<Long, byte[]> sessionFp = new HashMap<>();
        private final Set<Fingerprint> asked = new HashSet<>();
        private final Set<Fingerprint> received = new HashSet<>();
        private SessionLog log;
        private int agreed;
        private long changed;
        private long sent;
        private long newBlocks;
        private long storedBytes;
        private final BlockHasher hasher = new BlockHasher();
        private final BlockCodec codec = new BlockCodec();
        private org.holdfast.common.hash.PossessionProof proof;

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, Message m) {
            if (m instanceof Hello h) {
                offers.add(h.protocolVersion());
                if (refusesOtherVersions && h.protocolVersion() != protocolVersion) {
                    error(ctx, ErrorCode.UNSUPPORTED_VERSION, "this server speaks protocol version " + protocolVersion
                            + ", the agent asked for " + h.protocolVersion());
                    return;
                }
                String noToken = tokenRequired;
                if (noToken != null && h.token().isEmpty()) {
                    error(ctx, ErrorCode.UNAUTHORIZED, noToken);
                    return;
                }
                agreed = Math.min(h.protocolVersion(), protocolVersion);
                ((FrameDecoder) ctx.pipeline().first()).protocolVersion(agreed);
                ctx.writeAndFlush(new HelloOk(agreed, "fake", ProtocolLimits.MAX_FRAME));
            } else if (m instanceof BackupBegin b) {
                begin(ctx, b);
            } else if (m instanceof Entries e) {
                entries(ctx, e);
            } else if (m instanceof Blocks b) {
                blocks(ctx, b);
            } else if (m instanceof Commit c) {
                commit(ctx, c);
            } else if (m instanceof Abort) {
                volume = null;
            } else if (m instanceof ListSnapshots l) {
                List<Snap> list = volumes.get(l.volume());
                if (listRefusal != null) {
                    error(ctx, ErrorCode.UNKNOWN_VOLUME, listRefusal);
                    return;
                }
                if (list == null) {
                    error(ctx, ErrorCode.UNKNOWN_VOLUME, "no volume " + l.volume());
                    return;
                }
                List<SnapshotInfo> infos = new ArrayList<>();
                for (Snap s : list) {
                    infos.add(new SnapshotInfo(s.sequence(), s.createdAt(), s.volumeBytes(), s.blockSize(), s.volumeBytes(),
                            s.changed(), s.stored()));
                }
                ctx.writeAndFlush(new SnapshotList(infos));
            } else if (m instanceof Restore r) {
                restore(ctx, r);
            } else {
                error(ctx, ErrorCode.BAD_STATE, "unexpected " + m.type());
            }
        }

        private void begin(ChannelHandlerContext ctx, BackupBegin b) {
            List<Snap> list = volumes.computeIfAbsent(b.volume(), k -> new CopyOnWriteArrayList<>());
            Snap parent = list.isEmpty() ? null : list.get(list.size() - 1);
            if (quotaRefusal != null) {
                error(ctx, ErrorCode.QUOTA_EXCEEDED, quotaRefusal);
                return;
            }
            if (limitRefusal != null) {
                error(ctx, ErrorCode.LIMIT_EXCEEDED, limitRefusal);
                return;
            }
            // 0: the volume's block size (4096 for a new volume), as the real server does
            int asked = b.blockSize() != 0 ? b.blockSize() : parent != null ? parent.blockSize() : 4096;
            if (parent != null && parent.blockSize() != asked) {
                error(ctx, ErrorCode.BLOCK_SIZE_MISMATCH, "volume has block size " + parent.blockSize());
                return;
            }
            volume = b.volume();
            blockSize = asked;
            volumeBytes = b.volumeBytes();
            int blocks = (int) ProtocolLimits.blockCount(volumeBytes, blockSize);
            fps = new byte[blocks * 32];
            if (parent != null) {
                System.arraycopy(parent.fps(), 0, fps, 0, Math.min(fps.length, parent.fps().length));
            }
            long parentSeq = parent == null ? 0 : parent.sequence();
            // as the real server: a known base identity that differs from the parent's means another snapshot of that number
            long parentId = snapshotIds.getOrDefault(b.volume() + "@" + parentSeq, 0L);
            boolean otherSnapshot = b.baseSnapshotId() != 0 && parentId != 0 && b.baseSnapshotId() != parentId;
            BackupMode mode = !forceFull && b.baseSequence() == parentSeq && !otherSnapshot ? BackupMode.INCREMENTAL : BackupMode.FULL;
            log = new SessionLog();
            log.mode = mode;
            log.base = b.baseSequence();
            log.baseSnapshotId = b.baseSnapshotId();
            sessions.add(log);
            ((FrameDecoder) ctx.pipeline().first()).blockSize(blockSize);
            byte[] secret = new byte[BackupReady.SECRET_BYTES];
            new java.security.SecureRandom().nextBytes(secret);
            proof = new org.holdfast.common.hash.PossessionProof(secret);
            // as the real server: a full answer says why on a protocol 5 connection
            FullReason reason = mode == BackupMode.INCREMENTAL ? FullReason.UNSTATED
                    : b.baseSequence() != parentSeq ? FullReason.BASE_NOT_NEWEST
                    : otherSnapshot ? FullReason.IDENTITY_MISMATCH
                    : FullReason.DAMAGED_BLOCKS;
            ctx.writeAndFlush(new BackupReady(sessions.size(), parentSeq, blockSize, mode, secret, reason).forVersion(agreed));
        }

        private void entries(ChannelHandlerContext ctx, Entries e) {
            if (volume == null || e.startLbn() < nextLbn || e.startLbn() + e.count() > fps.length / 32) {
                error(ctx, ErrorCode.BAD_STATE, "bad run " + e);
                return;
            }
            nextLbn = e.startLbn() + e.count();
            byte[] bitmap = new byte[Need.bitmapBytes(e.count())];
            for (int i = 0; i < e.count(); i++) {
                long lbn = e.lbn(i);
                log.entryLbns.add(lbn);
                byte[] fp = Arrays.copyOfRange(e.fingerprints(), i * 32, i * 32 + 32);
                if (!Arrays.equals(fp, 0, 32, fps, (int) lbn * 32, (int) lbn * 32 + 32)) {
                    changed++;
                }
                System.arraycopy(fp, 0, fps, (int) lbn * 32, 32);
                sessionFp.put(lbn, fp);
                if (!e.isZero(i)) {
                    Fingerprint f = Fingerprint.of(fp);
                    byte[] held = store.get(f);
                    boolean proven = held != null && proof.tag(held, 0, held.length) == e.tags()[i];
                    if (held != null) {
                        if (proven) {
                            log.provenTags++;
                        } else {
                            log.badTags++;
                        }
                    }
                    if (!proven && asked.add(f)) {
                        Need.set(bitmap, i);
                    }
                }
            }
            ctx.writeAndFlush(new Need(wrongNeed ? e.startLbn() + 1 : e.startLbn(), e.count(), bitmap));
        }

        private void blocks(ChannelHandlerContext ctx, Blocks b) {
            if (hangUpOnBlocks) {
                if (hangUpWithReset) {
                    ctx.channel().config().setOption(io.netty.channel.ChannelOption.SO_LINGER, 0);
                }
                ctx.channel().close();
                return;
            }
            if (storageFull) {
                error(ctx, ErrorCode.STORAGE_FULL, STORAGE_FULL_MESSAGE);
                return;
            }
            String lost = workerLost;
            if (lost != null) {
                error(ctx, ErrorCode.WORKER_UNAVAILABLE, lost);
                return;
            }
            byte[] payload = new byte[ProtocolLimits.MAX_PAYLOAD];
            byte[] block = new byte[blockSize];
            byte[] digest = new byte[32];
            byte[] frame = null; // the decompressed zstd frame (protocol 4) whose members follow
            int frameStart = 0;
            for (int i = 0; i < b.count(); i++) {
                long lbn = b.lbns()[i];
                log.blockLbns.add(lbn);
                int len = 0;
                int c = b.codecs()[i];
                if (c == PayloadCodec.ZSTD_FRAME) {
                    len = b.copyPayload(i, payload, 0);
                    frame = new byte[b.frameMembers(i) * blockSize];
                    com.github.luben.zstd.Zstd.decompressByteArray(frame, 0, frame.length, payload, 0, len);
                    frameStart = i;
                    System.arraycopy(frame, 0, block, 0, blockSize);
                } else if (c == PayloadCodec.FRAME_MEMBER) {
                    System.arraycopy(frame, (i - frameStart) * blockSize, block, 0, blockSize);
                } else {
                    len = b.copyPayload(i, payload, 0);
                    codec.decode(c, payload, 0, len, block, 0, blockSize);
                }
                hasher.sha256(block, 0, blockSize, digest, 0);
                byte[] expected = sessionFp.get(lbn);
                if (expected == null || !Arrays.equals(digest, expected)) {
                    error(ctx, ErrorCode.FINGERPRINT_MISMATCH, "lbn " + lbn);
                    return;
                }
                Fingerprint f = Fingerprint.of(digest);
                if (store.putIfAbsent(f, block.clone()) == null) {
                    newBlocks++;
                    storedBytes += len;
                }
                received.add(f);
                sent++;
            }
        }

        private void commit(ChannelHandlerContext ctx, Commit c) {
            commits.add(c.consistency());
            if (volume == null || !received.containsAll(asked)) {
                error(ctx, ErrorCode.BAD_STATE, "commit before all blocks arrived");
                return;
            }
            if (stallCommit) {
                stalledCommits.incrementAndGet();
                return;
            }
            List<Snap> list = volumes.get(volume);
            long seq = list.isEmpty() ? 1 : list.get(list.size() - 1).sequence() + 1;
            long now = System.currentTimeMillis();
            list.add(new Snap(seq, now, volumeBytes, blockSize, fps, changed, storedBytes));
            long id = new java.security.SecureRandom().nextLong() | 1;
            snapshotIds.put(volume + "@" + seq, id);
            volume = null;
            ctx.writeAndFlush(new Committed(seq, now, volumeBytes, changed, sent, newBlocks, storedBytes, id).forVersion(agreed));
        }

        private void restore(ChannelHandlerContext ctx, Restore r) {
            List<Snap> list = volumes.get(r.volume());
            if (list == null) {
                error(ctx, ErrorCode.UNKNOWN_VOLUME, "no volume " + r.volume());
                return;
            }
            Snap s = list.stream().filter(x -> x.sequence() == r.sequence()).findFirst().orElse(null);
            if (s == null) {
                error(ctx, ErrorCode.UNKNOWN_SNAPSHOT, "no snapshot " + r.sequence());
                return;
            }
            long blocks = ProtocolLimits.blockCount(s.volumeBytes(), s.blockSize());
            ctx.writeAndFlush(new RestoreInfo(s.sequence(), s.volumeBytes(), s.blockSize(), blocks));
            if (damagedRestore != null) {
                error(ctx, ErrorCode.CORRUPT_DATA, damagedRestore);
                return;
            }
            if (workerLostRestore != null) {
                error(ctx, ErrorCode.WORKER_UNAVAILABLE, workerLostRestore);
                return;
            }
            boolean corrupt = corruptRestore;
            byte[] out = new byte[BlockCodec.maxCompressedLength(s.blockSize())];
            long lbn = r.fromLbn();
            int frames = 0;
            while (lbn < blocks) {
                if (keepAliveRestore) {
                    ctx.writeAndFlush(RestoreData.builder(PooledByteBufAllocator.DEFAULT, lbn, 0).build());
                }
                RestoreData.Builder b = RestoreData.builder(PooledByteBufAllocator.DEFAULT, lbn, 1 << 20);
                while (lbn < blocks && b.count() < 300) {
                    int off = (int) lbn * 32;
                    boolean zero = Arrays.mismatch(s.fps(), off, off + 32, new byte[32], 0, 32) < 0;
                    if (zero) {
                        b.addZero();
                    } else {
                        byte[] data = store.get(Fingerprint.read(s.fps(), off)).clone();
                        if (corrupt) {
                            data[7] ^= 1;
                            corrupt = false;
                        }
                        int n = codec.compress(data, 0, data.length, out, 0);
                        if (n > 0) {
                            b.add(PayloadCodec.ZSTD, s.fps(), off, out, 0, n);
                        } else {
                            b.add(PayloadCodec.RAW, s.fps(), off, data, 0, data.length);
                        }
                    }
                    lbn++;
                }
                frames++;
                if (truncateRestore && lbn >= blocks && frames > 1) {
                    b.close();
                    break;
                }
                ctx.writeAndFlush(b.build());
            }
            ctx.writeAndFlush(new RestoreEnd(truncateRestore ? blocks : blocks - r.fromLbn()));
        }

        private void error(ChannelHandlerContext ctx, ErrorCode code, String text) {
            ctx.writeAndFlush(ErrorMessage.of(code, text)).addListener(ChannelFutureListener.CLOSE);
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (cause instanceof ProtocolException p) {
                error(ctx, p.code(), p.getMessage());
            } else {
                error(ctx, ErrorCode.INTERNAL, String.valueOf(cause));
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            codec.close();
        }
    }
}
