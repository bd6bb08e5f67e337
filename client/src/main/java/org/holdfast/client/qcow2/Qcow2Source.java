package org.holdfast.client.qcow2;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HexFormat;
import java.util.List;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.scan.BackupSource;
import org.holdfast.client.scan.ChangedBlockList;
import org.holdfast.client.scan.DataRegions;

/**
 * One backup's view of a qcow2 image: its guest-visible bytes over NBD from a read-only
 * {@code qemu-nbd}, and, with tracking, the dirty-bitmap rotation. A new bitmap is added before
 * anything is read; the previous one (named in the {@link BitmapChain}) supplies the changed
 * extents; the chain moves to the new bitmap only after the snapshot commits, and the old
 * bitmaps go only then. Any doubt about the chain means reading every block.
 */
final class Qcow2Source implements BackupSource {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final Path image;
    private final Qcow2Backup backup;
    private final long size;
    private final BitmapChain chain; // null: no usable previous bitmap
    private final String newBitmap; // null: no tracking
    private final QemuNbd server;
    private final NbdPool nbd;
    private boolean committed;

    private Qcow2Source(Path image, Qcow2Backup backup, long size, BitmapChain chain, String newBitmap, QemuNbd server,
                        NbdPool nbd) {
        this.image = image;
        this.backup = backup;
        this.size = size;
        this.chain = chain;
        this.newBitmap = newBitmap;
        this.server = server;
        this.nbd = nbd;
    }

    /** Opens {@code backup}'s image: checks the chain, adds the next bitmap, starts qemu-nbd and connects. */
    static Qcow2Source open(Qcow2Backup backup) {
        Path image = backup.image();
        String step = "inspect";
        String added = null;
        QemuNbd server = null;
        try {
            Path real = image.toRealPath();
            QemuImg.Info info = QemuImg.info(real);
            if (!"qcow2".equals(info.format())) {
                throw new AgentException(ExitCode.USAGE, image + " is a " + info.format() + " image, not qcow2",
                        "use --format raw for a raw image");
            }
            BitmapChain chain = null;
            if (backup.tracking()) {
                BitmapChain.removeLeftovers(backup.chainFile(), backup::notice);
                BitmapChain.Loaded loaded = BitmapChain.load(backup.chainFile());
                String broken = loaded.chain() == null ? loaded.reason() : brokenBy(loaded.chain(), real, info);
                if (broken == null) {
                    chain = loaded.chain();
                } else {
                    backup.brokenChain(broken);
                }
                step = "add a dirty bitmap to";
                added = backup.bitmapPrefix() + HexFormat.of().toHexDigits(RANDOM.nextLong());
                QemuImg.addBitmap(real, added); // before any read: every later write lands in it
            }
            step = "serve (qemu-nbd)";
            NbdSocketDirs.removeLeftovers(NbdSocketDirs.systemTemp(), backup::notice);
            server = QemuNbd.start(real, chain == null ? null : chain.bitmap());
            step = "connect over NBD to";
            NbdPool nbd = NbdPool.connect(server.socket(), NbdPool.CONNECTIONS);
            if (nbd.size() != info.virtualSize()) {
                nbd.close();
                throw new IOException("qemu-nbd exports " + nbd.size() + " bytes, qemu-img said " + info.virtualSize());
            }
            backup.opened(added);
            return new Qcow2Source(real, backup, info.virtualSize(), chain, added, server, nbd);
        } catch (IOException | RuntimeException e) {
            if (server != null) {
                server.close();
            }
            removeQuietly(image, added);
            if (e instanceof AgentException a) {
                throw a;
            }
            String hint = e.getMessage() != null && e.getMessage().contains("is not installed")
                    ? "install qemu-utils and libnbd-bin, or give --format raw to back up the file's own bytes"
                    : "check the image; a running VM holds a write lock on its disk (back up a stopped VM's image,"
                            + " or leave out --dirty-bitmap)";
            throw new AgentException(ExitCode.LOCAL_IO, "cannot " + step + " qcow2 image " + image + ": " + e.getMessage(),
                    hint, e);
        }
    }

    /** Why the recorded chain cannot be trusted for {@code image} as it is now, or null if it can. */
    static String brokenBy(BitmapChain c, Path image, QemuImg.Info info) {
        if (!image.toString().equals(c.image())) {
            return "the recorded dirty bitmap belongs to image " + c.image();
        }
        if (c.virtualSize() != info.virtualSize()) {
            return "the image's size changed from " + c.virtualSize() + " to " + info.virtualSize() + " bytes";
        }
        QemuImg.Bitmap b = info.bitmap(c.bitmap());
        if (b == null) {
            return "dirty bitmap " + c.bitmap() + " is missing from the image";
        }
        if (b.inUse()) {
            return "dirty bitmap " + c.bitmap() + " is inconsistent (in-use: the image was not closed cleanly)";
        }
        if (!b.enabled()) {
            return "dirty bitmap " + c.bitmap() + " is disabled, so it may have missed writes";
        }
        return null;
    }

    @Override
    public long size() {
        return size;
    }

    @Override
    public int read(ByteBuffer dst, long position) throws IOException {
        return nbd.read(dst, position);
    }

    @Override
    public DataRegions regions(boolean readHoles) {
        if (readHoles || backup.bitmapUsed()) {
            return DataRegions.wholeFile(size); // dirty extents are few: not worth another nbdinfo
        }
        try {
            return ZeroExtentRegions.of(size, ExtentMap.dataRanges(server.socket()));
        } catch (IOException e) {
            backup.notice("cannot ask qemu-nbd where the image reads as zeros (" + e.getMessage() + "); reading all of it");
            return DataRegions.wholeFile(size);
        }
    }

    @Override
    public ChangedBlockList trackedChanges(long baseSequence, long volumeBytes, int blockSize) {
        if (chain == null || newBitmap == null) {
            return null;
        }
        if (baseSequence == 0) {
            backup.brokenChain("the backup is full");
            return null;
        }
        if (chain.sequence() != baseSequence) {
            backup.brokenChain("dirty bitmap " + chain.bitmap() + " follows snapshot " + chain.sequence()
                    + ", the last committed one is " + baseSequence);
            return null;
        }
        try {
            List<long[]> dirty = ExtentMap.dirtyRanges(server.socket(), chain.bitmap());
            ChangedBlockList extents = ChangedBlockList.ofByteRanges(dirty, volumeBytes, blockSize);
            backup.used(chain.bitmap(), extents.blocks() * blockSize);
            return extents;
        } catch (IOException | RuntimeException e) {
            backup.brokenChain("cannot read dirty bitmap " + chain.bitmap() + ": " + e.getMessage());
            return null;
        }
    }

    @Override
    public void committed(long sequence) {
        if (newBitmap == null) {
            return;
        }
        try {
            new BitmapChain(image.toString(), size, newBitmap, sequence).save(backup.chainFile());
            committed = true;
        } catch (IOException | RuntimeException e) {
            backup.notice("snapshot " + sequence + " is committed, but the bitmap record could not be saved ("
                    + e.getMessage() + "); the next backup will read the whole image");
        }
    }

    /**
     * Stops reading, then (the image's lock is free only once qemu-nbd is gone) drops the bitmaps
     * no longer needed: after a commit every older bitmap of this volume, else the one added for
     * this run. An agent killed before this point leaves the old bitmap, which still covers
     * every write since the last commit, and a stray new one that the next commit removes.
     */
    @Override
    public void close() {
        nbd.close();
        server.close();
        if (newBitmap == null) {
            return;
        }
        if (!committed) {
            removeQuietly(image, newBitmap);
            return;
        }
        try {
            for (QemuImg.Bitmap b : QemuImg.info(image).bitmaps()) {
                if (backup.owns(b.name()) && !b.name().equals(newBitmap)) {
                    QemuImg.removeBitmap(image, b.name());
                }
            }
        } catch (IOException e) {
            backup.notice("could not remove old dirty bitmaps from " + image + " (" + e.getMessage()
                    + "); the next backup removes them");
        }
    }

    private static void removeQuietly(Path image, String bitmap) {
        if (bitmap == null) {
            return;
        }
        try {
            QemuImg.removeBitmap(image, bitmap);
        } catch (IOException ignored) {
            // left behind, it is removed after the next commit (it carries this volume's prefix)
        }
    }
}
