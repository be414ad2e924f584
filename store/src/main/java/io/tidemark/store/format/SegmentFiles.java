package io.tidemark.store.format;

import java.nio.file.Path;

/**
 * The files of one segment, named by its base offset as 20 decimal digits:
 * {@code 00000000000000000000.log}, {@code .index}, {@code .timeindex}. The other files of a log directory:
 * {@link LogFiles}.
 * <p>
 * Internal: public only so that the store and its inspection tools share it; not part of the API.
 */
public final class SegmentFiles
{
    public static final String LOG_SUFFIX = ".log";
    public static final String INDEX_SUFFIX = ".index";
    public static final String TIME_INDEX_SUFFIX = ".timeindex";
    public static final int NAME_DIGITS = 20;
    /** Suffix of a file made ahead for the next segment ({@link #spare}), deleted when a log opens. */
    public static final String SPARE_SUFFIX = ".spare";
    private static final java.util.concurrent.atomic.AtomicLong SPARE_SEQUENCE =
        new java.util.concurrent.atomic.AtomicLong();

    private final long baseOffset;
    private final Path log;
    private final Path offsetIndex;
    private final Path timeIndex;

    private SegmentFiles(final long baseOffset, final Path log, final Path offsetIndex, final Path timeIndex)
    {
        this.baseOffset = baseOffset;
        this.log = log;
        this.offsetIndex = offsetIndex;
        this.timeIndex = timeIndex;
    }

    /**
     * @param dir the log directory.
     * @return the files of the spare segment the log agent prepares before a roll (renamed at the roll).
     */
    public static SegmentFiles spare(final Path dir)
    {
        // A fresh name each time: a new spare may be prepared while the previous one is being renamed.
        final String stem = "next-" + SPARE_SEQUENCE.incrementAndGet();
        return new SegmentFiles(-1, dir.resolve(stem + LOG_SUFFIX + SPARE_SUFFIX),
            dir.resolve(stem + INDEX_SUFFIX + SPARE_SUFFIX),
            dir.resolve(stem + TIME_INDEX_SUFFIX + SPARE_SUFFIX));
    }

    public SegmentFiles(final Path dir, final long baseOffset)
    {
        this.baseOffset = baseOffset;
        final String name = fileName(baseOffset);
        this.log = dir.resolve(name + LOG_SUFFIX);
        this.offsetIndex = dir.resolve(name + INDEX_SUFFIX);
        this.timeIndex = dir.resolve(name + TIME_INDEX_SUFFIX);
    }

    /**
     * @param baseOffset a segment's base offset.
     * @return its 20-digit file name stem.
     */
    public static String fileName(final long baseOffset)
    {
        final String digits = Long.toString(baseOffset);
        return "0".repeat(NAME_DIGITS - digits.length()) + digits;
    }

    /**
     * @param stem a file name without its suffix.
     * @return the base offset it names, or -1 when it is not 20 decimal digits.
     */
    public static long parseBaseOffset(final String stem)
    {
        if (stem.length() != NAME_DIGITS)
        {
            return -1;
        }
        for (int i = 0; i < NAME_DIGITS; i++)
        {
            final char c = stem.charAt(i);
            if (c < '0' || c > '9')
            {
                return -1;
            }
        }
        try
        {
            return Long.parseLong(stem);
        }
        catch (final NumberFormatException ex)
        {
            return -1;
        }
    }

    public long baseOffset()
    {
        return baseOffset;
    }

    public Path log()
    {
        return log;
    }

    public Path offsetIndex()
    {
        return offsetIndex;
    }

    public Path timeIndex()
    {
        return timeIndex;
    }
}
