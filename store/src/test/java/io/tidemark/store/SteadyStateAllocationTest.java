package io.tidemark.store;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The hot paths allocate nothing per record in steady state: appends (one record, and a claimed batch), a
 * sequential poll, and a seek followed by a read (offset index lookup), with the log's agent invoked on the same
 * thread (INVOKER mode) so that its reservations and pre-touching are counted too. The thread's allocated bytes
 * are counted over windows of 50,000 operations; an allocation count, not a timing (the JMH benchmarks report
 * time, and their {@code gc.alloc.rate.norm} covers JMH's own threads as well).
 */
class SteadyStateAllocationTest
{
    private static final int OPERATIONS = 50_000;
    /** One-off events (a deoptimisation that re-materialises scalar-replaced objects); one object per op is 800 KB. */
    private static final long ONE_OFF_BYTES = 4096;

    @TempDir
    Path dir;

    private long sink;

    @Test
    void appendsReadsAndLookupsAllocateNothing()
    {
        final java.lang.management.ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        Assumptions.assumeTrue(threads instanceof com.sun.management.ThreadMXBean,
            "this JVM cannot count allocated bytes per thread");
        final com.sun.management.ThreadMXBean counter = (com.sun.management.ThreadMXBean)threads;
        final long thread = Thread.currentThread().getId();
        try (Log log = Log.open(new LogContext().logDir(dir).segmentBytes(256L * 1024 * 1024)
            .agentMode(LogContext.AgentMode.INVOKER));
            LogReader reader = log.openReader())
        {
            final UnsafeBuffer value = new UnsafeBuffer(new byte[100]);
            final UnsafeBuffer key = new UnsafeBuffer(new byte[8]);
            final RecordHandler handler = (record) -> sink += record.offset();
            final java.util.Random random = new java.util.Random(7);
            final String[] paths = { "append", "claim", "poll", "seek+read" };
            for (int round = 0; round < 2; round++) // round 0 warms up
            {
                for (final String path : paths)
                {
                    final long before = counter.getThreadAllocatedBytes(thread);
                    for (int i = 0; i < OPERATIONS; i++)
                    {
                        switch (path)
                        {
                            case "append" -> log.append(value, 0, value.capacity());
                            case "claim" ->
                            {
                                final BatchClaim claim = log.tryClaim(1024);
                                claim.addRecord(BatchClaim.NOW, key, 0, key.capacity(), value, 0, value.capacity());
                                claim.addRecord(BatchClaim.NOW, key, 0, key.capacity(), value, 0, value.capacity());
                                claim.commit();
                            }
                            case "poll" ->
                            {
                                if (reader.poll(handler, Long.MAX_VALUE, 1) == 0)
                                {
                                    reader.seekToBeginning();
                                }
                            }
                            default ->
                            {
                                reader.seek(random.nextInt((int)log.logEndOffset()));
                                assertEquals(1, reader.poll(handler, Long.MAX_VALUE, 1));
                            }
                        }
                        if ((i & 1023) == 0)
                        {
                            log.invokeAgent();
                        }
                    }
                    final long allocated = counter.getThreadAllocatedBytes(thread) - before;
                    if (round == 1)
                    {
                        System.out.println("store steady state, " + path + ": " + allocated + " bytes allocated over " +
                            OPERATIONS + " operations");
                        assertTrue(allocated < ONE_OFF_BYTES, path + ": " + allocated + " bytes over " + OPERATIONS +
                            " operations");
                    }
                }
            }
        }
    }
}
