package org.holdfast.server.jobs;

import java.util.List;

/** Where the runner keeps its jobs across restarts (catalog.JobStore); the runner calls it at every change of state. */
public interface JobHistory {
    /** Keeps nothing: a runner without history (tests, tools). */
    JobHistory NONE = new JobHistory() {
        @Override
        public void save(Job job) {
        }

        @Override
        public List<Job> newest(int limit) {
            return List.of();
        }
    };

    /** Stores the job's current state (replacing its previous one). */
    void save(Job job);

    /** The newest stored jobs, newest first, at most {@code limit}. */
    List<Job> newest(int limit);
}
