package org.holdfast.server.app;

import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicBoolean;
import org.holdfast.server.gc.GcJobs;
import org.holdfast.server.jobs.JobState;
import org.holdfast.server.jobs.Jobs;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.holdfast.server.catalog.AgentStore;
import org.holdfast.server.catalog.Catalog;
import org.holdfast.server.catalog.DailyStatsStore;
import org.holdfast.server.gc.GcService;
import org.holdfast.server.gc.StoreSurvey;
import org.holdfast.server.stats.AgentLedger;
import org.holdfast.server.ingest.IngestServer;
import org.holdfast.server.ingest.RunningBackups;
import org.holdfast.server.stats.DailySeries;
import org.holdfast.server.stats.StatsHistory;
import org.holdfast.server.stats.Statistics;
import org.holdfast.server.stats.TransferRates;
import org.holdfast.server.store.DataDirectory;
import org.holdfast.server.store.DataStore;
import org.holdfast.server.store.MetadataDb;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Conditional;
import org.springframework.context.annotation.Configuration;

/**
 * Wires statistics ({@code holdfast.stats.*}): the report, the block survey refreshed every
 * {@code survey-interval} together with today's record of the daily series, the agent ledger the
 * ingest port reports to. Not on a worker ({@link OnStandaloneOrMaster}); the disk-space check and
 * metric are in {@link HealthConfiguration}.
 */
@Configuration(proxyBeanMethods = false)
@Conditional(OnStandaloneOrMaster.class)
@EnableConfigurationProperties(StatsConfiguration.StatsProperties.class)
public class StatsConfiguration {
    private static final Logger LOG = LoggerFactory.getLogger(StatsConfiguration.class);

    /**
     * {@code surveyInterval}: how often the block survey (a walk of every stored block) and today's
     * daily record are refreshed in the background, and the oldest survey a report uses as is.
     */
    @ConfigurationProperties("holdfast.stats")
    public record StatsProperties(@DefaultValue("5m") Duration surveyInterval, @DefaultValue("10s") Duration sampleInterval) {
        public StatsProperties {
            if (surveyInterval.isNegative() || surveyInterval.isZero()) {
                throw new IllegalArgumentException("holdfast.stats.survey-interval must be positive, got " + surveyInterval);
            }
            if (sampleInterval.compareTo(Duration.ofSeconds(1)) < 0) {
                throw new IllegalArgumentException("holdfast.stats.sample-interval must be at least 1s, got " + sampleInterval);
            }
        }
    }

    /** Samples kept in the in-memory history (two hours at the default interval). */
    static final int HISTORY_SAMPLES = 720;

    @Bean
    StatsHistory statsHistory() {
        return new StatsHistory(HISTORY_SAMPLES);
    }

    /** The backups in progress, as the ingest port keeps them. */
    @Bean
    RunningBackups runningBackups(IngestServer ingest) {
        return ingest.runningBackups();
    }

    @Bean
    TransferRates transferRates(Clock holdfastClock) {
        return new TransferRates(holdfastClock::millis);
    }

    @Bean
    Statistics statistics(Catalog catalog, DataDirectory dir, DataStore dataStore, GcService gc, GcBookkeepingMode mode,
                          TransferRates rates, Clock holdfastClock, StatsProperties p) {
        // bookkeeping off: no GC metadata to read, nothing is ever reclaimed
        StoreSurvey survey = new StoreSurvey(dataStore, mode == GcBookkeepingMode.ON ? gc.pipeline() : null);
        return new Statistics(catalog, dir.root(), dataStore.dir(), survey, rates, holdfastClock, p.surveyInterval(),
                gc.compactionThreshold());
    }

    @Bean
    DailySeries dailySeries(MetadataDb db, TransferRates rates, Clock holdfastClock) {
        return new DailySeries(new DailyStatsStore(db), rates, holdfastClock);
    }

    /** The ingest port's observer (CoreConfiguration hands it to the ingest services). */
    @Bean
    AgentLedger agentLedger(MetadataDb db, TransferRates rates, Clock holdfastClock) {
        return new AgentLedger(new AgentStore(db), rates, holdfastClock);
    }

    @Bean
    StatsRefresh statsRefresh(Statistics statistics, DailySeries daily, StatsHistory history, StatsProperties p, Jobs jobs,
                              AgentLedger ledger) {
        StatsRefresh refresh = new StatsRefresh(statistics, daily, history, p.surveyInterval(), p.sampleInterval());
        // what a backup stored shows in the stored figures soon, not only at the next interval
        ledger.afterCommit(() -> refresh.refreshSoon(StatsRefresh.BACKUP_SPACING, true));
        // what a GC job freed shows in the figures at once, not at the next interval
        jobs.onEnded(job -> {
            if (job.state() == JobState.SUCCEEDED && RESHAPING_JOBS.contains(job.kind())) {
                refresh.refreshSoon(Duration.ZERO, false);
            }
        });
        return refresh;
    }

    /** Job kinds that change what is stored or reclaimable. */
    private static final java.util.Set<String> RESHAPING_JOBS = java.util.Set.of(GcJobs.CYCLE, GcJobs.COMPACTION, GcJobs.RECLAIM);

    /**
     * Refreshes the survey and writes today's daily record every interval, the first right after
     * startup (so the day has its record even if the server stops soon), and adds a sample to the
     * in-memory history every sample interval; stops before the stores close.
     */
    static final class StatsRefresh extends ScheduledLifecycle {
        private final Statistics statistics;
        private final DailySeries daily;
        private final StatsHistory history;
        private final Duration interval;
        private final Duration sampleInterval;
        /** The least time between a refresh and one a committed backup asks for. */
        static final Duration BACKUP_SPACING = Duration.ofSeconds(10);
        private final AtomicBoolean pending = new AtomicBoolean();
        private volatile long lastRefreshMillis;

        StatsRefresh(Statistics statistics, DailySeries daily, StatsHistory history, Duration interval, Duration sampleInterval) {
            super("stats-refresh");
            this.statistics = statistics;
            this.daily = daily;
            this.history = history;
            this.interval = interval;
            this.sampleInterval = sampleInterval;
        }

        /**
         * Schedules one refresh off the caller's thread, at once unless the last one ran less than
         * {@code spacing} ago (then when that has passed): many small backups in a row cost one survey
         * per {@link #BACKUP_SPACING}, not one each; {@code paced}: not before the survey's own pacing
         * allows either (Statistics.refreshSurveyPaced). Paced requests while one is pending join it; an
         * unpaced one (a GC job's) never does: joined to a backup's, it would wait and then skip its survey
         * under the pacing, and a large store showed what GC freed only up to 20 survey lengths later.
         * Does nothing while stopped.
         */
        synchronized void refreshSoon(Duration spacing, boolean paced) {
            ScheduledExecutorService executor = executor();
            if (executor == null || paced && !pending.compareAndSet(false, true)) {
                return;
            }
            long wait = Math.max(0, lastRefreshMillis + spacing.toMillis() - System.currentTimeMillis());
            executor.schedule(() -> {
                if (paced) {
                    pending.set(false);
                }
                try {
                    refresh(paced);
                } catch (RuntimeException e) {
                    LOG.warn("statistics refresh after a GC job or a backup failed; the next interval retries", e);
                }
            }, wait, TimeUnit.MILLISECONDS);
        }

        /** One refresh: survey (skipped if {@code paced} and the survey's pacing says not yet), report, today's record. */
        void refresh(boolean paced) {
            lastRefreshMillis = System.currentTimeMillis();
            if (paced) {
                statistics.refreshSurveyPaced();
            } else {
                statistics.refreshSurvey();
            }
            daily.update(statistics.report());
        }

        @Override
        ScheduledExecutorService schedule() {
            ScheduledThreadPoolExecutor executor = newScheduler();
            // a refresh a backup asked for that is still waiting is dropped at stop, not waited for
            executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
            long ms = Math.max(1000, interval.toMillis());
            executor.scheduleWithFixedDelay(() -> {
                try {
                    refresh(true);
                } catch (RuntimeException e) {
                    LOG.warn("statistics refresh failed; will retry in {}", interval, e);
                }
            }, 0, ms, TimeUnit.MILLISECONDS);
            executor.scheduleWithFixedDelay(() -> {
                try {
                    history.add(statistics.figures());
                } catch (RuntimeException e) {
                    LOG.warn("statistics sample failed; will retry in {}", sampleInterval, e);
                }
            }, 0, sampleInterval.toMillis(), TimeUnit.MILLISECONDS);
            return executor;
        }
    }
}
