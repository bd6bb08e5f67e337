package org.holdfast.bench.workload;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Real file content for the ext4 workload: Debian packages fetched with {@code apt-get download}
 * and unpacked with {@code dpkg-deb -x}, both cached under one directory so that a second run
 * needs no network. When a package cannot be fetched (no network, unknown name), a synthetic
 * tree of the same name is generated instead and the package is reported as synthetic, so the
 * run still works but the report says the content was not real.
 */
public final class DebianPackages {
    private final Path debs;
    private final Path trees;
    private final Map<String, String> versions = new TreeMap<>();
    private boolean updated;

    /** Packages cached under {@code cacheDir}/debs and unpacked under {@code cacheDir}/trees. */
    public DebianPackages(Path cacheDir) throws IOException {
        this.debs = Files.createDirectories(cacheDir.resolve("debs"));
        this.trees = Files.createDirectories(cacheDir.resolve("trees"));
    }

    /** Versions of the packages used so far ("synthetic" for generated stand-ins). */
    public Map<String, String> versions() {
        return versions;
    }

    /** The unpacked tree of a package, fetching and unpacking it on first use. */
    public Path tree(String pkg) throws IOException {
        Path tree = trees.resolve(pkg);
        Path done = trees.resolve(pkg + ".complete");
        if (Files.exists(done)) {
            versions.put(pkg, Files.readString(done).trim());
            return tree;
        }
        Path deb = findDeb(pkg);
        if (deb == null) {
            download(pkg);
            deb = findDeb(pkg);
        }
        deleteTree(tree);
        String version;
        if (deb != null) {
            Files.createDirectories(tree);
            Processes.run(List.of("dpkg-deb", "-x", deb.toString(), tree.toString()), null);
            version = Processes.run(List.of("dpkg-deb", "-f", deb.toString(), "Version"), null).trim();
        } else {
            synthesize(pkg, tree);
            version = "synthetic";
        }
        Files.writeString(done, version);
        versions.put(pkg, version);
        return tree;
    }

    /** Regular files and symlinks of a package's tree, relative, sorted. */
    public List<String> files(String pkg) throws IOException {
        Path tree = tree(pkg);
        List<String> out = new ArrayList<>();
        try (Stream<Path> s = Files.walk(tree)) {
            s.filter(p -> Files.isRegularFile(p, java.nio.file.LinkOption.NOFOLLOW_LINKS) || Files.isSymbolicLink(p))
                    .forEach(p -> out.add(tree.relativize(p).toString()));
        }
        out.sort(null);
        return out;
    }

    private Path findDeb(String pkg) throws IOException {
        try (Stream<Path> s = Files.list(debs)) {
            return s.filter(p -> p.getFileName().toString().startsWith(pkg + "_") && p.toString().endsWith(".deb"))
                    .sorted().findFirst().orElse(null);
        }
    }

    private void download(String pkg) {
        for (int attempt = 0; attempt < 2; attempt++) {
            try {
                Processes.run(List.of("apt-get", "download", "-q", pkg), debs);
                return;
            } catch (IOException e) {
                if (updated || attempt > 0) {
                    System.err.println("bench: cannot download " + pkg + " (" + e.getMessage().lines().findFirst().orElse("")
                            + "); using synthetic content");
                    return;
                }
                // A fresh machine may have no package lists yet.
                updated = true;
                try {
                    Processes.run(List.of("apt-get", "update", "-qq"), null);
                } catch (IOException ignored) {
                    System.err.println("bench: apt-get update failed: " + ignored.getMessage());
                }
            }
        }
    }

    /** A stand-in tree: a few binaries and many small text files, reproducible from the name. */
    private static void synthesize(String pkg, Path tree) throws IOException {
        long seed = BlockContent.mix(pkg.hashCode());
        Path bin = Files.createDirectories(tree.resolve("usr/lib/" + pkg));
        Path doc = Files.createDirectories(tree.resolve("usr/share/doc/" + pkg));
        byte[] buf = new byte[BlockContent.BLOCK];
        for (int f = 0; f < 24; f++) {
            boolean binary = f < 4;
            long size = binary ? (256 << 10) + Math.floorMod(BlockContent.mix(seed + f), 2L << 20)
                    : 2048 + (BlockContent.mix(seed + f) >>> 1) % (64 << 10);
            Path p = binary ? bin.resolve("lib" + pkg + "-" + f + ".so") : doc.resolve("file-" + f + ".txt");
            try (var out = Files.newOutputStream(p)) {
                for (long pos = 0; pos < size; pos += buf.length) {
                    int len = (int) Math.min(buf.length, size - pos);
                    BlockContent.fill(binary ? BlockContent.Kind.BINARY : BlockContent.Kind.TEXT,
                            BlockContent.key(seed, f, pos), buf, 0, len);
                    out.write(buf, 0, len);
                }
            }
        }
        Files.writeString(doc.resolve("SYNTHETIC"), "generated stand-in for " + pkg + "\n", StandardCharsets.UTF_8);
    }

    static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        Processes.run(List.of("rm", "-rf", p.toString()), null);
    }
}
