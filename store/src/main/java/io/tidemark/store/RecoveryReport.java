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
 * @param losses              data the checkpoint said was there and recovery did not find, each typed: empty after
 *                            every crash of the process and every power loss of a disk that keeps what it flushed.
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
    List<String> notes,
    List<RecoveryReport.Loss> losses)
{
    /** What kind of data recovery did not find. */
    public enum LossKind
    {
        /**
         * The data ends below the recovery point: offsets the log had flushed are gone (a disk that lost blocks it
         * acknowledged, a VM that acknowledged a flush it did not keep, a file cut short or overwritten). The log end
         * and the recovery point were clamped to where the valid data ends, and the rest cut off: the log never
         * claims offsets it cannot read. A replica reporting this has lost records it may have acknowledged.
         */
        FLUSHED_TAIL,
        /**
         * The first segment found starts above the checkpointed log start: the log start moved up to it. Either a
         * retention or log-start advance was interrupted by a crash (they delete segments before they checkpoint), or
         * segment files were lost.
         */
        LEADING_SEGMENTS
    }

    /**
     * One range of offsets {@code [fromOffset, toOffset)} recovery did not find.
     *
     * @param kind       what was lost.
     * @param fromOffset first offset lost.
     * @param toOffset   offset after the last one lost.
     */
    public record Loss(LossKind kind, long fromOffset, long toOffset)
    {
    }

    /**
     * @return whether flushed records at the end of the log were lost ({@link LossKind#FLUSHED_TAIL}): the log may
     *         have lost records it had acknowledged as durable.
     */
    public boolean flushedDataLost()
    {
        return losses.stream().anyMatch((loss) -> loss.kind() == LossKind.FLUSHED_TAIL);
    }

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
            ", notes=" + notes + ", losses=" + losses + '}';
    }
}
