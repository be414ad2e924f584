package io.tidemark.store;

import io.tidemark.store.file.FileSync;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.RecordDescriptor;

import io.tidemark.store.config.ConfigDef;
import io.tidemark.store.config.ConfigKey;

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
    /** Size at which the active segment rolls: {@link #CONFIG}. */
    public static final String SEGMENT_BYTES = "segment.bytes";
    /** Age (since the segment's first append) at which the active segment rolls: {@link #CONFIG}. */
    public static final String SEGMENT_MS = "segment.ms";
    /** Upper bound of each sparse index file: {@link #CONFIG}. */
    public static final String SEGMENT_INDEX_BYTES = "segment.index.bytes";
    /** Log bytes between two sparse index entries: {@link #CONFIG}. */
    public static final String INDEX_INTERVAL_BYTES = "index.interval.bytes";
    /** Largest record batch, header included, at most {@link #SEGMENT_BYTES}: {@link #CONFIG}. */
    public static final String MAX_MESSAGE_BYTES = "max.message.bytes";
    /** Flush after this many records: {@link #CONFIG}. */
    public static final String FLUSH_INTERVAL_MESSAGES = "flush.interval.messages";
    /** Flush when the oldest unflushed data is this old (checked by the log agent): {@link #CONFIG}. */
    public static final String FLUSH_INTERVAL_MS = "flush.interval.ms";
    /** Delete the oldest segments while the log is larger than this: {@link #CONFIG}. */
    public static final String RETENTION_BYTES = "retention.bytes";
    /** Delete segments whose newest record is older than this: {@link #CONFIG}. */
    public static final String RETENTION_MS = "retention.ms";
    /** How often the log agent applies retention: {@link #CONFIG}. */
    public static final String RETENTION_CHECK_INTERVAL_MS = "retention.check.interval.ms";
    /** How far ahead of the writer the log agent reserves and pre-faults pages: {@link #CONFIG}. */
    public static final String PRETOUCH_BYTES = "pretouch.bytes";
    /** Whether readers verify each batch's CRC before handing it out: {@link #CONFIG}. */
    public static final String READ_VERIFY_CRC = "read.verify.crc";
    /**
     * Most bytes the writer may have written that the kernel has not been asked to write back ({@link #CONFIG}).
     * About latency, not durability: it never moves the recovery point. Off by default because measured so far it
     * has not paid for itself: on ext4 an {@code msync} is an fsync of the range (a journal commit and a disk cache
     * flush) that holds the agent away from pre-faulting (docs/durability.md).
     */
    public static final String DIRTY_BYTES_MAX = "dirty.bytes.max";
    /** Default of {@link #DIRTY_BYTES_MAX}: 0, off. */
    public static final long DEFAULT_DIRTY_BYTES_MAX = 0;

    private static final long DAYS_7_MS = 7L * 24 * 60 * 60 * 1000;
    private static final long CONFIG_MIN_MESSAGE_BYTES = RecordBatchDescriptor.HEADER_LENGTH + RecordDescriptor.HEADER_LENGTH;

    /**
     * Every key of a log, defined once (name, default, accepted values, documentation): {@link #fromProperties}
     * parses with it, {@link #conclude()} validates with it, and the table of docs/configuration.md is its
     * {@link ConfigDef#markdownTable()}.
     */
    public static final ConfigDef<LogContext> CONFIG = new ConfigDef<LogContext>()
        .define(ConfigKey.ofLong(SEGMENT_BYTES, 1L << 30, 1024, Segment.MAX_FILE_LENGTH)
            .withDefaultText("1073741824 (1 GiB)")
            .withDoc("Size at which the active segment rolls (1 KiB .. 2 GiB-8: positions are ints, and 2 GiB-8 is " +
            "the largest 8-byte-aligned one; every position and length sum is overflow-safe up to it, tested with a " +
            "sparse segment of that size filled past its roll point)."),
            (c) -> c.segmentBytes, LogContext::segmentBytes)
        .define(ConfigKey.ofLong(SEGMENT_MS, DAYS_7_MS, 1, Long.MAX_VALUE)
            .withDefaultText("604800000 (7 days)")
            .withDoc("Age (since the segment's first append) at which it rolls."),
            (c) -> c.segmentMs, LogContext::segmentMs)
        .define(ConfigKey.ofLong(SEGMENT_INDEX_BYTES, 10L * 1024 * 1024,
            4L * OffsetIndex.ENTRY_LENGTH * TimeIndex.ENTRY_LENGTH, Integer.MAX_VALUE)
            .withDoc("Upper bound of each index file, at most 2 GiB-1 (an index is sized to what its segment can " +
            "need)."),
            (c) -> c.segmentIndexBytes, LogContext::segmentIndexBytes)
        .define(ConfigKey.ofLong(INDEX_INTERVAL_BYTES, 4096, 0, Integer.MAX_VALUE)
            .withDoc("Log bytes between two sparse index entries (offset and time index on one schedule)."),
            (c) -> c.indexIntervalBytes, LogContext::indexIntervalBytes)
        .define(ConfigKey.ofLong(MAX_MESSAGE_BYTES, 1024 * 1024, CONFIG_MIN_MESSAGE_BYTES, Segment.MAX_FILE_LENGTH)
            .withDoc("Largest batch, header included; at most `segment.bytes`."),
            (c) -> c.maxMessageBytes, LogContext::maxMessageBytes)
        .define(ConfigKey.ofLong(FLUSH_INTERVAL_MESSAGES, Long.MAX_VALUE, 1, Long.MAX_VALUE)
            .withDefaultText("9223372036854775807 (Long.MAX_VALUE: never)")
            .withDoc("Flush on the append path once this many records are unflushed."),
            (c) -> c.flushIntervalMessages, LogContext::flushIntervalMessages)
        .define(ConfigKey.ofLong(FLUSH_INTERVAL_MS, Long.MAX_VALUE, 1, Long.MAX_VALUE)
            .withDefaultText("9223372036854775807 (Long.MAX_VALUE: never)")
            .withDoc("Flush (from the agent) when the last flush is this old and data is unflushed."),
            (c) -> c.flushIntervalMs, LogContext::flushIntervalMs)
        .define(ConfigKey.ofLong(RETENTION_BYTES, -1, 0, Long.MAX_VALUE).orSpecial(-1L)
            .withDefaultText("-1 (no limit)")
            .withDoc("Delete the oldest segments while the log is larger."),
            (c) -> c.retentionBytes, LogContext::retentionBytes)
        .define(ConfigKey.ofLong(RETENTION_MS, DAYS_7_MS, 0, Long.MAX_VALUE).orSpecial(-1L)
            .withDefaultText("604800000 (7 days)")
            .withDoc("Delete segments whose newest record is older; -1: no limit."),
            (c) -> c.retentionMs, LogContext::retentionMs)
        .define(ConfigKey.ofLong(RETENTION_CHECK_INTERVAL_MS, 5 * 60 * 1000, 1, Long.MAX_VALUE)
            .withDoc("How often the agent applies retention."),
            (c) -> c.retentionCheckIntervalMs, LogContext::retentionCheckIntervalMs)
        .define(ConfigKey.ofLong(PRETOUCH_BYTES, 8L * 1024 * 1024, 0, 1L << 30)
            .withDoc("How far ahead of the writer the agent reserves blocks and pre-faults pages, at least (it also " +
            "keeps a 64 KiB chunk of each index file reserved past its entries); a writer that writes more than this " +
            "in 250 ms gets what it writes in 250 ms, up to 4 times this " +
            "([durability](durability.md#who-prepares-the-pages-ahead-of-the-writer)). At most 1 GiB; 0 disables " +
            "both: the writer then reserves on its own thread."),
            (c) -> c.pretouchBytes, LogContext::pretouchBytes)
        .define(ConfigKey.ofBoolean(READ_VERIFY_CRC, true)
            .withDoc("Readers check each batch's CRC before handing any of it out."),
            LogContext::readVerifyCrc, LogContext::readVerifyCrc)
        .define(ConfigKey.ofLong(DIRTY_BYTES_MAX, DEFAULT_DIRTY_BYTES_MAX, 2 * Segment.PAGE_SIZE, 1L << 30)
            .orSpecial(0L)
            .withDefaultText("0 (off)")
            .withDoc("Bound on the log's written data not yet written back: the agent writes back written pages " +
            "once half of it waits, so the writer does not meet the kernel's dirty-page throttling. Latency, not " +
            "durability: it never moves the recovery point. Off by default until it is measured to pay " +
            "([durability](durability.md#bounded-dirty-data))."),
            (c) -> c.dirtyBytesMax, LogContext::dirtyBytesMax);

    /** Every key {@link #fromProperties(Path, Map)} accepts: the names of {@link #CONFIG}. */
    public static final Set<String> KEYS = CONFIG.names();

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
    private long segmentBytes;
    private long segmentMs;
    private long segmentIndexBytes;
    private long indexIntervalBytes;
    private long maxMessageBytes;
    private long flushIntervalMessages;
    private long flushIntervalMs;
    private long retentionBytes;
    private long retentionMs;
    private long retentionCheckIntervalMs;
    private long pretouchBytes;
    private boolean readVerifyCrc;
    private long dirtyBytesMax;

    private EpochClock epochClock = SystemEpochClock.INSTANCE;
    private CountersManager countersManager;
    private ErrorHandler errorHandler;
    private AgentMode agentMode = AgentMode.DEDICATED;
    private IdleStrategy agentIdleStrategy;
    private ThreadFactory agentThreadFactory = LogContext::daemonThread;
    private FileSync fileSync = FileSync.SYSTEM;
    private boolean concluded;

    /** A context with every key at its default ({@link #CONFIG}) and no log directory yet. */
    public LogContext()
    {
        CONFIG.setDefaults(this);
    }

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
        return CONFIG.setAll(new LogContext().logDir(logDir), properties);
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
        CONFIG.validate(this);
        if (maxMessageBytes > segmentBytes)
        {
            throw new ConfigException(MAX_MESSAGE_BYTES, "value " + maxMessageBytes + " is outside [" +
                CONFIG_MIN_MESSAGE_BYTES + ", " + segmentBytes + "] (at most " + SEGMENT_BYTES + ")");
        }
        if (null == agentIdleStrategy)
        {
            agentIdleStrategy = new SleepingMillisIdleStrategy(1);
        }
        concluded = true;
        return this;
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
        return "LogContext{logDir=" + logDir + ", " + CONFIG.describe(this) +
            ", agentMode=" + agentMode + '}';
    }
}
