package io.tidemark.store;

import io.tidemark.store.file.FileSync;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.RecordDescriptor;

import org.agrona.ErrorHandler;
import org.agrona.concurrent.EpochClock;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.status.CountersManager;

import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ThreadFactory;

/**
 * Everything a {@link Log} is configured with, in one place: the configuration keys (Kafka's names where Kafka
 * has the same setting), their defaults, their validation, and the runtime collaborators (clock, counters,
 * threading). Validation happens once, in {@link #conclude()}, and fails fast with a {@link ConfigException}
 * naming the key.
 * <p>
 * Set values fluently, then pass the context to {@link Log#open(LogContext)}, which concludes it; a concluded
 * context is frozen. Not thread-safe while being built.
 */
public final class LogContext
{
    /**
     * Size at which the active segment rolls. Default 1 GiB, at most 2 GiB - 8 ({@code Integer.MAX_VALUE - 7}, the
     * largest multiple of the 8-byte frame alignment that positions, which are ints, can hold; every position and
     * length computation is overflow-safe up to it).
     */
    public static final String SEGMENT_BYTES = "segment.bytes";
    /** Age (since the segment's first append) at which the active segment rolls. Default 7 days. */
    public static final String SEGMENT_MS = "segment.ms";
    /** Upper bound of each sparse index file. Default 10 MiB, at most 2 GiB - 1. */
    public static final String SEGMENT_INDEX_BYTES = "segment.index.bytes";
    /** Log bytes between two sparse index entries. Default 4096. */
    public static final String INDEX_INTERVAL_BYTES = "index.interval.bytes";
    /** Largest record batch, header included. Default 1 MiB, at most {@link #SEGMENT_BYTES}. */
    public static final String MAX_MESSAGE_BYTES = "max.message.bytes";
    /** Flush after this many records. Default {@link Long#MAX_VALUE}: never by count. */
    public static final String FLUSH_INTERVAL_MESSAGES = "flush.interval.messages";
    /** Flush when the oldest unflushed data is this old (checked by the log agent). Default never. */
    public static final String FLUSH_INTERVAL_MS = "flush.interval.ms";
    /** Delete the oldest segments while the log is larger than this. Default -1: no size limit. */
    public static final String RETENTION_BYTES = "retention.bytes";
    /** Delete segments whose newest record is older than this. Default 7 days; -1: no time limit. */
    public static final String RETENTION_MS = "retention.ms";
    /** How often the log agent applies retention. Default 5 minutes. */
    public static final String RETENTION_CHECK_INTERVAL_MS = "retention.check.interval.ms";
    /**
     * How far ahead of the writer the log agent reserves and pre-faults pages, at least: a writer that writes more
     * than this in 250 ms gets what it writes in 250 ms, up to 4 times this. Default 8 MiB, at most 1 GiB; 0
     * disables.
     */
    public static final String PRETOUCH_BYTES = "pretouch.bytes";
    /** Whether readers verify each batch's CRC before handing it out. Default true. */
    public static final String READ_VERIFY_CRC = "read.verify.crc";
    /**
     * Most bytes the writer may have written that the kernel has not been asked to write back: the log agent starts
     * writeback of every full page written once this many bytes await it, so that the page cache never holds enough
     * of this log's dirty data to throttle the writer. About latency, not durability: it never moves the recovery
     * point (the flush keys do). Default {@value #DEFAULT_DIRTY_BYTES_MAX}: off (the kernel decides when), because
     * measured so far it has not paid for itself: on ext4 an {@code msync} is an fsync of the range (a journal commit
     * and a disk cache flush) that holds the agent away from pre-faulting (docs/durability.md).
     */
    public static final String DIRTY_BYTES_MAX = "dirty.bytes.max";
    /** Default of {@link #DIRTY_BYTES_MAX}: 0, off. */
    public static final long DEFAULT_DIRTY_BYTES_MAX = 0;

    /** Every key {@link #fromProperties(Path, Map)} accepts. */
    public static final Set<String> KEYS = Set.of(
        SEGMENT_BYTES, SEGMENT_MS, SEGMENT_INDEX_BYTES, INDEX_INTERVAL_BYTES, MAX_MESSAGE_BYTES,
        FLUSH_INTERVAL_MESSAGES, FLUSH_INTERVAL_MS, RETENTION_BYTES, RETENTION_MS, RETENTION_CHECK_INTERVAL_MS,
        PRETOUCH_BYTES, READ_VERIFY_CRC, DIRTY_BYTES_MAX);

    /** How the log's background agent (flusher, pretoucher, segment preparer, retention) gets its thread. */
    public enum AgentMode
    {
        /** The log starts and owns one thread for its agent. */
        DEDICATED,
        /** The application calls {@link Log#invokeAgent()} from a thread of its choosing. */
        INVOKER,
        /** The application schedules {@link Log#agent()} itself, e.g. in a shared {@code AgentRunner}. */
        EXTERNAL
    }

    private Path logDir;
    private long segmentBytes = 1L << 30;
    private long segmentMs = 7L * 24 * 60 * 60 * 1000;
    private long segmentIndexBytes = 10L * 1024 * 1024;
    private long indexIntervalBytes = 4096;
    private long maxMessageBytes = 1024 * 1024;
    private long flushIntervalMessages = Long.MAX_VALUE;
    private long flushIntervalMs = Long.MAX_VALUE;
    private long retentionBytes = -1;
    private long retentionMs = 7L * 24 * 60 * 60 * 1000;
    private long retentionCheckIntervalMs = 5 * 60 * 1000;
    private long pretouchBytes = 8L * 1024 * 1024;
    private boolean readVerifyCrc = true;
    private long dirtyBytesMax = DEFAULT_DIRTY_BYTES_MAX;

    private EpochClock epochClock = SystemEpochClock.INSTANCE;
    private CountersManager countersManager;
    private ErrorHandler errorHandler;
    private AgentMode agentMode = AgentMode.DEDICATED;
    private IdleStrategy agentIdleStrategy;
    private ThreadFactory agentThreadFactory = LogContext::daemonThread;
    private FileSync fileSync = FileSync.SYSTEM;
    private boolean concluded;

    /**
     * Build a context from string properties, as read from a file. Unknown keys are rejected (a typo must not
     * silently fall back to a default).
     *
     * @param logDir     the log directory.
     * @param properties key/value pairs using the key constants of this class.
     * @return a new, not yet concluded context.
     */
    public static LogContext fromProperties(final Path logDir, final Map<String, String> properties)
    {
        final LogContext ctx = new LogContext().logDir(logDir);
        for (final Map.Entry<String, String> e : properties.entrySet())
        {
            final String key = e.getKey();
            final String value = e.getValue() == null ? "" : e.getValue().trim();
            switch (key)
            {
                case SEGMENT_BYTES: ctx.segmentBytes(parseLong(key, value)); break;
                case SEGMENT_MS: ctx.segmentMs(parseLong(key, value)); break;
                case SEGMENT_INDEX_BYTES: ctx.segmentIndexBytes(parseLong(key, value)); break;
                case INDEX_INTERVAL_BYTES: ctx.indexIntervalBytes(parseLong(key, value)); break;
                case MAX_MESSAGE_BYTES: ctx.maxMessageBytes(parseLong(key, value)); break;
                case FLUSH_INTERVAL_MESSAGES: ctx.flushIntervalMessages(parseLong(key, value)); break;
                case FLUSH_INTERVAL_MS: ctx.flushIntervalMs(parseLong(key, value)); break;
                case RETENTION_BYTES: ctx.retentionBytes(parseLong(key, value)); break;
                case RETENTION_MS: ctx.retentionMs(parseLong(key, value)); break;
                case RETENTION_CHECK_INTERVAL_MS: ctx.retentionCheckIntervalMs(parseLong(key, value)); break;
                case PRETOUCH_BYTES: ctx.pretouchBytes(parseLong(key, value)); break;
                case READ_VERIFY_CRC: ctx.readVerifyCrc(parseBoolean(key, value)); break;
                case DIRTY_BYTES_MAX: ctx.dirtyBytesMax(parseLong(key, value)); break;
                default: throw new ConfigException(key, "unknown configuration key; known keys are " + KEYS);
            }
        }
        return ctx;
    }

    private static long parseLong(final String key, final String value)
    {
        try
        {
            return Long.parseLong(value.replace("_", ""));
        }
        catch (final NumberFormatException ex)
        {
            throw new ConfigException(key, "not an integer: '" + value + "'");
        }
    }

    private static boolean parseBoolean(final String key, final String value)
    {
        if ("true".equalsIgnoreCase(value))
        {
            return true;
        }
        if ("false".equalsIgnoreCase(value))
        {
            return false;
        }
        throw new ConfigException(key, "not a boolean (true/false): '" + value + "'");
    }

    /**
     * Validate every value. Called by {@link Log#open(LogContext)}; calling it again is a no-op.
     *
     * @return this context, now frozen.
     * @throws ConfigException naming the first offending key.
     */
    public LogContext conclude()
    {
        if (concluded)
        {
            return this;
        }
        if (null == logDir)
        {
            throw new ConfigException("log.dir", "must be set");
        }
        requireRange(SEGMENT_BYTES, segmentBytes, 1024, Segment.MAX_FILE_LENGTH);
        requireRange(SEGMENT_MS, segmentMs, 1, Long.MAX_VALUE);
        requireRange(SEGMENT_INDEX_BYTES, segmentIndexBytes, 4L * OffsetIndex.ENTRY_LENGTH * TimeIndex.ENTRY_LENGTH,
            Integer.MAX_VALUE);
        requireRange(INDEX_INTERVAL_BYTES, indexIntervalBytes, 0, Integer.MAX_VALUE);
        requireRange(MAX_MESSAGE_BYTES, maxMessageBytes,
            RecordBatchDescriptor.HEADER_LENGTH + RecordDescriptor.HEADER_LENGTH, segmentBytes);
        requireRange(FLUSH_INTERVAL_MESSAGES, flushIntervalMessages, 1, Long.MAX_VALUE);
        requireRange(FLUSH_INTERVAL_MS, flushIntervalMs, 1, Long.MAX_VALUE);
        if (retentionBytes != -1)
        {
            requireRange(RETENTION_BYTES, retentionBytes, 0, Long.MAX_VALUE);
        }
        if (retentionMs != -1)
        {
            requireRange(RETENTION_MS, retentionMs, 0, Long.MAX_VALUE);
        }
        requireRange(RETENTION_CHECK_INTERVAL_MS, retentionCheckIntervalMs, 1, Long.MAX_VALUE);
        requireRange(PRETOUCH_BYTES, pretouchBytes, 0, 1L << 30);
        if (dirtyBytesMax != 0)
        {
            requireRange(DIRTY_BYTES_MAX, dirtyBytesMax, 2 * Segment.PAGE_SIZE, 1L << 30);
        }
        if (null == agentIdleStrategy)
        {
            agentIdleStrategy = new SleepingMillisIdleStrategy(1);
        }
        concluded = true;
        return this;
    }

    private static void requireRange(final String key, final long value, final long min, final long max)
    {
        if (value < min || value > max)
        {
            throw new ConfigException(key, "value " + value + " is outside [" + min + ", " + max + "]");
        }
    }

    private void checkNotConcluded()
    {
        if (concluded)
        {
            throw new IllegalStateException("context is concluded (already used to open a log)");
        }
    }

    /** @param logDir the directory holding the log's segments. @return this */
    public LogContext logDir(final Path logDir)
    {
        checkNotConcluded();
        this.logDir = logDir;
        return this;
    }

    /** @return the directory holding the log's segments. */
    public Path logDir()
    {
        return logDir;
    }

    /** @param v see {@link #SEGMENT_BYTES}. @return this */
    public LogContext segmentBytes(final long v)
    {
        checkNotConcluded();
        segmentBytes = v;
        return this;
    }

    /** @return see {@link #SEGMENT_BYTES}. */
    public int segmentBytes()
    {
        return (int)segmentBytes;
    }

    /** @param v see {@link #SEGMENT_MS}. @return this */
    public LogContext segmentMs(final long v)
    {
        checkNotConcluded();
        segmentMs = v;
        return this;
    }

    /** @return see {@link #SEGMENT_MS}. */
    public long segmentMs()
    {
        return segmentMs;
    }

    /** @param v see {@link #SEGMENT_INDEX_BYTES}. @return this */
    public LogContext segmentIndexBytes(final long v)
    {
        checkNotConcluded();
        segmentIndexBytes = v;
        return this;
    }

    /** @return see {@link #SEGMENT_INDEX_BYTES}. */
    public int segmentIndexBytes()
    {
        return (int)segmentIndexBytes;
    }

    /** @param v see {@link #INDEX_INTERVAL_BYTES}. @return this */
    public LogContext indexIntervalBytes(final long v)
    {
        checkNotConcluded();
        indexIntervalBytes = v;
        return this;
    }

    /** @return see {@link #INDEX_INTERVAL_BYTES}. */
    public int indexIntervalBytes()
    {
        return (int)indexIntervalBytes;
    }

    /** @param v see {@link #MAX_MESSAGE_BYTES}. @return this */
    public LogContext maxMessageBytes(final long v)
    {
        checkNotConcluded();
        maxMessageBytes = v;
        return this;
    }

    /** @return see {@link #MAX_MESSAGE_BYTES}. */
    public int maxMessageBytes()
    {
        return (int)maxMessageBytes;
    }

    /** @param v see {@link #FLUSH_INTERVAL_MESSAGES}. @return this */
    public LogContext flushIntervalMessages(final long v)
    {
        checkNotConcluded();
        flushIntervalMessages = v;
        return this;
    }

    /** @return see {@link #FLUSH_INTERVAL_MESSAGES}. */
    public long flushIntervalMessages()
    {
        return flushIntervalMessages;
    }

    /** @param v see {@link #FLUSH_INTERVAL_MS}. @return this */
    public LogContext flushIntervalMs(final long v)
    {
        checkNotConcluded();
        flushIntervalMs = v;
        return this;
    }

    /** @return see {@link #FLUSH_INTERVAL_MS}. */
    public long flushIntervalMs()
    {
        return flushIntervalMs;
    }

    /** @param v see {@link #RETENTION_BYTES}. @return this */
    public LogContext retentionBytes(final long v)
    {
        checkNotConcluded();
        retentionBytes = v;
        return this;
    }

    /** @return see {@link #RETENTION_BYTES}. */
    public long retentionBytes()
    {
        return retentionBytes;
    }

    /** @param v see {@link #RETENTION_MS}. @return this */
    public LogContext retentionMs(final long v)
    {
        checkNotConcluded();
        retentionMs = v;
        return this;
    }

    /** @return see {@link #RETENTION_MS}. */
    public long retentionMs()
    {
        return retentionMs;
    }

    /** @param v see {@link #RETENTION_CHECK_INTERVAL_MS}. @return this */
    public LogContext retentionCheckIntervalMs(final long v)
    {
        checkNotConcluded();
        retentionCheckIntervalMs = v;
        return this;
    }

    /** @return see {@link #RETENTION_CHECK_INTERVAL_MS}. */
    public long retentionCheckIntervalMs()
    {
        return retentionCheckIntervalMs;
    }

    /** @param v see {@link #PRETOUCH_BYTES}. @return this */
    public LogContext pretouchBytes(final long v)
    {
        checkNotConcluded();
        pretouchBytes = v;
        return this;
    }

    /** @return see {@link #PRETOUCH_BYTES}. */
    public int pretouchBytes()
    {
        return (int)pretouchBytes;
    }

    /** @param v see {@link #DIRTY_BYTES_MAX}. @return this */
    public LogContext dirtyBytesMax(final long v)
    {
        checkNotConcluded();
        dirtyBytesMax = v;
        return this;
    }

    /** @return see {@link #DIRTY_BYTES_MAX}. */
    public int dirtyBytesMax()
    {
        return (int)dirtyBytesMax;
    }

    /** @param v see {@link #READ_VERIFY_CRC}. @return this */
    public LogContext readVerifyCrc(final boolean v)
    {
        checkNotConcluded();
        readVerifyCrc = v;
        return this;
    }

    /** @return see {@link #READ_VERIFY_CRC}. */
    public boolean readVerifyCrc()
    {
        return readVerifyCrc;
    }

    /**
     * @param clock wall clock for record timestamps, segment age, retention and flush intervals (a manual clock
     *              in tests). Default {@link SystemEpochClock}.
     * @return this
     */
    public LogContext epochClock(final EpochClock clock)
    {
        checkNotConcluded();
        this.epochClock = clock;
        return this;
    }

    /** @return the wall clock in use. */
    public EpochClock epochClock()
    {
        return epochClock;
    }

    /**
     * @param countersManager where the log allocates its counters (LEO, recovery point, log start, segment
     *                        count). When unset the log maps its own counters file in the log directory, so that
     *                        a tool can read the counters from outside the process.
     * @return this
     */
    public LogContext countersManager(final CountersManager countersManager)
    {
        checkNotConcluded();
        this.countersManager = countersManager;
        return this;
    }

    /** @return the counters manager given by the application, or null. */
    public CountersManager countersManager()
    {
        return countersManager;
    }

    /**
     * @param errorHandler receives errors raised by the log agent (they never escape its thread). Default: logged.
     * @return this
     */
    public LogContext errorHandler(final ErrorHandler errorHandler)
    {
        checkNotConcluded();
        this.errorHandler = errorHandler;
        return this;
    }

    /** @return the agent error handler, or null for the default. */
    public ErrorHandler errorHandler()
    {
        return errorHandler;
    }

    /** @param mode how the log agent is run. Default {@link AgentMode#DEDICATED}. @return this */
    public LogContext agentMode(final AgentMode mode)
    {
        checkNotConcluded();
        this.agentMode = mode;
        return this;
    }

    /** @return how the log agent is run. */
    public AgentMode agentMode()
    {
        return agentMode;
    }

    /**
     * @param idleStrategy idle strategy of the dedicated agent thread. Default: sleep 1 ms when idle.
     * @return this
     */
    public LogContext agentIdleStrategy(final IdleStrategy idleStrategy)
    {
        checkNotConcluded();
        this.agentIdleStrategy = idleStrategy;
        return this;
    }

    /** @return idle strategy of the dedicated agent thread. */
    public IdleStrategy agentIdleStrategy()
    {
        return agentIdleStrategy;
    }

    /**
     * @param threadFactory makes the dedicated agent thread ({@link AgentMode#DEDICATED}); the log names it
     *                      {@code tidemark-log-<directory name>}. Default: a daemon thread. The log never needs its
     *                      agent thread to finish for durability (an append is in the page cache when it returns, and
     *                      a log not closed is recovered at the next open, as after a kill), so a JVM whose
     *                      application returned without closing its log exits; a factory making non-daemon threads
     *                      keeps such a JVM alive until {@link Log#close()}.
     * @return this
     */
    public LogContext agentThreadFactory(final ThreadFactory threadFactory)
    {
        checkNotConcluded();
        this.agentThreadFactory = threadFactory;
        return this;
    }

    /** @return makes the dedicated agent thread. */
    public ThreadFactory agentThreadFactory()
    {
        return agentThreadFactory;
    }

    private static Thread daemonThread(final Runnable runnable)
    {
        final Thread thread = new Thread(runnable);
        thread.setDaemon(true);
        return thread;
    }

    /**
     * How data, checkpoints and directory entries are forced to disk ({@link FileSync#SYSTEM} by default): a seam for
     * fault injection (a failing disk, a crash between two durable steps) in tests and simulations.
     *
     * @param fileSync the sync implementation.
     * @return this
     */
    public LogContext fileSync(final FileSync fileSync)
    {
        checkNotConcluded();
        this.fileSync = java.util.Objects.requireNonNull(fileSync, "fileSync");
        return this;
    }

    /** @return how data, checkpoints and directory entries are forced to disk. */
    public FileSync fileSync()
    {
        return fileSync;
    }

    @Override
    public String toString()
    {
        return "LogContext{logDir=" + logDir +
            ", " + SEGMENT_BYTES + "=" + segmentBytes +
            ", " + SEGMENT_MS + "=" + segmentMs +
            ", " + SEGMENT_INDEX_BYTES + "=" + segmentIndexBytes +
            ", " + INDEX_INTERVAL_BYTES + "=" + indexIntervalBytes +
            ", " + MAX_MESSAGE_BYTES + "=" + maxMessageBytes +
            ", " + FLUSH_INTERVAL_MESSAGES + "=" + flushIntervalMessages +
            ", " + FLUSH_INTERVAL_MS + "=" + flushIntervalMs +
            ", " + RETENTION_BYTES + "=" + retentionBytes +
            ", " + RETENTION_MS + "=" + retentionMs +
            ", " + RETENTION_CHECK_INTERVAL_MS + "=" + retentionCheckIntervalMs +
            ", " + PRETOUCH_BYTES + "=" + pretouchBytes +
            ", " + DIRTY_BYTES_MAX + "=" + dirtyBytesMax +
            ", " + READ_VERIFY_CRC + "=" + readVerifyCrc +
            ", agentMode=" + agentMode + '}';
    }
}
