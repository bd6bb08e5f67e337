package org.holdfast.common.protocol;

/**
 * TAKEOVER_RECORDS (0x62), worker to master (cluster version 7, {@link Register#TAKEOVER_RECORDS_VERSION}):
 * a node taking its worker's range over from the bucket asks the master for its records of the
 * worker's sealed logs with a log id above {@code afterLogId} (0: from the first), to check each log
 * it adopts; the master answers one {@link TakeoverRecordsPart}, the next request resuming after its last.
 */
public record TakeoverRecords(long requestId, int afterLogId) implements Message {
    public TakeoverRecords {
        if (afterLogId < 0) {
            throw new IllegalArgumentException("TAKEOVER_RECORDS afterLogId must be 0 or more, got " + afterLogId);
        }
    }

    @Override
    public MessageType type() {
        return MessageType.TAKEOVER_RECORDS;
    }
}
