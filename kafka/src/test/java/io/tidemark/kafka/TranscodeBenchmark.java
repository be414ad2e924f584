package io.tidemark.kafka;

import io.tidemark.store.RecordBatch;
import io.tidemark.store.format.RecordBatchDescriptor;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.TimestampType;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;

import java.nio.ByteBuffer;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

/**
 * What the Kafka listener's record format choice costs, per batch of {@code records} records of 100-byte values and
 * 10-byte keys (KafkaProducer's batch.size of 16 KiB holds about 130 of them):
 * <ul>
 *   <li>{@code produceTranscode}: a Kafka v2 batch checked (CRC, every length) and rewritten in Tidemark's layout
 *       (what the listener does);</li>
 *   <li>{@code produceKafkaLayout}: the same batch only checked (CRC, every record's varints walked), which is what
 *       a store keeping Kafka's layout on disk would still have to do;</li>
 *   <li>{@code fetchTranscode}: a Tidemark batch written as a Kafka v2 batch with its CRC (what the listener
 *       does);</li>
 *   <li>{@code fetchStoredBytes}: copying the stored Kafka batch into a response buffer, the most a store in
 *       Kafka's layout would spend (with sendfile it spends nothing in user space).</li>
 * </ul>
 * Run: {@code java -cp <kafka test classpath> org.openjdk.jmh.Main TranscodeBenchmark}; on a machine too busy for
 * JMH's averages, {@link #main} prints the best of 30 windows of 2,000 batches per operation (the least disturbed
 * window, a lower bound of the cost).
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 2, jvmArgsAppend = {"--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED"})
public class TranscodeBenchmark
{
    @Param({"130"})
    int records;

    private ByteBuffer kafkaBatch;
    private final KafkaBatchDecoder decoder = new KafkaBatchDecoder();
    private final KafkaBatchEncoder encoder = new KafkaBatchEncoder();
    private final RecordBatch tidemarkBatch = new RecordBatch();
    private final CRC32C crc = new CRC32C();
    private final ByteBuffer response = ByteBuffer.allocate(1 << 20);

    @Setup
    public void setUp()
    {
        final Random random = new Random(1);
        final MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(1 << 20), (byte)2,
            Compression.NONE, TimestampType.CREATE_TIME, 0L, System.currentTimeMillis(), 1000L, (short)0, 0, false,
            0);
        for (int i = 0; i < records; i++)
        {
            final byte[] key = new byte[10];
            final byte[] value = new byte[100];
            random.nextBytes(key);
            random.nextBytes(value);
            builder.append(System.currentTimeMillis() + i, key, value);
        }
        kafkaBatch = builder.build().buffer();
        if (decoder.decode(kafkaBatch.duplicate(), 1 << 20) != Errors.NONE)
        {
            throw new IllegalStateException(decoder.reason());
        }
        final int length = RecordBatchDescriptor.HEADER_LENGTH + decoder.encodedLength();
        final UnsafeBuffer stored = new UnsafeBuffer(new byte[RecordBatchDescriptor.frameLength(length)]);
        stored.putInt(RecordBatchDescriptor.LENGTH_OFFSET, length);
        stored.putLong(RecordBatchDescriptor.BASE_OFFSET_OFFSET, 0);
        stored.putInt(RecordBatchDescriptor.LEADER_EPOCH_OFFSET, 3);
        stored.putInt(RecordBatchDescriptor.RECORD_COUNT_OFFSET, records);
        stored.putLong(RecordBatchDescriptor.FIRST_TIMESTAMP_OFFSET, System.currentTimeMillis());
        stored.putLong(RecordBatchDescriptor.MAX_TIMESTAMP_OFFSET, System.currentTimeMillis() + records);
        stored.putLong(RecordBatchDescriptor.PRODUCER_ID_OFFSET, 1000L);
        stored.putShort(RecordBatchDescriptor.PRODUCER_EPOCH_OFFSET, (short)0);
        stored.putByte(RecordBatchDescriptor.MAGIC_OFFSET, RecordBatchDescriptor.MAGIC);
        stored.putInt(RecordBatchDescriptor.BASE_SEQUENCE_OFFSET, 0);
        stored.putBytes(RecordBatchDescriptor.HEADER_LENGTH, decoder.buffer(), 0, decoder.encodedLength());
        tidemarkBatch.wrap(stored, 0);
    }

    /** Best-window timing: {@code java -cp <kafka test classpath> io.tidemark.kafka.TranscodeBenchmark}. */
    public static void main(final String[] args)
    {
        final TranscodeBenchmark b = new TranscodeBenchmark();
        b.records = 130;
        b.setUp();
        final String[] names = {"produceTranscode", "produceKafkaLayout", "fetchTranscode", "fetchStoredBytes"};
        long sink = 0;
        for (final String name : names)
        {
            long best = Long.MAX_VALUE;
            for (int window = 0; window < 30; window++)
            {
                final long start = System.nanoTime();
                for (int i = 0; i < 2_000; i++)
                {
                    sink += switch (name)
                    {
                        case "produceTranscode" -> b.produceTranscode();
                        case "produceKafkaLayout" -> b.produceKafkaLayout();
                        case "fetchTranscode" -> b.fetchTranscode();
                        default -> b.fetchStoredBytes();
                    };
                }
                best = Math.min(best, (System.nanoTime() - start) / 2_000);
            }
            System.out.printf("%-20s best window: %,7d ns per batch of %d records, %,5.1f ns per record%n", name,
                best, b.records, best / (double)b.records);
        }
        System.out.println("(checksum " + (sink & 0xFF) + ")");
    }

    @Benchmark
    public int produceTranscode()
    {
        decoder.decode(kafkaBatch.duplicate(), 1 << 20);
        return decoder.encodedLength();
    }

    @Benchmark
    public int produceKafkaLayout()
    {
        final ByteBuffer batch = kafkaBatch.duplicate();
        crc.reset();
        batch.position(KafkaBatchDescriptor.ATTRIBUTES_OFFSET);
        crc.update(batch);
        int position = KafkaBatchDescriptor.RECORDS_OFFSET;
        int sum = (int)crc.getValue();
        for (int i = 0; i < records; i++)
        {
            final int length = varint(kafkaBatch, position);
            position += varintSize + length;
            sum += length;
        }
        return sum + position;
    }

    private int varintSize;

    private int varint(final ByteBuffer buffer, final int at)
    {
        int value = 0;
        int i = 0;
        int b;
        do
        {
            b = buffer.get(at + i);
            value |= (b & 0x7F) << (7 * i);
            i++;
        }
        while ((b & 0x80) != 0 && i < 5);
        varintSize = i;
        return (value >>> 1) ^ -(value & 1);
    }

    @Benchmark
    public int fetchTranscode()
    {
        encoder.reset();
        return encoder.append(tidemarkBatch);
    }

    @Benchmark
    public int fetchStoredBytes()
    {
        response.clear();
        response.put(kafkaBatch.duplicate());
        return response.position();
    }
}
