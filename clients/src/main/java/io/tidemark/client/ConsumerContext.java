package io.tidemark.client;

import io.tidemark.store.ConfigException;
import io.tidemark.store.LogNames;
import io.tidemark.store.config.ConfigDef;
import io.tidemark.store.config.ConfigKey;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * Configuration of a {@link Consumer}, in one place: keys (Kafka's names and defaults), validation that fails fast
 * with a {@link ConfigException} naming the key, and the wait strategy. Concluded (validated and frozen) when a
 * consumer is built from it. Not thread-safe while being built.
 * <p>
 * There is no {@code enable.auto.commit}: offsets are committed explicitly ({@code commitSync}/{@code commitAsync}),
 * which is what processing exactly once needs anyway (commit after processing).
 */
public final class ConsumerContext
{
    /** Consumer group whose committed offsets this consumer reads and writes; none: no committed offsets. */
    public static final String GROUP_ID = "group.id";
    /** Where to start without a committed offset, or when the position is out of range. Default latest. */
    public static final String AUTO_OFFSET_RESET = "auto.offset.reset";
    /** Most records one poll delivers. Default 500. */
    public static final String MAX_POLL_RECORDS = "max.poll.records";
    /** Directory of the groups' committed-offset files. Default: consumer-offsets beside the cluster's hosts. */
    public static final String OFFSETS_DIR = "offsets.dir";

    /**
     * Every key, defined once (type, default, accepted values, documentation): {@link #fromProperties} parses with
     * it, {@link #conclude()} validates with it, and the table of docs/configuration.md is its
     * {@link ConfigDef#markdownTable()}.
     */
    public static final ConfigDef<ConsumerContext> CONFIG = new ConfigDef<ConsumerContext>()
        .define(ConfigKey.ofString(GROUP_ID, null).withValidator(ConsumerContext::groupIdProblem)
            .withDefaultText("none")
            .withDoc("Group whose committed offsets the consumer reads and writes. Without one, there are no " +
            "committed offsets. `[A-Za-z0-9._-]`: it names a directory."),
            (c) -> c.groupId, (c, v) -> c.groupId(v.isEmpty() ? null : v))
        .define(ConfigKey.of(AUTO_OFFSET_RESET, AutoOffsetReset.class, AutoOffsetReset.LATEST,
            ConsumerContext::parseReset).withValidator((v) -> null == v ? "must not be null" : null)
            .withDefaultText("`latest`")
            .withDoc("Without a committed offset, or with a position out of range: `earliest`, `latest`, or `none` " +
            "(throw `OffsetOutOfRangeException`)."),
            (c) -> c.autoOffsetReset, ConsumerContext::autoOffsetReset)
        .define(ConfigKey.ofInt(MAX_POLL_RECORDS, 500, 1, Integer.MAX_VALUE)
            .withDoc("Most records one poll delivers."),
            (c) -> c.maxPollRecords, ConsumerContext::maxPollRecords)
        .define(ConfigKey.of(OFFSETS_DIR, Path.class, null, Path::of)
            .withDefaultText("`consumer-offsets` beside the cluster's host directories")
            .withDoc("Where the groups' committed-offset files live."),
            (c) -> c.offsetsDir, ConsumerContext::offsetsDir);

    /** Every key {@link #fromProperties(Map)} accepts: the names of {@link #CONFIG}. */
    public static final Set<String> KEYS = CONFIG.names();

    /** What to do without a committed offset, or with a position outside the leader's log. */
    public enum AutoOffsetReset
    {
        /** Start at the log start offset. */
        EARLIEST,
        /** Start at the high watermark: only records committed from now on. */
        LATEST,
        /** Throw {@link OffsetOutOfRangeException}. */
        NONE
    }

    private String groupId;
    private AutoOffsetReset autoOffsetReset;
    private int maxPollRecords;
    private Path offsetsDir;
    private Supplier<IdleStrategy> idleStrategySupplier = () -> new BackoffIdleStrategy(100, 10, 1_000, 1_000_000);
    private boolean concluded;

    /** A context with every key at its default ({@link #CONFIG}). */
    public ConsumerContext()
    {
        CONFIG.setDefaults(this);
    }

    /**
     * @param properties key/value pairs using the key constants of this class; unknown keys are rejected.
     * @return a new context.
     */
    public static ConsumerContext fromProperties(final Map<String, String> properties)
    {
        return CONFIG.setAll(new ConsumerContext(), properties);
    }

    private static AutoOffsetReset parseReset(final String value)
    {
        switch (value.toLowerCase(Locale.ROOT))
        {
            case "earliest": return AutoOffsetReset.EARLIEST;
            case "latest": return AutoOffsetReset.LATEST;
            case "none": return AutoOffsetReset.NONE;
            default: throw new ConfigException(AUTO_OFFSET_RESET, "not earliest, latest or none: '" + value + "'");
        }
    }

    /**
     * Validate every value (called when a consumer is built; idempotent).
     *
     * @return this context, frozen.
     */
    public ConsumerContext conclude()
    {
        if (concluded)
        {
            return this;
        }
        CONFIG.validate(this);
        if (null == idleStrategySupplier)
        {
            throw new ConfigException("idleStrategySupplier", "must not be null");
        }
        concluded = true;
        return this;
    }

    private static String groupIdProblem(final String groupId)
    {
        if (null != groupId)
        {
            try
            {
                LogNames.validate(groupId);
            }
            catch (final IllegalArgumentException ex)
            {
                return ex.getMessage();
            }
        }
        return null;
    }

    private void checkNotConcluded()
    {
        if (concluded)
        {
            throw new IllegalStateException("context is concluded (already used to build a consumer)");
        }
    }

    /** @param v see {@link #GROUP_ID}; null for none. @return this */
    public ConsumerContext groupId(final String v)
    {
        checkNotConcluded();
        groupId = v;
        return this;
    }

    /** @return see {@link #GROUP_ID}; null for none. */
    public String groupId()
    {
        return groupId;
    }

    /** @param v see {@link #AUTO_OFFSET_RESET}. @return this */
    public ConsumerContext autoOffsetReset(final AutoOffsetReset v)
    {
        checkNotConcluded();
        autoOffsetReset = v;
        return this;
    }

    /** @return see {@link #AUTO_OFFSET_RESET}. */
    public AutoOffsetReset autoOffsetReset()
    {
        return autoOffsetReset;
    }

    /** @param v see {@link #MAX_POLL_RECORDS}. @return this */
    public ConsumerContext maxPollRecords(final int v)
    {
        checkNotConcluded();
        maxPollRecords = v;
        return this;
    }

    /** @return see {@link #MAX_POLL_RECORDS}. */
    public int maxPollRecords()
    {
        return maxPollRecords;
    }

    /** @param v see {@link #OFFSETS_DIR}; null for the default. @return this */
    public ConsumerContext offsetsDir(final Path v)
    {
        checkNotConcluded();
        offsetsDir = v;
        return this;
    }

    /** @return see {@link #OFFSETS_DIR}; null for the default. */
    public Path offsetsDir()
    {
        return offsetsDir;
    }

    /**
     * @param supplier how {@code poll(handler, timeoutMs)} waits when nothing is new (one strategy per consumer built
     *                 from this context): the default backs off from spinning to parking 1 ms (tailing without
     *                 burning a core); {@code BusySpinIdleStrategy::new} for the lowest latency.
     * @return this
     */
    public ConsumerContext idleStrategySupplier(final Supplier<IdleStrategy> supplier)
    {
        checkNotConcluded();
        idleStrategySupplier = supplier;
        return this;
    }

    /** @return the wait strategy factory. */
    public Supplier<IdleStrategy> idleStrategySupplier()
    {
        return idleStrategySupplier;
    }
}
