package org.holdfast.client.qcow2;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.function.Consumer;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.client.scan.BackupSource;

/**
 * The agent's qcow2 backup of one volume: decides from {@code --format} whether a source is a
 * qcow2 image, opens it for the backup session, and reports what the dirty bitmap did.
 */
public final class Qcow2Backup {
    /** The first four bytes of every qcow2 image: "QFI\xfb". */
    static final int MAGIC = 0x514649fb;

    private final Path image;
    private final Path chainFile;
    private final boolean tracking;
    private final String bitmapPrefix;
    private final Consumer<String> notices;
    private String bitmapRead;
    private String bitmapNext;
    private String fallback;
    private long dirtyBytes;

    private Qcow2Backup(Path image, Path stateFile, boolean tracking, Consumer<String> notices) {
        this.image = image;
        this.chainFile = BitmapChain.pathFor(stateFile);
        this.tracking = tracking;
        // the state file sits at DIR/<server key>/<volume>.state: one bitmap chain per server and volume
        String owner = stateFile.getParent().getFileName() + "-" + stateFile.getFileName().toString().replaceFirst("\\.state$", "");
        this.bitmapPrefix = "holdfast-" + owner.replaceAll("[^A-Za-z0-9._-]", "_") + "-";
        this.notices = notices;
    }

    /**
     * The qcow2 backup of {@code source}, or null to read it as a raw image or device.
     * {@code format} is raw, qcow2 or auto (qcow2 if the file starts with its magic).
     */
    public static Qcow2Backup choose(Path source, String format, boolean dirtyBitmap, Path stateFile,
                                     Consumer<String> notices) {
        boolean qcow2 = switch (format.toLowerCase(Locale.ROOT)) {
            case "raw" -> false;
            case "qcow2" -> true;
            case "auto" -> hasMagic(source);
            default -> throw new AgentException(ExitCode.USAGE, "--format " + format + " is not raw, qcow2 or auto",
                    "give --format raw, qcow2 or auto");
        };
        if (!qcow2 && dirtyBitmap) {
            throw new AgentException(ExitCode.USAGE, "--dirty-bitmap needs a qcow2 image, and " + source + " is read as raw",
                    "leave out --dirty-bitmap, or give a qcow2 image");
        }
        return qcow2 ? new Qcow2Backup(source, stateFile, dirtyBitmap, notices) : null;
    }

    private static boolean hasMagic(Path source) {
        if (!Files.isRegularFile(source)) {
            return false;
        }
        try (InputStream in = Files.newInputStream(source)) {
            byte[] b = in.readNBytes(4);
            return b.length == 4 && ((b[0] & 0xff) << 24 | (b[1] & 0xff) << 16 | (b[2] & 0xff) << 8 | (b[3] & 0xff)) == MAGIC;
        } catch (IOException e) {
            return false; // the raw path reports why it cannot read the source
        }
    }

    /** Opens the image for one backup session (adds the next dirty bitmap first when tracking). */
    public BackupSource open() {
        return Qcow2Source.open(this);
    }

    /** What the backup did with the image, for {@code --json}. */
    public Map<String, Object> report() {
        Map<String, Object> m = new LinkedHashMap<>();
        m.put("sourceFormat", "qcow2");
        m.put("dirtyBitmap", tracking);
        m.put("dirtyBitmapUsed", bitmapRead != null);
        m.put("dirtyBitmapRead", bitmapRead);
        m.put("dirtyBitmapNext", bitmapNext);
        m.put("dirtyBytes", bitmapRead != null ? dirtyBytes : null);
        m.put("dirtyBitmapFallback", bitmapRead == null ? fallback : null);
        return m;
    }

    /** One line for the human-readable summary. */
    public String summary() {
        if (!tracking) {
            return "qcow2 image read over NBD, no dirty bitmap";
        }
        return bitmapRead != null ? "qcow2 dirty bitmap " + bitmapRead + " used: " + dirtyBytes + " dirty bytes read"
                : "qcow2 dirty bitmap not used (" + fallback + "), the whole image was read";
    }

    Path image() {
        return image;
    }

    Path chainFile() {
        return chainFile;
    }

    boolean tracking() {
        return tracking;
    }

    String bitmapPrefix() {
        return bitmapPrefix;
    }

    /** True for the bitmaps this volume's chain adds: the prefix and 16 hex digits, so "vm-a" never claims "vm-a-b"'s. */
    boolean owns(String bitmap) {
        return bitmap.length() == bitmapPrefix.length() + 16 && bitmap.startsWith(bitmapPrefix);
    }

    void opened(String nextBitmap) {
        bitmapNext = nextBitmap;
    }

    boolean bitmapUsed() {
        return bitmapRead != null;
    }

    void used(String bitmap, long bytes) {
        bitmapRead = bitmap;
        dirtyBytes = bytes;
    }

    /** The chain cannot be used: say so where a chain was recorded (a first backup is no surprise). */
    void brokenChain(String reason) {
        fallback = reason;
        if (Files.exists(chainFile)) {
            notices.accept("dirty bitmap not used, reading the whole image: " + reason);
        }
    }

    void notice(String line) {
        notices.accept(line);
    }
}
