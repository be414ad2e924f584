package io.tidemark.kafka;

import io.tidemark.store.RecordBatch;
import io.tidemark.store.format.RecordBatchDescriptor;
import org.agrona.concurrent.UnsafeBuffer;
import org.apache.kafka.common.compress.Compression;
import org.apache.kafka.common.header.Header;
import org.apache.kafka.common.header.internals.RecordHeader;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;
import org.apache.kafka.common.record.MemoryRecordsBuilder;
import org.apache.kafka.common.record.Record;
import org.apache.kafka.common.record.TimestampType;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

/**
 * The transcoders against kafka-clients' own record classes, over random batches (null and empty keys and values,
 * headers with null values, timestamps on both sides of the base, producer fields): a batch built by
 * {@link MemoryRecordsBuilder} is decoded to Tidemark's layout, written back as a Kafka batch, and parsed by
 * kafka-clients (CRC checked) into the same records. And every byte of a batch flipped, and every truncation, is an
 * error code from the decoder, never an exception.
 */
class KafkaBatchCodecTest
{
    private static final int TRIES = Integer.getInteger("tidemark.tries", 200);

    record Sample(long timestamp, byte[] key, byte[] value, Header[] headers)
    {
    }

    static List<Sample> samples(final Random random)
    {
        final List<Sample> samples = new ArrayList<>();
        final long now = 1_700_000_000_000L;
        for (int i = 0, n = 1 + random.nextInt(60); i < n; i++)
        {
            final byte[] key = random.nextInt(4) == 0 ? null : bytes(random, random.nextInt(30));
            final byte[] value = random.nextInt(6) == 0 ? null : bytes(random, random.nextInt(400));
            final Header[] headers = new Header[random.nextInt(3)];
            for (int h = 0; h < headers.length; h++)
            {
                headers[h] = new RecordHeader("h" + random.nextInt(100), random.nextBoolean() ? null :
                    bytes(random, random.nextInt(20)));
            }
            samples.add(new Sample(now + random.nextInt(20_000) - 10_000, key, value, headers));
        }
        return samples;
    }

    static byte[] bytes(final Random random, final int length)
    {
        final byte[] bytes = new byte[length];
        random.nextBytes(bytes);
        return bytes;
    }

    static ByteBuffer kafkaBatch(final List<Sample> samples, final Compression compression)
    {
        final MemoryRecordsBuilder builder = MemoryRecords.builder(ByteBuffer.allocate(1 << 20), (byte)2, compression,
            TimestampType.CREATE_TIME, 0L, samples.get(0).timestamp, 77L, (short)3, 11, false, 0);
        for (final Sample sample : samples)
        {
            builder.append(sample.timestamp, sample.key, sample.value, sample.headers);
        }
        return builder.build().buffer();
    }

    @Test
    void roundTripThroughTidemarksLayoutKeepsEveryField()
    {
        final KafkaBatchDecoder decoder = new KafkaBatchDecoder();
        final KafkaBatchEncoder encoder = new KafkaBatchEncoder();
        final Random random = new Random(5);
        for (int t = 0; t < TRIES; t++)
        {
            final List<Sample> samples = samples(random);
            final Compression compression = t % 4 == 3 ? Compression.gzip().build() : Compression.NONE;
            assertEquals(Errors.NONE, decoder.decode(kafkaBatch(samples, compression), 1 << 20), decoder.reason());
            assertEquals(samples.size(), decoder.recordCount());
            assertEquals(77L, decoder.producerId());
            assertEquals(3, decoder.producerEpoch());
            assertEquals(11, decoder.baseSequence());

            final int length = RecordBatchDescriptor.HEADER_LENGTH + decoder.encodedLength();
            final UnsafeBuffer stored = new UnsafeBuffer(new byte[RecordBatchDescriptor.frameLength(length)]);
            stored.putInt(RecordBatchDescriptor.LENGTH_OFFSET, length);
            stored.putLong(RecordBatchDescriptor.BASE_OFFSET_OFFSET, 1_000 + t);
            stored.putInt(RecordBatchDescriptor.LEADER_EPOCH_OFFSET, 4);
            stored.putInt(RecordBatchDescriptor.RECORD_COUNT_OFFSET, samples.size());
            stored.putLong(RecordBatchDescriptor.FIRST_TIMESTAMP_OFFSET, samples.get(0).timestamp);
            stored.putLong(RecordBatchDescriptor.MAX_TIMESTAMP_OFFSET, samples.stream().mapToLong(Sample::timestamp)
                .max().orElseThrow());
            stored.putLong(RecordBatchDescriptor.PRODUCER_ID_OFFSET, decoder.producerId());
            stored.putShort(RecordBatchDescriptor.PRODUCER_EPOCH_OFFSET, decoder.producerEpoch());
            stored.putByte(RecordBatchDescriptor.MAGIC_OFFSET, RecordBatchDescriptor.MAGIC);
            stored.putInt(RecordBatchDescriptor.BASE_SEQUENCE_OFFSET, decoder.baseSequence());
            stored.putBytes(RecordBatchDescriptor.HEADER_LENGTH, decoder.buffer(), 0, decoder.encodedLength());

            encoder.reset();
            encoder.append(new RecordBatch().wrap(stored, 0));
            final MemoryRecords written = MemoryRecords.readableRecords(
                ByteBuffer.wrap(encoder.buffer().byteArray(), 0, encoder.length()).slice());
            final org.apache.kafka.common.record.MutableRecordBatch batch = written.batches().iterator().next();
            batch.ensureValid();
            assertEquals(1_000 + t, batch.baseOffset());
            assertEquals(4, batch.partitionLeaderEpoch());
            assertEquals(77L, batch.producerId());
            assertEquals(11, batch.baseSequence());
            int i = 0;
            for (final Record record : batch)
            {
                final Sample sample = samples.get(i);
                assertEquals(1_000 + t + i, record.offset());
                assertEquals(sample.timestamp, record.timestamp());
                assertArrayEquals(sample.key, bytesOf(record.key()));
                assertArrayEquals(sample.value, bytesOf(record.value()));
                assertEquals(sample.headers.length, record.headers().length);
                for (int h = 0; h < sample.headers.length; h++)
                {
                    assertEquals(sample.headers[h].key(), record.headers()[h].key());
                    assertArrayEquals(sample.headers[h].value(), record.headers()[h].value());
                }
                i++;
            }
            assertEquals(samples.size(), i);
        }
    }

    static byte[] bytesOf(final ByteBuffer buffer)
    {
        if (null == buffer)
        {
            return null;
        }
        final byte[] bytes = new byte[buffer.remaining()];
        buffer.duplicate().get(bytes);
        return bytes;
    }

    @Test
    void damagedBatchesAreErrorsNeverExceptions()
    {
        final KafkaBatchDecoder decoder = new KafkaBatchDecoder();
        final Random random = new Random(9);
        int rejected = 0;
        for (int t = 0; t < TRIES; t++)
        {
            final ByteBuffer good = kafkaBatch(samples(random), t % 5 == 4 ? Compression.gzip().build() :
                Compression.NONE);
            final byte[] bytes = new byte[good.remaining()];
            good.get(bytes);
            final byte[] flipped = bytes.clone();
            flipped[random.nextInt(flipped.length)] ^= (byte)(1 + random.nextInt(255));
            final Errors afterFlip = decoder.decode(ByteBuffer.wrap(flipped), 1 << 20);
            final int cut = random.nextInt(bytes.length);
            final Errors afterCut = decoder.decode(ByteBuffer.wrap(bytes, 0, cut).slice(), 1 << 20);
            assertNotEquals(Errors.NONE, afterCut, "a truncated batch is refused");
            rejected += afterFlip == Errors.NONE ? 0 : 1;
            // a flip in the base offset or leader epoch is not covered by Kafka's CRC: it may decode
        }
        assertEquals(Errors.MESSAGE_TOO_LARGE, decoder.decode(kafkaBatch(samples(new Random(1)), Compression.NONE),
            16), "a batch larger than the leader's queue takes is refused up front");
        System.out.println("decoder refused " + rejected + " of " + TRIES + " batches with a flipped byte");
    }
}
