package io.tidemark.store.format;

/**
 * The files of a log directory and their names:
 * <pre>
 *   log.meta                     marks the directory as a Tidemark log ({@link CheckpointDescriptor})
 *   log.checkpoint               recovery point and log start offset ({@link CheckpointDescriptor})
 *   .lock                        held with an OS file lock while the log is open; holds the holder's identity
 *   .clean-shutdown              present only after a clean close
 *   counters.dat                 the log's counters for tools in other processes ({@link CountersDescriptor})
 *   00000000000000000000.log     a segment's record batches ({@link RecordBatchDescriptor}), named by its base
 *   00000000000000000000.index   its offset index ({@link IndexDescriptor})
 *   00000000000000000000.timeindex  its time index ({@link IndexDescriptor})
 *   next-N.log.spare, ...        a segment prepared ahead of a roll ({@link SegmentFiles#spare})
 *   *.tmp                        a checkpoint being written (replaced by an atomic rename)
 * </pre>
 * A log opens a directory that holds only these (a directory holding anything else and no {@code log.meta} is
 * refused).
 */
public final class LogFiles
{
    /** The file that marks a directory as a Tidemark log. */
    public static final String META_FILE = "log.meta";
    /** The log's checkpoint: recovery point and log start offset. */
    public static final String CHECKPOINT_FILE = "log.checkpoint";
    /** The file locked while the log is open. */
    public static final String LOCK_FILE = ".lock";
    /** The marker of a clean close. */
    public static final String CLEAN_SHUTDOWN_FILE = ".clean-shutdown";
    /** The log's counters file. */
    public static final String COUNTERS_FILE = "counters.dat";

    private LogFiles()
    {
    }
}
