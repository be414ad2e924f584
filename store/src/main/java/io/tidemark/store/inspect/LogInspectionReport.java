package io.tidemark.store.inspect;

import io.tidemark.store.file.CheckpointFile;

import java.nio.file.Path;
import java.util.List;

/**
 * What {@link LogInspector#verify()} found in a log directory, without changing anything: a summary of the log as
 * it is on disk and one {@link Finding} per anomaly, each naming the file, position and offsets involved and what
 * the next {@link io.tidemark.store.Log#open} would do about it.
 *
 * @param directory        the log directory.
 * @param metaStatus       whether {@code log.meta} was read, missing or corrupt.
 * @param checkpoint       the {@code log.checkpoint} content (recovery point and log start offset, -1 when not OK).
 * @param cleanShutdown    whether the clean-shutdown marker is present.
 * @param lockOwnerPid     the pid written in {@code .lock} by the last process that opened the log, or -1.
 * @param lockOwnerRunning whether a process with that pid is running (it then most likely has the log open).
 * @param segments         one summary per segment, by base offset.
 * @param batches          valid batches walked.
 * @param records          records in those batches.
 * @param bytes            bytes of those batches (frames).
 * @param logStartOffset   the log start offset the next open would use (checkpoint, else the first segment).
 * @param logEndOffset     the log end offset the next open would arrive at: after the last valid batch, or where
 *                         recovery would truncate damage at or above the recovery point.
 * @param findings         every anomaly, in the order found.
 */
public record LogInspectionReport(
    Path directory,
    CheckpointFile.Status metaStatus,
    LogInspector.Checkpoint checkpoint,
    boolean cleanShutdown,
    long lockOwnerPid,
    boolean lockOwnerRunning,
    List<SegmentSummary> segments,
    long batches,
    long records,
    long bytes,
    long logStartOffset,
    long logEndOffset,
    List<Finding> findings)
{
    /** How serious a finding is. */
    public enum Severity
    {
        /** Damage or an inconsistency: the log does not verify. */
        ERROR,
        /** Not damage, but something the next open will act on (a leftover, an unclean shutdown). */
        WARNING,
        /** Worth knowing (a running owner, files of other layers). */
        INFO
    }

    /**
     * One anomaly.
     *
     * @param severity    how serious it is.
     * @param segmentBase base offset of the segment concerned, or -1 for the directory as a whole.
     * @param message     what is wrong, where, and what the next open would do about it.
     */
    public record Finding(Severity severity, long segmentBase, String message)
    {
        @Override
        public String toString()
        {
            return severity + (segmentBase >= 0 ? " [segment " + segmentBase + "] " : " ") + message;
        }
    }

    /**
     * One segment as found on disk.
     *
     * @param baseOffset         its base offset (from the file name).
     * @param fileSize           size of the {@code .log} file (an active segment is pre-sized).
     * @param dataSize           position after its last valid batch.
     * @param batches            valid batches.
     * @param records            records in them.
     * @param damagedBatches     invalid batches found (stepped over when a valid batch followed).
     * @param endOffset          offset after its last valid batch.
     * @param maxTimestamp       largest record timestamp, or {@link Long#MIN_VALUE} when empty.
     * @param offsetIndexEntries entries of its offset index (-1 when the file is missing or not whole entries).
     * @param timeIndexEntries   entries of its time index (-1 when the file is missing or not whole entries).
     */
    public record SegmentSummary(
        long baseOffset,
        long fileSize,
        int dataSize,
        long batches,
        long records,
        int damagedBatches,
        long endOffset,
        long maxTimestamp,
        int offsetIndexEntries,
        int timeIndexEntries)
    {
    }

    /** @return whether nothing of severity {@link Severity#ERROR} was found. */
    public boolean clean()
    {
        return errors().isEmpty();
    }

    /** @return the findings of severity {@link Severity#ERROR}. */
    public List<Finding> errors()
    {
        return findings.stream().filter((f) -> f.severity() == Severity.ERROR).toList();
    }

    /** @return the findings of severity {@link Severity#WARNING}. */
    public List<Finding> warnings()
    {
        return findings.stream().filter((f) -> f.severity() == Severity.WARNING).toList();
    }
}
