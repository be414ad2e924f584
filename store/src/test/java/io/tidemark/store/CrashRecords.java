package io.tidemark.store;

import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.RecordDescriptor;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.file.Path;
import java.util.Random;

/**
 * The records of the crash suite: every record's key and value are a pure function of its offset, so whoever
 * appended it (a child JVM, the test, before or after any number of crashes) and whoever reads it back can tell
 * whether the bytes served are exactly the bytes appended. Also the log configuration the child and the test
 * share (they must: index sizes follow from it).
 */
final class CrashRecords
{
    static final int SEGMENT_BYTES = 128 * 1024;
    static final int MAX_MESSAGE_BYTES = 32 * 1024;
    static final int KEY_LENGTH = 8;

    private CrashRecords()
    {
    }

    /** The configuration every process of the suite opens a log with (before flush policy and agent mode). */
    static LogContext context(final Path dir)
    {
        return new LogContext()
            .logDir(dir)
            .segmentBytes(SEGMENT_BYTES)
            .segmentIndexBytes(8 * 1024)
            .indexIntervalBytes(1024)
            .maxMessageBytes(MAX_MESSAGE_BYTES)
            .pretouchBytes(32 * 1024)
            .dirtyBytesMax(16 * 1024); // the agent writes back every 8 KiB: kills land during writebacks too
    }

    /** The configuration the test itself opens logs with: no background thread. */
    static LogContext testContext(final Path dir)
    {
        return context(dir).agentMode(LogContext.AgentMode.INVOKER);
    }

    static long mix(final long value)
    {
        long z = value + 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** @return the value length of the record at {@code offset}: -1 (null) now and then, mostly small, some large. */
    static int valueLength(final long offset)
    {
        final long h = mix(offset);
        final int kind = (int)(h & 63);
        if (kind == 0)
        {
            return -1;
        }
        if (kind < 3)
        {
            return 1000 + (int)((h >>> 8) % 6000);
        }
        return (int)((h >>> 8) % 300);
    }

    /** @return the key length of the record at {@code offset}: -1 (null) for a third of them. */
    static int keyLength(final long offset)
    {
        return (mix(offset) >>> 40) % 3 == 0 ? -1 : KEY_LENGTH;
    }

    static byte valueByte(final long offset, final int i)
    {
        final long h = mix(offset ^ 0x5DEECE66DL);
        return (byte)((h >>> ((i & 7) << 3)) ^ i ^ (i >>> 8));
    }

    static int recordLength(final long offset)
    {
        return RecordDescriptor.recordLength(keyLength(offset), valueLength(offset), 0);
    }

    static void fillValue(final MutableDirectBuffer buffer, final int at, final long offset, final int length)
    {
        for (int i = 0; i < length; i++)
        {
            buffer.putByte(at + i, valueByte(offset, i));
        }
    }

    /** @return whether the record holds exactly the key and value appended at its offset. */
    static boolean matches(final RecordView record, final long expectedOffset)
    {
        if (record.offset() != expectedOffset)
        {
            return false;
        }
        final int keyLength = keyLength(expectedOffset);
        final int valueLength = valueLength(expectedOffset);
        if (record.keyLength() != keyLength || record.valueLength() != valueLength || record.headersLength() != 0)
        {
            return false;
        }
        final DirectBuffer buffer = record.buffer();
        if (keyLength > 0 && buffer.getLong(record.keyOffset()) != expectedOffset)
        {
            return false;
        }
        final int at = record.valueOffset();
        for (int i = 0; i < valueLength; i++)
        {
            if (buffer.getByte(at + i) != valueByte(expectedOffset, i))
            {
                return false;
            }
        }
        return true;
    }

    /**
     * Append one batch of up to {@code records} records at the log end (fewer if they would exceed the largest
     * batch), with the single-record {@link Log#append} API when {@code plain} and one record, else with a claim.
     *
     * @return the log end offset after the append.
     */
    static long appendBatch(final Log log, final int records, final boolean plain)
    {
        final long base = log.logEndOffset();
        if (plain || records == 1)
        {
            final int keyLength = keyLength(base);
            final int valueLength = valueLength(base);
            final UnsafeBuffer key = keyBuffer(base);
            final UnsafeBuffer value = valueLength < 0 ? null : new UnsafeBuffer(new byte[valueLength]);
            if (null != value)
            {
                fillValue(value, 0, base, valueLength);
            }
            final long offset = log.append(BatchClaim.NOW, keyLength < 0 ? null : key, 0, keyLength,
                value, 0, valueLength);
            if (offset != base)
            {
                throw new IllegalStateException("append got offset " + offset + ", expected " + base);
            }
            return base + 1;
        }
        int count = 0;
        int length = RecordBatchDescriptor.HEADER_LENGTH;
        while (count < records && length + recordLength(base + count) <= MAX_MESSAGE_BYTES)
        {
            length += recordLength(base + count);
            count++;
        }
        if (count == 0)
        {
            count = 1;
            length = RecordBatchDescriptor.HEADER_LENGTH + recordLength(base);
        }
        final BatchClaim claim = log.tryClaim(length);
        for (int i = 0; i < count; i++)
        {
            final long offset = base + i;
            final int keyLength = keyLength(offset);
            final int valueLength = valueLength(offset);
            final int at = claim.addRecord(BatchClaim.NOW, keyLength < 0 ? null : keyBuffer(offset), 0, keyLength,
                valueLength);
            if (valueLength > 0)
            {
                fillValue(claim.buffer(), at, offset, valueLength);
            }
        }
        final long first = claim.commit();
        if (first != base)
        {
            throw new IllegalStateException("batch got base offset " + first + ", expected " + base);
        }
        return base + count;
    }

    /** Append a random batch (1 to 8 records, a third of single records through the plain API). */
    static long appendRandom(final Log log, final Random random)
    {
        final int shape = random.nextInt(6);
        if (shape < 2)
        {
            return appendBatch(log, 1, shape == 0);
        }
        return appendBatch(log, 1 + random.nextInt(8), false);
    }

    /**
     * A recovered log must take appends where it ends: append {@code batches} random batches and read them back.
     * What goes wrong is counted in the summary as {@code append_failures}.
     */
    static void checkAppendsResume(
        final Log log, final Random random, final int batches, final CrashSupport.Summary summary, final String where)
    {
        try
        {
            final long before = log.logEndOffset();
            for (int i = 0; i < batches; i++)
            {
                appendRandom(log, random);
            }
            final Verification after = verify(log, before, Long.MAX_VALUE);
            if (!after.clean() || after.next != log.logEndOffset())
            {
                summary.fail("append_failures", where + ": new records read back wrong: " + after);
            }
        }
        catch (final RuntimeException ex)
        {
            summary.fail("append_failures", where + ": " + ex);
        }
    }

    private static UnsafeBuffer keyBuffer(final long offset)
    {
        final UnsafeBuffer key = new UnsafeBuffer(new byte[KEY_LENGTH]);
        key.putLong(0, offset);
        return key;
    }

    /** What a read of a log from some offset to its end found. */
    static final class Verification
    {
        long next;
        long served;
        long corruptServed;
        long firstCorrupt = -1;
        StorageException error;
        RuntimeException unchecked;

        boolean clean()
        {
            return corruptServed == 0 && null == error && null == unchecked;
        }

        @Override
        public String toString()
        {
            return "read up to " + next + " (" + served + " records), corrupt served=" + corruptServed +
                (firstCorrupt >= 0 ? " first at " + firstCorrupt : "") +
                (null != error ? ", stopped by " + error : "") + (null != unchecked ? ", unchecked " + unchecked : "");
        }
    }

    /**
     * Read from {@code from} to the log end (or {@code limit}), checking that offsets are dense, in order and that
     * every record holds exactly what was appended at its offset. Stops at the first error.
     */
    static Verification verify(final Log log, final long from, final long limit)
    {
        final Verification v = new Verification();
        v.next = from;
        try (LogReader reader = log.openReader())
        {
            reader.seek(from);
            while (reader.poll((r) ->
            {
                if (!matches(r, v.next))
                {
                    v.corruptServed++;
                    if (v.firstCorrupt < 0)
                    {
                        v.firstCorrupt = v.next;
                    }
                }
                v.next++;
                v.served++;
            }, limit, 4096) > 0)
            {
                // read on
            }
        }
        catch (final StorageException ex)
        {
            v.error = ex;
        }
        catch (final RuntimeException ex)
        {
            v.unchecked = ex;
        }
        return v;
    }

    static Verification verify(final Log log)
    {
        return verify(log, log.logStartOffset(), Long.MAX_VALUE);
    }
}
