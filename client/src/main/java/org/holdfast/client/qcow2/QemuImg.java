package org.holdfast.client.qcow2;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/** What the agent asks {@code qemu-img}: an image's format, size and bitmaps; adding and removing bitmaps. */
final class QemuImg {
    private static final ObjectMapper JSON = new ObjectMapper();

    private QemuImg() {
    }

    /** A persistent dirty bitmap of a qcow2 image. */
    record Bitmap(String name, List<String> flags) {
        /** Set while an image is open for writing; left set if the writer died: the bitmap may have missed writes. */
        boolean inUse() {
            return flags.contains("in-use");
        }

        /** The bitmap records writes (a disabled one stopped recording). */
        boolean enabled() {
            return flags.contains("auto");
        }
    }

    /** The answer of {@code qemu-img info}. */
    record Info(String format, long virtualSize, List<Bitmap> bitmaps) {
        Bitmap bitmap(String name) {
            return bitmaps.stream().filter(b -> b.name().equals(name)).findFirst().orElse(null);
        }
    }

    static Info info(Path image) throws IOException {
        JsonNode j = JSON.readTree(Tool.run(List.of("qemu-img", "info", "--output=json", image.toString())));
        List<Bitmap> bitmaps = new ArrayList<>();
        for (JsonNode b : j.path("format-specific").path("data").path("bitmaps")) {
            List<String> flags = new ArrayList<>();
            b.path("flags").forEach(f -> flags.add(f.asText()));
            bitmaps.add(new Bitmap(b.path("name").asText(), flags));
        }
        return new Info(j.path("format").asText(), j.path("virtual-size").asLong(-1), bitmaps);
    }

    /** Adds an enabled persistent bitmap {@code name}: from now on it records every write. */
    static void addBitmap(Path image, String name) throws IOException {
        Tool.run(List.of("qemu-img", "bitmap", "--add", "--enable", "-f", "qcow2", image.toString(), name));
    }

    static void removeBitmap(Path image, String name) throws IOException {
        Tool.run(List.of("qemu-img", "bitmap", "--remove", "-f", "qcow2", image.toString(), name));
    }
}
