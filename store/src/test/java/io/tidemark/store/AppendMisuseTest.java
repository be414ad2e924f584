package io.tidemark.store;

import io.tidemark.store.format.Crc32c;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.inspect.LogInspectionReport;
import io.tidemark.store.inspect.LogInspector;

import org.agrona.IoUtil;
import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static io.tidemark.store.TestLogs.bytes;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Misuse of the writer API is detected before any byte is written, and leaves the log usable: two threads appending
 * at once (the log has one writer), arguments that do not fit their buffers, and offsets that would pass
 * {@link Long#MAX_VALUE}.
 */
class AppendMisuseTest
{
    private static final int RACE_APPENDS = Boolean.getBoolean("tidemark.long") ? 1_000_000 : 100_000;

    @TempDir
    Path dir;

    private final CachedEpochClock clock = new CachedEpochClock();

    @BeforeEach
    void setUp()
    {
        clock.update(1_700_000_000_000L);
    }

    /**
     * Two threads append to one log at once, as fast as they can. Allowed outcomes for each call: it returns an
     * offset that no other call got and at which its own record is stored, or it throws IllegalStateException and
     * appends nothing. The log verifies afterwards and holds exactly the records whose appends returned.
     */
    @Test
    @Timeout(120)
    void twoThreadsAppendingAtOnceAreDetectedAndNoOffsetIsHandedOutTwice() throws Exception
    {
        final Path logDir = dir.resolve("race");
        final LogContext ctx = new LogContext().logDir(logDir).segmentBytes(8 << 20).pretouchBytes(1 << 20);
        final long[][] offsets = new long[2][RACE_APPENDS];
        final int[] succeeded = new int[2];
        final int[] refused = new int[2];
        final AtomicReference<Throwable> unexpected = new AtomicReference<>();
        try (Log log = Log.open(ctx))
        {
            final CyclicBarrier start = new CyclicBarrier(2);
            final List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < 2; t++)
            {
                final int writer = t;
                threads.add(new Thread(() ->
                {
                    final UnsafeBuffer value = new UnsafeBuffer(new byte[16]);
                    try
                    {
                        start.await();
                        for (int i = 0; i < RACE_APPENDS; i++)
                        {
                            value.putInt(0, writer);
                            value.putInt(4, i);
                            try
                            {
                                offsets[writer][succeeded[writer]] = log.append(value, 0, value.capacity());
                                succeeded[writer]++;
                            }
                            catch (final IllegalStateException ex)
                            {
                                refused[writer]++;
                            }
                        }
                    }
                    catch (final Throwable ex)
                    {
                        unexpected.compareAndSet(null, ex);
                    }
                }, "writer-" + t));
            }
            threads.forEach(Thread::start);
            for (final Thread thread : threads)
            {
                thread.join();
            }
            assertNull(unexpected.get(), () -> "an append failed with something other than IllegalStateException: " +
                unexpected.get());

            final Map<Long, Integer> owner = new HashMap<>();
            int duplicates = 0;
            for (int t = 0; t < 2; t++)
            {
                for (int i = 0; i < succeeded[t]; i++)
                {
                    if (null != owner.put(offsets[t][i], t))
                    {
                        duplicates++;
                    }
                }
            }
            final String outcome = "succeeded " + succeeded[0] + "+" + succeeded[1] + ", refused " + refused[0] + "+" +
                refused[1] + ", log end " + log.logEndOffset() + ", offsets handed out twice " + duplicates;
            System.out.println("concurrent appends: " + outcome);
            assertEquals(0, duplicates, outcome);
            assertEquals(succeeded[0] + succeeded[1], log.logEndOffset(), outcome);

            final int[] nextSeq = new int[2];
            final int[] readIndex = new int[2];
            final long[] expectedOffset = {0};
            try (LogReader reader = log.openReader())
            {
                while (reader.poll((r) ->
                {
                    assertEquals(expectedOffset[0], r.offset());
                    final int writer = r.buffer().getInt(r.valueOffset());
                    final int seq = r.buffer().getInt(r.valueOffset() + 4);
                    assertEquals(owner.get(r.offset()), writer, "the record at " + r.offset() + " is not its caller's");
                    assertTrue(seq >= nextSeq[writer], "writer " + writer + " records out of order at " + r.offset());
                    assertEquals(offsets[writer][readIndex[writer]], r.offset());
                    nextSeq[writer] = seq + 1;
                    readIndex[writer]++;
                    expectedOffset[0]++;
                }, Long.MAX_VALUE, 10_000) > 0)
                {
                    // read on
                }
            }
            assertEquals(log.logEndOffset(), expectedOffset[0]);
        }
        final LogInspectionReport report = LogInspector.open(logDir).verify();
        assertTrue(report.clean(), () -> "verify rejects the log: " + report.errors());
    }

    /** While one thread holds a claim, every writer call from another thread is refused and changes nothing. */
    @Test
    @Timeout(60)
    void aClaimHeldByOneThreadRefusesEveryWriterCallOfAnother() throws Exception
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("held"), clock)))
        {
            TestLogs.appendText(log, "before");
            final CountDownLatch claimed = new CountDownLatch(1);
            final CountDownLatch checked = new CountDownLatch(1);
            final AtomicReference<Object> committed = new AtomicReference<>();
            final Thread holder = new Thread(() ->
            {
                try
                {
                    final BatchClaim claim = log.tryClaim(256);
                    claim.addRecord(BatchClaim.NOW, null, 0, -1, bytes("held"), 0, 4);
                    claimed.countDown();
                    checked.await(30, TimeUnit.SECONDS);
                    committed.set(claim.commit());
                }
                catch (final Throwable ex)
                {
                    committed.set(ex);
                }
            }, "holder");
            holder.start();
            assertTrue(claimed.await(30, TimeUnit.SECONDS));
            final UnsafeBuffer other = bytes("other");
            assertThrows(IllegalStateException.class, () -> log.append(other, 0, other.capacity()));
            assertThrows(IllegalStateException.class, () -> log.tryClaim(256));
            assertThrows(IllegalStateException.class, () -> log.appendRaw(other, 0, 0));
            assertThrows(IllegalStateException.class, log::roll);
            assertThrows(IllegalStateException.class, () -> log.truncateTo(0));
            assertThrows(IllegalStateException.class, () -> log.truncateFullyAndStartAt(100));
            assertEquals(1, log.logEndOffset());
            checked.countDown();
            holder.join();
            assertEquals(1L, committed.get());
            assertEquals(2, TestLogs.appendText(log, "after"));
            assertEquals(List.of("before", "held", "after"),
                TestLogs.readAll(log).stream().map(TestLogs.Read::value).toList());
        }
    }

    /** An append whose arguments do not fit their buffers throws, writes nothing, and leaves no claim open. */
    @Test
    void anAppendWithBadLengthsLeavesNoOpenClaim()
    {
        try (Log log = Log.open(TestLogs.context(dir.resolve("bad"), clock)))
        {
            final UnsafeBuffer value = bytes("0123456789");
            assertThrows(IndexOutOfBoundsException.class, () -> log.append(value, -1, 5));
            assertThrows(IndexOutOfBoundsException.class, () -> log.append(value, 0, value.capacity() + 1));
            assertThrows(IndexOutOfBoundsException.class, () -> log.append(value, 8, 5));
            assertThrows(IndexOutOfBoundsException.class, () -> log.append(value, Integer.MAX_VALUE, 5));
            assertThrows(IndexOutOfBoundsException.class,
                () -> log.append(BatchClaim.NOW, value, 0, 11, value, 0, 1));
            assertThrows(IllegalArgumentException.class, () -> log.append(BatchClaim.NOW, value, 0, -2, value, 0, 1));
            assertThrows(IllegalArgumentException.class, () -> log.append(value, 0, -2));
            assertEquals(0, log.logEndOffset());
            assertEquals(0, log.append(value, 0, value.capacity()), "a claim was left open by a bad append");

            final BatchClaim claim = log.tryClaim(1024);
            assertThrows(IndexOutOfBoundsException.class,
                () -> claim.addRecord(BatchClaim.NOW, null, 0, -1, value, 4, 10));
            assertThrows(IllegalArgumentException.class, () -> claim.addRecord(BatchClaim.NOW, null, 0, -1, -5));
            assertEquals(0, claim.recordCount(), "a refused record must not be half added");
            claim.addRecord(BatchClaim.NOW, null, 0, -1, value, 0, 3);
            assertEquals(1, claim.commit());
            assertEquals(List.of("0123456789", "012"), TestLogs.readAll(log).stream().map(TestLogs.Read::value).toList());
        }
    }

    /** Lengths whose sum overflows an int are too large, not a negative length. */
    @Test
    void lengthsWhoseSumOverflowsAreRecordTooLarge() throws Exception
    {
        // A 2 GiB sparse file mapped read-only: a buffer that large costs nothing, and reads of it are zeros.
        final Path sparse = dir.resolve("sparse");
        try (RandomAccessFile file = new RandomAccessFile(sparse.toFile(), "rw");
            Log log = Log.open(TestLogs.context(dir.resolve("sum"), clock)))
        {
            file.setLength(Integer.MAX_VALUE);
            final MappedByteBuffer mapping = file.getChannel().map(FileChannel.MapMode.READ_ONLY, 0, Integer.MAX_VALUE);
            final UnsafeBuffer huge = new UnsafeBuffer(mapping);
            final StorageException tooLarge = assertThrows(StorageException.class,
                () -> log.append(BatchClaim.NOW, huge, 0, Integer.MAX_VALUE - 10, huge, 0, Integer.MAX_VALUE - 10));
            assertEquals(StorageErrorCode.RECORD_TOO_LARGE, tooLarge.code());
            assertEquals(0, TestLogs.appendText(log, "fine"));
            IoUtil.unmap(mapping);
        }
    }

    /** Offsets never pass Long.MAX_VALUE: a start offset without room and a batch that would overflow are refused. */
    @Test
    void offsetsAreRefusedBeforeTheyOverflow()
    {
        final Path logDir = dir.resolve("max");
        try (Log log = Log.open(TestLogs.context(logDir, clock)))
        {
            final StorageException noRoom = assertThrows(StorageException.class,
                () -> log.truncateFullyAndStartAt(Long.MAX_VALUE));
            assertEquals(StorageErrorCode.OFFSET_OUT_OF_RANGE, noRoom.code());
            assertEquals(0, log.logEndOffset());

            log.truncateFullyAndStartAt(Long.MAX_VALUE - 3);
            final BatchClaim claim = log.tryClaim(1024);
            for (int i = 0; i < 4; i++)
            {
                claim.addRecord(BatchClaim.NOW, null, 0, -1, bytes("x"), 0, 1);
            }
            final StorageException batchTooLong = assertThrows(StorageException.class, claim::commit);
            assertEquals(StorageErrorCode.OFFSET_OUT_OF_RANGE, batchTooLong.code());
            assertFalse(claim.isActive());
            assertEquals(Long.MAX_VALUE - 3, log.logEndOffset());

            assertEquals(Long.MAX_VALUE - 3, TestLogs.appendText(log, "a"));
            assertEquals(Long.MAX_VALUE - 2, TestLogs.appendText(log, "b"));
            assertEquals(Long.MAX_VALUE - 1, TestLogs.appendText(log, "c"));
            assertEquals(Long.MAX_VALUE, log.logEndOffset());
            final StorageException full = assertThrows(StorageException.class, () -> TestLogs.appendText(log, "d"));
            assertEquals(StorageErrorCode.OFFSET_OUT_OF_RANGE, full.code());
            assertEquals(Long.MAX_VALUE, log.logEndOffset());
            assertEquals(List.of("a", "b", "c"), TestLogs.readAll(log).stream().map(TestLogs.Read::value).toList());
        }
        try (Log log = Log.open(TestLogs.context(logDir, clock)))
        {
            assertEquals(Long.MAX_VALUE, log.logEndOffset());
            assertEquals(List.of("a", "b", "c"), TestLogs.readAll(log).stream().map(TestLogs.Read::value).toList());
        }
    }

    /** The follower path refuses a batch whose offsets would pass Long.MAX_VALUE, and appends none of the bytes. */
    @Test
    void appendRawRefusesABatchWhoseOffsetsWouldOverflow()
    {
        try (Log source = Log.open(TestLogs.context(dir.resolve("source"), clock));
            Log follower = Log.open(TestLogs.context(dir.resolve("follower"), clock)))
        {
            final BatchClaim claim = source.tryClaim(1024);
            claim.addRecord(BatchClaim.NOW, null, 0, -1, bytes("x"), 0, 1);
            claim.addRecord(BatchClaim.NOW, null, 0, -1, bytes("y"), 0, 1);
            claim.commit();
            final UnsafeBuffer batch = new UnsafeBuffer(new byte[4096]);
            final int[] length = new int[1];
            try (LogReader reader = source.openReader())
            {
                reader.pollBatches((b) ->
                {
                    batch.putBytes(0, b.buffer(), b.offset(), b.frameLength());
                    length[0] = b.frameLength();
                }, Long.MAX_VALUE, Integer.MAX_VALUE);
            }
            // The same two records, renumbered to start at Long.MAX_VALUE - 1 (the CRC covers the base offset).
            batch.putLong(RecordBatchDescriptor.BASE_OFFSET_OFFSET, Long.MAX_VALUE - 1);
            batch.putInt(RecordBatchDescriptor.CRC_OFFSET, new Crc32c().compute(batch,
                RecordBatchDescriptor.CRC_START_OFFSET, batch.getInt(0) - RecordBatchDescriptor.CRC_START_OFFSET));
            assertEquals(RecordBatch.VALID, RecordBatch.validate(batch, 0, length[0], Integer.MAX_VALUE, new Crc32c()));

            follower.truncateFullyAndStartAt(Long.MAX_VALUE - 1);
            final StorageException overflow = assertThrows(StorageException.class,
                () -> follower.appendRaw(batch, 0, length[0]));
            assertEquals(StorageErrorCode.OFFSET_OUT_OF_RANGE, overflow.code());
            assertEquals(Long.MAX_VALUE - 1, follower.logEndOffset());
            assertEquals(0, follower.sizeInBytes());

            assertThrows(IndexOutOfBoundsException.class, () -> follower.appendRaw(batch, 8, Integer.MAX_VALUE));
            assertThrows(IndexOutOfBoundsException.class, () -> follower.appendRaw(batch, -8, 64));
            assertEquals(0, follower.sizeInBytes());
        }
    }
}
