package org.holdfast.server.engine;

import java.time.Duration;
import org.holdfast.server.container.Container;

/**
 * The parameters of the Sungem engine: the thesis' eight (section 6.1.1) and those of the Bloom
 * filter chain and container locking. Defaults and why:
 *
 * <ul>
 *   <li>{@code uSegment} = 4096: upper bound of an input segment. Figure 6.6: efficiency grows
 *       from 512 to 4096 (longer basic sharing units need fewer samples).</li>
 *   <li>{@code k} = 2: stored segments a fingerprint may belong to; the value of figures 6.4-6.6.</li>
 *   <li>{@code tBsu} = 2: exact matches that make a segment stable. Figure 6.4: best at 2 (1
 *       stabilizes too eagerly, &gt; 2 wastes SFI memory).</li>
 *   <li>{@code sfiBytes} = 64 MiB (S_SFI): memory of the SFI. At about 31 bytes per sample it holds
 *       some 2 M samples, enough for 2 billion fingerprints in stable 1024-fingerprint units; the
 *       thesis measures at 1/32 to 1/128 of the full index.</li>
 *   <li>{@code sInit} = 16: a new segment keeps about one sample per 16 fingerprints (the 1/16 of
 *       figures 6.4 and 6.6). A power of two; it sets the initial sampling level log2(sInit).</li>
 *   <li>{@code containerCacheBytes} = 256 MiB (S_container): containers kept in memory. Figure 6.2
 *       varies it from 1/1024 to 1/8 of the full index; a quarter of it more bounds the buffer of
 *       containers waiting to be written.</li>
 *   <li>{@code tSummary} = 8 (T_summary): the thesis' "minimum length of any segment that deserves a
 *       summary fingerprint". Shorter stored segments get no SFI samples (they are found through
 *       their container, placed beside their neighbours), and partial matches shorter than it do
 *       not form stored segments of their own.</li>
 *   <li>{@code uContainer} = 16384 (U_container): fingerprints per container, the value of
 *       figure 6.2 and, at about 64 bytes per entry, the 1 MiB that figure 6.3 finds best.</li>
 * </ul>
 *
 * Beyond the eight: the Bloom filter chain keeps {@code bloomPeriods} = 9 filters of one
 * {@code bloomPeriod} (a day) each (thesis 6.2.4: 99 % of duplicates recur within 9 days), each
 * sized for {@code bloomExpectedPerPeriod} new fingerprints at {@code bloomFalsePositiveRate};
 * {@code readOnlyLockTimeout} is the thesis' read-only container threshold (5.8);
 * {@code stableLevels} = 2: what becoming stable does to a segment's samples. The thesis keeps one
 * (0 here); on the generated multi-volume stream of EngineComparisonTest that finds 98.3 % of the
 * duplicates at S_SFI = 1/32 of the exact index, because regions shifted out of a stable segment
 * no longer hit a sample; down-sampling a stable segment by two levels (4 times fewer samples)
 * finds 99.7 %, and the rate-based LRU still thins it under memory pressure.
 * {@code exactFallback} (off by default) enables the Bloom-guided lookup of unresolved fingerprints
 * in an on-disk exact map: 100 % on that stream, but every new fingerprint costs a RocksDB put,
 * which caps a mostly new stream far below the 300,000 fingerprints/s target; see
 * docs/benchmarks.md. {@code recentContainers} is how many containers of a stream's recent matches are
 * searched besides those the SFI names.
 */
public record SungemSettings(
        int uSegment,
        int k,
        int tBsu,
        long sfiBytes,
        int sInit,
        long containerCacheBytes,
        int tSummary,
        int uContainer,
        Duration bloomPeriod,
        int bloomPeriods,
        long bloomExpectedPerPeriod,
        double bloomFalsePositiveRate,
        Duration readOnlyLockTimeout,
        boolean exactFallback,
        int recentContainers,
        int stableLevels) {

    /** Default U_segment. */
    public static final int DEFAULT_U_SEGMENT = 4096;
    /** Default K. */
    public static final int DEFAULT_K = 2;
    /** Default T_BSU. */
    public static final int DEFAULT_T_BSU = 2;
    /** Default S_SFI in bytes. */
    public static final long DEFAULT_SFI_BYTES = 64L << 20;
    /** Default S_init. */
    public static final int DEFAULT_S_INIT = 16;
    /** Default S_container in bytes. */
    public static final long DEFAULT_CONTAINER_CACHE_BYTES = 256L << 20;
    /** Default T_summary. */
    public static final int DEFAULT_T_SUMMARY = 8;
    /** Default U_container. */
    public static final int DEFAULT_U_CONTAINER = 16384;

    /** Checks every bound; a bad setting fails at startup with its name. */
    public SungemSettings {
        require(uSegment >= 16 && uSegment <= 65536, "uSegment must be within 16..65536: " + uSegment);
        require(k >= 1 && k <= Container.MAX_K, "k must be within 1.." + Container.MAX_K + ": " + k);
        require(tBsu >= 1, "tBsu must be at least 1: " + tBsu);
        require(sfiBytes >= 4096, "sfiBytes must be at least 4096: " + sfiBytes);
        require(sInit >= 1 && Integer.bitCount(sInit) == 1, "sInit must be a power of two: " + sInit);
        require(containerCacheBytes >= 1 << 16, "containerCacheBytes must be at least 64 KiB: " + containerCacheBytes);
        require(tSummary >= 1, "tSummary must be at least 1: " + tSummary);
        require(uContainer >= 2 * uSegment && uContainer <= Container.MAX_FINGERPRINTS,
                "uContainer must be within 2*uSegment.." + Container.MAX_FINGERPRINTS + ": " + uContainer);
        require(bloomPeriod != null && !bloomPeriod.isNegative() && !bloomPeriod.isZero(), "bloomPeriod must be positive");
        require(bloomPeriods >= 1 && bloomPeriods <= 366, "bloomPeriods must be within 1..366: " + bloomPeriods);
        require(bloomExpectedPerPeriod >= 1, "bloomExpectedPerPeriod must be positive");
        require(bloomFalsePositiveRate > 0 && bloomFalsePositiveRate < 0.5, "bloomFalsePositiveRate must be within (0, 0.5)");
        require(readOnlyLockTimeout != null && !readOnlyLockTimeout.isNegative(), "readOnlyLockTimeout must not be negative");
        require(recentContainers >= 0 && recentContainers <= 16, "recentContainers must be within 0..16");
        require(stableLevels >= 0 && stableLevels <= 16, "stableLevels must be within 0..16: " + stableLevels);
    }

    private static void require(boolean ok, String message) {
        if (!ok) {
            throw new IllegalArgumentException(message);
        }
    }

    /** The defaults above. */
    public static SungemSettings defaults() {
        return new SungemSettings(DEFAULT_U_SEGMENT, DEFAULT_K, DEFAULT_T_BSU, DEFAULT_SFI_BYTES, DEFAULT_S_INIT,
                DEFAULT_CONTAINER_CACHE_BYTES, DEFAULT_T_SUMMARY, DEFAULT_U_CONTAINER, Duration.ofDays(1), 9,
                4_000_000, 0.01, Duration.ofMillis(2), false, 4, 2);
    }

    /** A copy with another S_SFI. */
    public SungemSettings withSfiBytes(long bytes) {
        return new SungemSettings(uSegment, k, tBsu, bytes, sInit, containerCacheBytes, tSummary, uContainer, bloomPeriod,
                bloomPeriods, bloomExpectedPerPeriod, bloomFalsePositiveRate, readOnlyLockTimeout, exactFallback,
                recentContainers, stableLevels);
    }

    /** A copy with another U_segment (and U_container at least twice it). */
    public SungemSettings withSegment(int uSeg) {
        return new SungemSettings(uSeg, k, tBsu, sfiBytes, sInit, containerCacheBytes, tSummary,
                Math.max(uContainer, 2 * uSeg), bloomPeriod, bloomPeriods, bloomExpectedPerPeriod, bloomFalsePositiveRate,
                readOnlyLockTimeout, exactFallback, recentContainers, stableLevels);
    }

    /** A copy with another stabilization: 0 keeps the anchor only (thesis), n down-samples n levels. */
    public SungemSettings withStableLevels(int levels) {
        return new SungemSettings(uSegment, k, tBsu, sfiBytes, sInit, containerCacheBytes, tSummary, uContainer,
                bloomPeriod, bloomPeriods, bloomExpectedPerPeriod, bloomFalsePositiveRate, readOnlyLockTimeout,
                exactFallback, recentContainers, levels);
    }

    /** A copy with the exact fallback on or off. */
    public SungemSettings withExactFallback(boolean on) {
        return new SungemSettings(uSegment, k, tBsu, sfiBytes, sInit, containerCacheBytes, tSummary, uContainer,
                bloomPeriod, bloomPeriods, bloomExpectedPerPeriod, bloomFalsePositiveRate, readOnlyLockTimeout, on,
                recentContainers, stableLevels);
    }

    /** A copy with another S_container. */
    public SungemSettings withContainerCacheBytes(long bytes) {
        return new SungemSettings(uSegment, k, tBsu, sfiBytes, sInit, bytes, tSummary, uContainer, bloomPeriod,
                bloomPeriods, bloomExpectedPerPeriod, bloomFalsePositiveRate, readOnlyLockTimeout, exactFallback,
                recentContainers, stableLevels);
    }

    /** A copy with other container and sampling parameters. */
    public SungemSettings withShape(int uSeg, int kk, int tBsuNew, int sInitNew, int tSummaryNew, int uContainerNew) {
        return new SungemSettings(uSeg, kk, tBsuNew, sfiBytes, sInitNew, containerCacheBytes, tSummaryNew, uContainerNew,
                bloomPeriod, bloomPeriods, bloomExpectedPerPeriod, bloomFalsePositiveRate, readOnlyLockTimeout,
                exactFallback, recentContainers, stableLevels);
    }

    /** A copy with other Bloom filter chain sizing. */
    public SungemSettings withBloom(Duration period, int periods, long expectedPerPeriod, double fpRate) {
        return new SungemSettings(uSegment, k, tBsu, sfiBytes, sInit, containerCacheBytes, tSummary, uContainer, period,
                periods, expectedPerPeriod, fpRate, readOnlyLockTimeout, exactFallback, recentContainers, stableLevels);
    }
}
