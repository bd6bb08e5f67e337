package org.holdfast.server.engine;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * Dedup efficiency against S_SFI, the analogue of thesis figure 6.6, on the generated stream of
 * {@link EngineComparisonTest} at twice its size. Prints a markdown table (rows: SFI as a fraction
 * of the exact index's memory; columns: U_segment with the defaults, then the thesis' one-sample
 * stabilization without and with the Bloom-guided fallback). Runs with -Pslow:
 *
 * <pre>mvn -B -o -pl server test -Pslow -Dtest=EngineEfficiencyTable</pre>
 */
@Tag("slow")
class EngineEfficiencyTable {

    @Test
    void efficiency_versusSfiSize_printedAsTable() throws Exception {
        Path base = Files.createTempDirectory("hf-eff");
        BackupStreamGenerator.Params p = BackupStreamGenerator.Params.small().scaled(2);
        BackupStreamGenerator gen = new BackupStreamGenerator(
                new BackupStreamGenerator.Params(p.volumes(), p.blocksPerVolume(), p.baseShare(), p.days(),
                        p.dailyChange(), 4096, p.seed()));
        EngineReplay.Result exact = EngineComparisonTest.replayExact(base, gen);
        long exactMemory = exact.stored() * EngineComparisonTest.EXACT_ENTRY_BYTES;
        System.out.printf("stream: %d fingerprints, exact finds %d duplicates, stores %d (%d bytes at 40 B/entry)%n",
                exact.fingerprints(), exact.duplicatesFound(), exact.stored(), exactMemory);
        int[] segments = {512, 1024, 4096};
        System.out.println("| S_SFI / exact | U_seg 512 | U_seg 1024 | U_seg 4096 | 4096, thesis stable | 4096, thesis stable + fallback |");
        System.out.println("|---|---|---|---|---|---|");
        int run = 0;
        for (int fraction : new int[] {8, 16, 32, 64, 128, 256}) {
            StringBuilder row = new StringBuilder("| 1/" + fraction + " |");
            for (int useg : segments) {
                SungemSettings s = EngineComparisonTest.settingsFor(exactMemory, fraction, false, 2).withSegment(useg);
                row.append(String.format(" %.4f |", eff(base.resolve("r" + run++), gen, s, exact)));
            }
            SungemSettings thesis = EngineComparisonTest.settingsFor(exactMemory, fraction, false, 0);
            row.append(String.format(" %.4f |", eff(base.resolve("r" + run++), gen, thesis, exact)));
            SungemSettings fallback = EngineComparisonTest.settingsFor(exactMemory, fraction, true, 0);
            row.append(String.format(" %.4f |", eff(base.resolve("r" + run++), gen, fallback, exact)));
            System.out.println(row);
        }
        EngineThroughputBenchmark.delete(base);
    }

    private static double eff(Path dir, BackupStreamGenerator gen, SungemSettings s, EngineReplay.Result exact) {
        long[] sfi = new long[1];
        EngineReplay.Result r = EngineComparisonTest.replaySungem(dir, gen, s, sfi);
        if (r.falseDuplicates() != 0) {
            throw new AssertionError("false duplicates: " + r.falseDuplicates());
        }
        return r.efficiencyAgainst(exact);
    }
}
