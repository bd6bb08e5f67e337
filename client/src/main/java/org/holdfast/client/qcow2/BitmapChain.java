package org.holdfast.client.qcow2;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.zip.CRC32C;
import org.holdfast.client.GuardedReplace;

/**
 * The agent's record, beside a volume's state file, of which dirty bitmap of which qcow2 image
 * holds every write since which committed snapshot. Like the state file it is only a hint: a
 * missing, torn or foreign record makes the next backup read the whole image.
 *
 * <pre>
 * holdfast-bitmap-chain 1
 * image SPACE real path of the image
 * virtual-size SPACE bytes
 * bitmap SPACE name of the bitmap added before that snapshot's read
 * sequence SPACE the committed snapshot
 * crc32c SPACE 8 hex digits: CRC32C of the lines above, newlines included
 * </pre>
 *
 * Replaced atomically (temporary file, fsync, rename, directory fsync) after a commit; the
 * temporary file is guarded and locked like the state file's, so a killed agent's leftover is
 * removed by the next dirty-bitmap backup of the volume ({@link #removeLeftovers}).
 */
record BitmapChain(String image, long virtualSize, String bitmap, long sequence) {
    static final String FIRST_LINE = "holdfast-bitmap-chain 1";

    /** Where the chain of the volume whose state file is {@code stateFile} lives. */
    static Path pathFor(Path stateFile) {
        return stateFile.resolveSibling(stateFile.getFileName() + ".bitmap");
    }

    /** The outcome of loading: a chain, or the reason there is none. Exactly one is non-null. */
    record Loaded(BitmapChain chain, String reason) {
    }

    static Loaded load(Path file) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8);
        } catch (NoSuchFileException e) {
            return new Loaded(null, "no dirty bitmap is recorded for this volume yet");
        } catch (IOException e) {
            return new Loaded(null, "the bitmap record " + file + " is unreadable: " + e.getMessage());
        }
        int crcAt = text.lastIndexOf("crc32c ");
        if (!text.startsWith(FIRST_LINE + "\n") || crcAt < 0 || !text.endsWith("\n")) {
            return new Loaded(null, "the bitmap record " + file + " is torn");
        }
        String body = text.substring(0, crcAt);
        if (!text.substring(crcAt + 7).strip().equals(crc(body))) {
            return new Loaded(null, "the bitmap record " + file + " is corrupt (checksum)");
        }
        Map<String, String> fields = new LinkedHashMap<>();
        for (String line : body.split("\n")) {
            int sp = line.indexOf(' ');
            if (sp > 0) {
                fields.put(line.substring(0, sp), line.substring(sp + 1));
            }
        }
        try {
            return new Loaded(new BitmapChain(fields.get("image"), Long.parseLong(fields.get("virtual-size")),
                    fields.get("bitmap"), Long.parseLong(fields.get("sequence"))), null);
        } catch (RuntimeException e) {
            return new Loaded(null, "the bitmap record " + file + " lacks a field");
        }
    }

    /** Writes this chain over {@code file}, atomically and durably ({@link GuardedReplace}). */
    void save(Path file) throws IOException {
        String body = FIRST_LINE + "\nimage " + image + "\nvirtual-size " + virtualSize + "\nbitmap " + bitmap
                + "\nsequence " + sequence + "\n";
        Files.createDirectories(file.getParent());
        GuardedReplace.write(file, (body + "crc32c " + crc(body) + "\n").getBytes(StandardCharsets.UTF_8));
    }

    /** Removes the temporary records {@code <file>.<random>.tmp} that agents killed during {@link #save} left. */
    static void removeLeftovers(Path file, Consumer<String> notices) {
        GuardedReplace.removeLeftovers(file, "an agent writing the bitmap record " + file.getFileName(), notices);
    }

    private static String crc(String body) {
        CRC32C c = new CRC32C();
        c.update(body.getBytes(StandardCharsets.UTF_8));
        return HexFormat.of().toHexDigits((int) c.getValue());
    }
}
