package io.tidemark.store;

import java.util.List;

/**
 * What {@link Log#open(LogContext)} found and did: returned by {@link Log#recoveryReport()} and logged.
 *
 * @param cleanShutdown       whether the previous session left the clean-shutdown marker.
 * @param checkpointStatus    whether the checkpoint was read, missing, or corrupt (then ignored).
 * @param recoveryPoint       the recovery point recovery started from (every offset below was trusted).
 * @param segmentsLoaded      segments opened in all.
 * @param segmentsRecovered   segments re-validated batch by batch (CRC, length, offset continuity, epochs).
 * @param batchesScanned      batches re-validated.
 * @param recordsScanned      records in those batches.
 * @param bytesScanned        bytes in those batches.
 * @param bytesTruncated      non-zero bytes cut from the end of the log (torn or garbage tail).
 * @param segmentsDeleted     whole segments deleted: after a truncation point, or below the log start offset.
 * @param indexesRebuilt      segments whose sparse indexes were rebuilt from the log.
 * @param logStartOffset      log start offset after the load.
 * @param logEndOffset        log end offset after the load.
 * @param durationNanos       time the load took.
 * @param notes               one line for every repair or anomaly, in order.
 */
public record RecoveryReport(
    boolean cleanShutdown,
    String checkpointStatus,
    long recoveryPoint,
    int segmentsLoaded,
    int segmentsRecovered,
    long batchesScanned,
    long recordsScanned,
    long bytesScanned,
    long bytesTruncated,
    int segmentsDeleted,
    int indexesRebuilt,
    long logStartOffset,
    long logEndOffset,
    long durationNanos,
    List<String> notes)
{
    /**
     * @return whether recovery changed anything on disk beyond rebuilding indexes.
     */
    public boolean truncated()
    {
        return bytesTruncated > 0 || segmentsDeleted > 0;
    }

    @Override
    public String toString()
    {
        return "RecoveryReport{clean=" + cleanShutdown + ", checkpoint=" + checkpointStatus +
            ", recoveryPoint=" + recoveryPoint + ", segmentsLoaded=" + segmentsLoaded +
            ", segmentsRecovered=" + segmentsRecovered + ", batchesScanned=" + batchesScanned +
            ", recordsScanned=" + recordsScanned + ", bytesScanned=" + bytesScanned +
            ", bytesTruncated=" + bytesTruncated + ", segmentsDeleted=" + segmentsDeleted +
            ", indexesRebuilt=" + indexesRebuilt + ", logStartOffset=" + logStartOffset +
            ", logEndOffset=" + logEndOffset + ", durationMs=" + durationNanos / 1_000_000.0 +
            ", notes=" + notes + '}';
    }
}
