package org.holdfast.server.stats;

/**
 * Spaces the block surveys that nobody waits for (the periodic one, the one after a backup) by
 * their own cost. A survey walks every stored block: about 0.5 µs each, so a store of 100 M blocks
 * takes a core for close to a minute, and at the default five-minute interval plus one after every
 * backup the surveys alone would keep a core busy. The next paced survey starts no sooner than
 * {@link #DUTY_FACTOR} times the last one's length after that one: at most 1/{@value #DUTY_FACTOR}
 * of one core, whatever the store's size. Small stores are unaffected (a 0.2 s survey allows one
 * every 4 s).
 */
final class SurveyPacing {
    /** Time between paced surveys, as a multiple of the last survey's length. */
    static final int DUTY_FACTOR = 20;

    /** A survey this long or longer also holds back reports past their maximum age (a store of ~2 M blocks). */
    static final long SLOW_SURVEY_MILLIS = 1000;

    private volatile long lastMillis;

    /** Records how long the latest survey took. */
    void took(long millis) {
        lastMillis = Math.max(0, millis);
    }

    /**
     * The age a survey must reach before a report walks the blocks again: its maximum age, or the paced
     * wait once surveys are slow. Not the paced wait on a small store: a report there served a survey
     * from before the backup it was asked about (StatsApiTest, whose survey-interval of 1 ms means
     * every report is exact, failed so).
     */
    long reportMinAgeMillis(long maxAgeMillis) {
        return lastMillis >= SLOW_SURVEY_MILLIS ? minAgeMillis(maxAgeMillis) : maxAgeMillis;
    }

    /** The age a survey must reach before a paced one replaces it: at least {@code floorMillis}. */
    long minAgeMillis(long floorMillis) {
        return Math.max(floorMillis, DUTY_FACTOR * lastMillis);
    }
}
