package org.holdfast.server.ingest.cluster;

import java.nio.file.Path;
import org.holdfast.common.protocol.Register;

/**
 * What a worker says of its GC counts at REGISTER (cluster version 7): the counts file its GC
 * metadata was imported from ({@link CountsImportRecord}) and the highest GC delta it acknowledged
 * ({@link AcknowledgedDeltaMark}). A record that does not read is reported in the direction that
 * keeps the range unswept: no import, and an unknown acknowledged mark (the master fences it).
 */
final class WorkerCountsReport {
    private static final System.Logger LOG = System.getLogger(WorkerCountsReport.class.getName());

    private WorkerCountsReport() {
    }

    /** The report for the GC metadata in {@code gcDir} ({@code range-data/gc}). */
    static Register.Counts of(Path gcDir) {
        CountsImportRecord.Imported imported = null;
        try {
            imported = CountsImportRecord.read(gcDir);
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "reporting no counts import to the master: " + e.getMessage() + "; a counts fence"
                    + " of this worker stays until an import is done again (docs/operations.md, \"Recover a lost master of a"
                    + " data=workers cluster\")");
        }
        long acknowledged;
        try {
            acknowledged = AcknowledgedDeltaMark.read(gcDir.toAbsolutePath().getParent());
        } catch (RuntimeException e) {
            LOG.log(System.Logger.Level.WARNING, "reporting an unknown acknowledged GC mark to the master: " + e.getMessage());
            acknowledged = Register.Counts.UNKNOWN;
        }
        return imported == null ? new Register.Counts(0, 0, acknowledged)
                : new Register.Counts(imported.mark(), imported.range().first(), acknowledged);
    }
}
