package io.tidemark.bench.multiprocess;

import io.tidemark.client.remote.RemoteReader;
import io.tidemark.client.remote.TidemarkClient;
import io.tidemark.store.RecordView;
import org.agrona.DirectBuffer;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * Reads the acknowledged records of a latency phase back from their partitions' leaders, through
 * {@link RemoteReader} (committed records only, every batch's CRC checked), and checks that each is at the offset its
 * acknowledgement gave, with the content its producer wrote. Copies of a record at other offsets (a retried send
 * with acks 1 or 2, which are not idempotent) are counted, not failed.
 */
final class ReadBack
{
    private static final int MAX_RECORDS_PER_POLL = 10_000;
    private static final long IDLE_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    private ReadBack()
    {
    }

    /**
     * Outcome of a read-back.
     *
     * @param applicable   false for acks=0: no offsets were acknowledged.
     * @param acknowledged records acknowledged with an offset.
     * @param found        of those, read back at their offset with their content.
     * @param copies       further copies of acknowledged records at other offsets.
     * @param problem      the first problem, or null.
     * @param note         why there was no read-back (not applicable), or null.
     */
    record Outcome(boolean applicable, long acknowledged, long found, long copies, String problem, String note)
    {
        /** @return the outcome for acks=0. */
        static Outcome notApplicable()
        {
            return notApplicable("acks=0: no offsets acknowledged");
        }

        /** @return the outcome when there is nothing to read back, and why. */
        static Outcome notApplicable(final String why)
        {
            return new Outcome(false, 0, 0, 0, null, why);
        }

        /** @return whether nothing acknowledged is missing or wrong. */
        boolean ok()
        {
            return null == problem;
        }

        /** @return the outcome in words. */
        String describe()
        {
            if (!applicable)
            {
                return "not applicable (" + note + ")";
            }
            return (ok() ? "yes: " : "**no**: " + problem + "; ") + found + " of " + acknowledged +
                " acknowledged records read back at their offsets" +
                (copies > 0 ? ", " + copies + " extra copies" : "");
        }
    }

    /**
     * @param offsets     acknowledged offset by sequence number, -1 for none.
     * @param partitionOf partition by sequence number (where {@code offsets} is not -1).
     * @return what the read-back found.
     */
    static Outcome verify(final TidemarkClient client, final String topic, final int partitions, final int recordSize,
        final int tag, final long[] offsets, final int[] partitionOf, final long timeoutMs)
    {
        long acknowledged = 0;
        long found = 0;
        long copies = 0;
        String problem = null;
        final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        for (int p = 0; p < partitions; p++)
        {
            final PartitionCheck check = new PartitionCheck(p, recordSize, tag, offsets, partitionOf);
            acknowledged += check.expected;
            if (check.expected == 0)
            {
                continue;
            }
            try (RemoteReader reader = client.openReader(topic, p))
            {
                check.read(reader, deadline);
            }
            catch (final RuntimeException ex)
            {
                check.fail("reading partition " + p + ": " + ex);
            }
            found += check.found;
            copies += check.copies;
            if (check.found < check.expected)
            {
                check.fail("partition " + p + ": " + (check.expected - check.found) + " acknowledged records " +
                    "not found at their offsets (read up to " + check.position + ")");
            }
            problem = null == problem ? check.problem : problem;
        }
        return new Outcome(true, acknowledged, found, copies, problem, null);
    }

    /** One partition's read: the acknowledged offsets it must find, and what it found. */
    private static final class PartitionCheck
    {
        private final int partition;
        private final int recordSize;
        private final int tag;
        private final long[] offsets;
        private final int[] partitionOf;
        private long expected;
        private long first = Long.MAX_VALUE;
        private long last = -1;
        private long found;
        private long copies;
        private long position;
        private String problem;

        PartitionCheck(final int partition, final int recordSize, final int tag, final long[] offsets,
            final int[] partitionOf)
        {
            this.partition = partition;
            this.recordSize = recordSize;
            this.tag = tag;
            this.offsets = offsets;
            this.partitionOf = partitionOf;
            for (int s = 0; s < offsets.length; s++)
            {
                if (offsets[s] >= 0 && partitionOf[s] == partition)
                {
                    expected++;
                    first = Math.min(first, offsets[s]);
                    last = Math.max(last, offsets[s]);
                }
            }
        }

        void read(final RemoteReader reader, final long deadline)
        {
            reader.seek(first);
            while (reader.position() <= last && System.nanoTime() - deadline < 0)
            {
                if (reader.poll(this::onRecord, MAX_RECORDS_PER_POLL) == 0)
                {
                    LockSupport.parkNanos(IDLE_NANOS);
                }
            }
            position = reader.position();
        }

        private void onRecord(final RecordView record)
        {
            final DirectBuffer buffer = record.buffer();
            final int at = record.valueOffset();
            if (record.valueLength() < RecordValues.ID_LENGTH)
            {
                return;
            }
            final long id = buffer.getLong(at, RecordValues.ORDER);
            if (RecordValues.tag(id) != tag || RecordValues.sequence(id) >= offsets.length)
            {
                return; // another phase's record
            }
            final int sequence = (int)RecordValues.sequence(id);
            if (offsets[sequence] < 0 || partitionOf[sequence] != partition)
            {
                return; // a copy of a record whose send failed or was never answered
            }
            if (offsets[sequence] != record.offset())
            {
                copies++;
                return;
            }
            if (!contentMatches(buffer, at, record.valueLength()))
            {
                fail("offset " + record.offset() + ": the value of record " + sequence + " differs from what was sent");
                return;
            }
            found++;
        }

        private boolean contentMatches(final DirectBuffer buffer, final int at, final int length)
        {
            if (length != recordSize)
            {
                return false;
            }
            for (int i = RecordValues.ID_LENGTH; i < length; i++)
            {
                if (buffer.getByte(at + i) != RecordValues.fillerAt(i))
                {
                    return false;
                }
            }
            return true;
        }

        void fail(final String text)
        {
            if (null == problem)
            {
                problem = text;
            }
        }
    }
}
