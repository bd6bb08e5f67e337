package org.holdfast.client.scan;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Arrays;
import java.util.concurrent.atomic.AtomicBoolean;
import org.holdfast.client.AgentException;
import org.holdfast.client.ExitCode;
import org.holdfast.common.hash.BlockHasher;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The reader's mapped path for regular files: the same blocks as positional reads, no mapping left
 * behind, a file that shrinks under the scan reported as an I/O error (never hashed as zeros), one
 * that grows read to the size it had, and block devices and other sources still read.
 */
class MappedReadTest {
    private static final int BS = 4096;

    @TempDir
    Path dir;

    @Test
    void scan_mappedAgainstRead_sameBlocksHashesAndChangedBytes_noMappingLeft() throws Exception {
        byte[] img = BlockReaderTest.image(300 * BS + 1234, 9); // not a multiple of 4 KiB: the last block is read, not mapped
        Path file = dir.resolve("odd.img");
        Files.write(file, img);
        ChangeHash hash = new ChangeHash(77);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            assertThat(BlockReader.Source.regularFile(ch).mappableFile()).isSameAs(ch);
            Chunks mapped = scan(BlockReader.Source.regularFile(ch), img.length, hash);
            Chunks read = scan(ch::read, img.length, hash);
            assertThat(mapped.fingerprints).isEqualTo(read.fingerprints);
            assertThat(mapped.changeHashes).isEqualTo(read.changeHashes);
            assertThat(mapped.zero).isEqualTo(read.zero);
            assertThat(mapped.sourceBytes).isEqualTo(read.sourceBytes).isEqualTo(img.length);
            // every block's bytes, as a full backup's consumer reads them (the tail past the end as zeros)
            byte[] expect = Arrays.copyOf(img, 301 * BS);
            assertThat(mapped.bytes).isEqualTo(read.bytes).isEqualTo(expect);
            BlockHasher h = new BlockHasher();
            byte[] fp = new byte[32];
            h.fingerprint(expect, 300 * BS, BS, fp, 0);
            assertThat(Arrays.copyOfRange(mapped.fingerprints, 300 * 32, 301 * 32)).isEqualTo(fp);
        }
        assertThat(Files.readString(Path.of("/proc/self/maps"))).as("mappings of the scanned file").doesNotContain(file.toString());
    }

    @Test
    void scan_fileShrinksWhileMapped_ioErrorNotZeros() throws Exception {
        long size = 64L * BS;
        Path file = dir.resolve("shrinks.img");
        Files.write(file, BlockReaderTest.image((int) size, 3));
        AtomicBoolean cut = new AtomicBoolean();
        // data and holes alternate every 4 blocks; asking for the second stretch cuts the file to 6 blocks,
        // after the chunk (the whole file) was mapped at the first
        DataRegions regions = new DataRegions() {
            @Override
            public long nextData(long offset) {
                if (offset >= 4 * BS && cut.compareAndSet(false, true)) {
                    try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
                        f.setLength(6 * BS);
                    } catch (IOException e) {
                        throw new IllegalStateException(e);
                    }
                }
                long stretch = offset / (8 * BS) * (8 * BS);
                return offset - stretch < 4 * BS ? offset : stretch + 8 * BS < size ? stretch + 8 * BS : NO_MORE_DATA;
            }

            @Override
            public long nextHole(long offset) {
                return offset / (8 * BS) * (8 * BS) + 4 * BS;
            }

            @Override
            public boolean findsHoles() {
                return true;
            }

            @Override
            public void close() {
            }
        };
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
             BlockReader r = new BlockReader(BlockReader.Source.regularFile(ch), size, BS, ChangedBlockList.all(size / BS),
                     (int) size, 2, 1, regions, null)) {
            assertThatThrownBy(() -> drain(r)).isInstanceOf(AgentException.class)
                    .satisfies(e -> assertThat(((AgentException) e).exitCode()).isEqualTo(ExitCode.LOCAL_IO))
                    .hasMessageContaining("cannot read the source").hasMessageContaining("shrink");
        }
        assertThat(cut).isTrue();
    }

    @Test
    void scan_fileShorterBeforeItsChunkIsMapped_readReportsItAsBefore() throws Exception {
        long size = 32L * BS;
        Path file = dir.resolve("short.img");
        Files.write(file, BlockReaderTest.image((int) size / 2, 4)); // the scan was told 32 blocks, the file has 16
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
             BlockReader r = new BlockReader(ch, size, BS, ChangedBlockList.all(size / BS), 8 * BS, 2, 2)) {
            assertThatThrownBy(() -> drain(r)).isInstanceOf(AgentException.class)
                    .hasMessageContaining("did it shrink while being read");
        }
    }

    @Test
    void scan_fileGrowsDuringScan_readsTheSizeItHadExactly() throws Exception {
        int size = 40 * BS;
        byte[] img = BlockReaderTest.image(size, 5);
        Path file = dir.resolve("grows.img");
        Files.write(file, img);
        byte[] more = new byte[64 * BS];
        Arrays.fill(more, (byte) 7);
        ChangeHash hash = new ChangeHash(1);
        Chunks got;
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            BlockReader.Source growing = new BlockReader.Source() {
                boolean grown;

                @Override
                public int read(ByteBuffer dst, long position) throws IOException {
                    return ch.read(dst, position);
                }

                @Override
                public FileChannel mappableFile() {
                    if (!grown) {
                        grown = true;
                        try {
                            Files.write(file, more, StandardOpenOption.APPEND);
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                    }
                    return ch;
                }
            };
            got = scan(growing, size, hash);
        }
        assertThat(Files.size(file)).isEqualTo(size + more.length);
        assertThat(got.bytes).isEqualTo(img);
        assertThat(got.sourceBytes).isEqualTo(size);
    }

    @Test
    void blockSource_blockDeviceAndOtherSources_areReadNotMapped() throws Exception {
        Path file = dir.resolve("f.img");
        Files.write(file, new byte[BS]);
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            assertThat(new VolumeSource(file, ch, BS, true).blockSource().mappableFile()).as("block device").isNull();
            assertThat(new VolumeSource(file, ch, BS, false).blockSource().mappableFile()).as("regular file").isSameAs(ch);
            BlockReader.Source plain = ch::read;
            assertThat(plain.mappableFile()).as("a qcow2 image over NBD, or any other source").isNull();
        }
    }

    @Test
    void scan_mappingFails_reportedAsSourceIoError() throws Exception {
        Path file = dir.resolve("closed.img");
        Files.write(file, BlockReaderTest.image(16 * BS, 6));
        FileChannel ch = FileChannel.open(file, StandardOpenOption.READ);
        ch.close(); // map() and read() both fail: ClosedChannelException
        try (BlockReader r = new BlockReader(ch, 16 * BS, BS, ChangedBlockList.all(16), 8 * BS, 2, 2)) {
            assertThatThrownBy(() -> drain(r)).isInstanceOf(AgentException.class)
                    .satisfies(e -> assertThat(((AgentException) e).exitCode()).isEqualTo(ExitCode.LOCAL_IO))
                    .hasMessageContaining("cannot read the source");
        }
    }

    private record Chunks(byte[] fingerprints, long[] changeHashes, boolean[] zero, byte[] bytes, long sourceBytes) {
    }

    /** A full scan (every block SHA-256 hashed and handed over with its bytes) with cheap hashes, in 32 KiB chunks. */
    private static Chunks scan(BlockReader.Source source, long size, ChangeHash hash) throws Exception {
        int blocks = (int) ((size + BS - 1) / BS);
        Chunks out = new Chunks(new byte[blocks * 32], new long[2 * blocks], new boolean[blocks], new byte[blocks * BS], 0);
        long sourceBytes = 0;
        try (BlockReader r = new BlockReader(source, size, BS, ChangedBlockList.all(blocks), 8 * BS, 3, 2,
                DataRegions.wholeFile(size), null, new BlockReader.ChangeHashing(hash, null))) {
            for (ScannedChunk c; (c = r.next()) != null; ) {
                int first = (int) c.firstLbn();
                System.arraycopy(c.fingerprints(), 0, out.fingerprints, first * 32, c.blocks() * 32);
                System.arraycopy(c.changeHashes(), 0, out.changeHashes, 2 * first, 2 * c.blocks());
                for (int i = 0; i < c.blocks(); i++) {
                    out.zero[first + i] = c.isZero(i);
                }
                c.data().get(0, out.bytes, first * BS, c.blocks() * BS);
                sourceBytes += c.sourceBytesRead();
                r.release(c);
            }
        }
        return new Chunks(out.fingerprints, out.changeHashes, out.zero, out.bytes, sourceBytes);
    }

    private static void drain(BlockReader r) throws InterruptedException {
        for (ScannedChunk c; (c = r.next()) != null; ) {
            r.release(c);
        }
    }
}
