package io.tidemark.store;

import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * Readers and tailers running against a writer see every record exactly once, in order, with intact content.
 * Allowed outcome for each reader: the exact sequence 0..N-1; anything else (gap, duplicate, reorder, torn value,
 * corruption error) fails the test.
 */
class LogConcurrencyTest
{
    private static final int RECORDS = Boolean.getBoolean("tidemark.long") ? 2_000_000 : 200_000;

    @TempDir
    Path dir;

    /** Value of record i: its offset then a deterministic pattern, of varying length. */
    static int encode(final UnsafeBuffer buffer, final long offset)
    {
        final int length = 8 + (int)(offset * 7 % 120);
        buffer.putLong(0, offset);
        for (int i = 8; i < length; i++)
        {
            buffer.putByte(i, (byte)(offset + i));
        }
        return length;
    }

    static String check(final RecordView record, final long expected)
    {
        if (record.offset() != expected)
        {
            return "expected offset " + expected + " got " + record.offset();
        }
        final int length = 8 + (int)(expected * 7 % 120);
        if (record.valueLength() != length)
        {
            return "offset " + expected + ": length " + record.valueLength() + " != " + length;
        }
        final int at = record.valueOffset();
        if (record.buffer().getLong(at) != expected)
        {
            return "offset " + expected + ": payload header " + record.buffer().getLong(at);
        }
        for (int i = 8; i < length; i++)
        {
            if (record.buffer().getByte(at + i) != (byte)(expected + i))
            {
                return "offset " + expected + ": byte " + i + " differs";
            }
        }
        return null;
    }

    @Test
    @Timeout(120)
    void readersAndTailersSeeEveryRecordOnceInOrderIntact() throws Exception
    {
        final LogContext ctx = new LogContext().logDir(dir.resolve("log"))
            .segmentBytes(1 << 20)
            .indexIntervalBytes(1024)
            .pretouchBytes(256 * 1024)
            .flushIntervalMs(5)
            .agentIdleStrategy(new YieldingIdleStrategy());
        try (Log log = Log.open(ctx))
        {
            final List<Thread> threads = new ArrayList<>();
            final AtomicReference<String> failure = new AtomicReference<>();
            final CountDownLatch start = new CountDownLatch(1);
            for (int t = 0; t < 3; t++)
            {
                final boolean tailer = t == 0;
                final int batch = 1 + t * 37;
                threads.add(new Thread(() ->
                {
                    final long[] expected = new long[1];
                    try (LogReader reader = log.openReader())
                    {
                        final LogTailer tail = new LogTailer(reader, tailer ?
                            new BusySpinIdleStrategy() : new YieldingIdleStrategy());
                        start.await();
                        while (expected[0] < RECORDS && null == failure.get())
                        {
                            tail.poll((r) ->
                            {
                                final String problem = check(r, expected[0]);
                                if (null != problem)
                                {
                                    failure.compareAndSet(null, problem);
                                }
                                expected[0]++;
                            }, batch);
                        }
                    }
                    catch (final Throwable ex)
                    {
                        failure.compareAndSet(null, ex.toString());
                    }
                }, "reader-" + t));
            }
            threads.forEach(Thread::start);
            start.countDown();
            final UnsafeBuffer value = new UnsafeBuffer(new byte[256]);
            for (long offset = 0; offset < RECORDS; offset++)
            {
                final int length = encode(value, offset);
                if (offset % 3 == 0)
                {
                    final BatchClaim claim = log.tryClaim(1024);
                    final int at = claim.addRecord(BatchClaim.NOW, null, 0, -1, length);
                    claim.buffer().putBytes(at, value, 0, length);
                    assertEquals(offset, claim.commit());
                }
                else
                {
                    assertEquals(offset, log.append(value, 0, length));
                }
            }
            for (final Thread thread : threads)
            {
                thread.join();
            }
            assertNull(failure.get());
            assertEquals(RECORDS, log.logEndOffset());
        }
    }
}
