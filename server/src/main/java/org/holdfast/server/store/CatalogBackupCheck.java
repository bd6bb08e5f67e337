package org.holdfast.server.store;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.function.LongConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.zip.CRC32C;

/**
 * Checks one catalog backup's files against what RocksDB's backup engine wrote down for it in
 * {@code meta/<id>}: every file is there, has the size its shared name carries, and (with checksums)
 * its CRC32C is the one listed. We read the engine's meta file ourselves because RocksJava (11.8)
 * exposes no {@code VerifyBackup}: the engine itself checks these checksums only while it restores,
 * which is when the server is already lost.
 *
 * <p>Meta file, schema 1 (what the engine writes by default) and 2 (its newer, key-value file lines):
 * <pre>
 * [schema_version 2[.x]]
 * timestamp (epoch s)
 * sequence number
 * [metadata HEX]  (and, in schema 2, other "name value" lines)
 * file count N
 * N × "relative/path crc32 DECIMAL [size DECIMAL ...]"
 * </pre>
 * Shared tables are named {@code NUMBER_..._SIZE.sst}, so their size is known without the schema-2 field.
 */
final class CatalogBackupCheck {
    /** A meta file larger than this is not one the engine wrote (it lists a few hundred files). */
    static final int MAX_META_BYTES = 16 << 20;
    /** Problems listed in a result; more are counted. */
    static final int MAX_PROBLEMS = 20;
    private static final String UNREADABLE = "unreadable";
    private static final Pattern SHARED_SIZE = Pattern.compile("^shared(_checksum)?/[^/]*_(\\d+)\\.sst$");

    /** One file as the meta file lists it; {@code size} -1 where it does not say (private files in schema 1). */
    record Listed(String name, long crc32c, long size) {
    }

    /** What a check found: files and their bytes on disk, how many are damaged, and the first few of those (relative names) and why. */
    record Outcome(long files, long bytes, long damaged, List<String> damagedFiles, List<String> problems) {
    }

    private CatalogBackupCheck() {
    }

    /** The files backup {@code id} in {@code dir} consists of, as its meta file lists them. */
    static List<Listed> files(Path dir, int id) {
        Path meta = dir.resolve("meta").resolve(String.valueOf(id));
        List<String> lines;
        try {
            long size = Files.size(meta);
            if (size > MAX_META_BYTES) {
                throw new CorruptDataException("catalog-backup", meta.toString(), null, "meta file of " + size
                        + " bytes, more than " + MAX_META_BYTES + ": not one the backup engine wrote");
            }
            lines = new String(Files.readAllBytes(meta), StandardCharsets.UTF_8).lines().toList();
        } catch (IOException e) {
            throw StoreException.translate("catalog-backup", meta.toString(), null, e);
        }
        int i = 0;
        if (!lines.isEmpty() && lines.get(0).startsWith("schema_version ")) {
            i++;
        }
        i += 2; // timestamp, sequence number
        // then optional "name value" lines until the bare file count
        while (i < lines.size() && !lines.get(i).matches("\\d+")) {
            i++;
        }
        if (i >= lines.size()) {
            throw bad(meta, "no file count");
        }
        long n;
        try {
            n = Long.parseLong(lines.get(i++));
        } catch (NumberFormatException e) {
            throw bad(meta, "file count '" + lines.get(i - 1) + "'");
        }
        if (n != lines.size() - i) {
            throw bad(meta, "says " + n + " files but lists " + (lines.size() - i));
        }
        List<Listed> out = new ArrayList<>((int) n);
        for (; i < lines.size(); i++) {
            out.add(parse(meta, lines.get(i)));
        }
        return out;
    }

    private static Listed parse(Path meta, String line) {
        String[] f = line.split(" ");
        String name = f[0];
        if (!relativeFileName(name) || f.length % 2 != 1) {
            throw bad(meta, "file line '" + line + "'");
        }
        long crc = -1;
        long size = -1;
        try {
            for (int k = 1; k + 1 < f.length; k += 2) {
                switch (f[k]) {
                    case "crc32" -> crc = Long.parseLong(f[k + 1]);
                    case "size" -> size = Long.parseLong(f[k + 1]);
                    default -> { } // a field a newer engine adds: not ours to judge
                }
            }
        } catch (NumberFormatException e) {
            throw bad(meta, "file line '" + line + "'");
        }
        Matcher m = SHARED_SIZE.matcher(name);
        if (size < 0 && m.matches()) {
            try {
                size = Long.parseLong(m.group(2));
            } catch (NumberFormatException e) {
                throw bad(meta, "file line '" + line + "'");
            }
        }
        if (crc < 0 || crc > 0xffffffffL) {
            throw bad(meta, "no crc32 in file line '" + line + "'");
        }
        return new Listed(name, crc, size);
    }

    /**
     * A name the engine writes: relative, components that are neither empty nor "." nor "..": it
     * resolves to a file inside the backup directory, never to the directory or a subdirectory itself.
     */
    private static boolean relativeFileName(String name) {
        if (name.isEmpty() || name.startsWith("/") || name.endsWith("/") || name.contains("..")) {
            return false;
        }
        for (String part : name.split("/")) {
            if (part.isEmpty() || part.equals(".")) {
                return false;
            }
        }
        return true;
    }

    private static CorruptDataException bad(Path meta, String what) {
        return new CorruptDataException("catalog-backup", meta.toString(), null, "meta file unreadable: " + what);
    }

    /**
     * Checks backup {@code id}: sizes always, CRC32C of every byte if {@code checksums}; reports the
     * bytes read to {@code progress}. A damaged meta file is itself the one damaged file.
     */
    static Outcome run(Path dir, int id, boolean checksums, LongConsumer progress) {
        List<Listed> files;
        try {
            files = files(dir, id);
        } catch (StoreException | NumberFormatException e) {
            String meta = "meta/" + id;
            return new Outcome(0, 0, 1, List.of(meta), List.of(meta + ": " + e.getMessage()));
        }
        List<String> damagedFiles = new ArrayList<>();
        List<String> problems = new ArrayList<>();
        long bytes = 0;
        long damaged = 0;
        byte[] buf = new byte[1 << 20];
        long[] size = new long[1];
        for (Listed l : files) {
            size[0] = 0;
            String problem = check(dir.resolve(l.name()), l, checksums, buf, progress, size);
            bytes += size[0];
            if (problem != null) {
                damaged++;
                if (damagedFiles.size() < MAX_PROBLEMS) {
                    damagedFiles.add(l.name());
                    problems.add(l.name() + ": " + problem);
                }
            }
        }
        return new Outcome(files.size(), bytes, damaged, damagedFiles, problems);
    }

    /**
     * Of {@code names}, those backup {@code id} lists that are missing or are regular files whose
     * size or CRC32C differ: proven damaged. A file that could not be read (permissions, a flaky
     * mount, no file handles left) or is not a regular file is not proof, and is left where it is.
     */
    static List<String> stillDamaged(Path dir, int id, List<String> names) {
        List<String> out = new ArrayList<>();
        byte[] buf = new byte[1 << 20];
        try {
            for (Listed l : files(dir, id)) {
                if (!names.contains(l.name())) {
                    continue;
                }
                Path p = dir.resolve(l.name());
                String problem;
                if (Files.isRegularFile(p, LinkOption.NOFOLLOW_LINKS)) {
                    problem = check(p, l, true, buf, n -> { }, new long[1]);
                } else {
                    problem = Files.exists(p, LinkOption.NOFOLLOW_LINKS) ? null : "missing"; // a directory, a link: not ours to move
                }
                if (problem != null && !problem.startsWith(UNREADABLE)) {
                    out.add(l.name());
                }
            }
        } catch (StoreException | NumberFormatException e) {
            return List.of(); // an unreadable meta file names nothing to set aside
        }
        return out;
    }

    /** What is wrong with one file, or null. */
    private static String check(Path p, Listed l, boolean checksums, byte[] buf, LongConsumer progress, long[] sizeOut) {
        try {
            long size = Files.size(p);
            sizeOut[0] = size;
            if (l.size() >= 0 && size != l.size()) {
                return "has " + size + " bytes, the backup recorded " + l.size();
            }
            if (!checksums) {
                return null;
            }
            CRC32C crc = new CRC32C();
            try (InputStream in = Files.newInputStream(p)) {
                for (int n; (n = in.read(buf)) > 0; ) {
                    crc.update(buf, 0, n);
                    progress.accept(n);
                }
            }
            return crc.getValue() == l.crc32c() ? null
                    : "CRC32C " + crc.getValue() + ", the backup recorded " + l.crc32c() + " (its bytes changed on the backup disk)";
        } catch (NoSuchFileException e) {
            return "missing";
        } catch (IOException e) {
            return UNREADABLE + " (" + e.getMessage() + ")";
        }
    }
}
