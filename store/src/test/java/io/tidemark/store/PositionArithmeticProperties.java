package io.tidemark.store;

import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.SegmentFiles;

import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import java.util.stream.LongStream;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Property tests of the position and length arithmetic of a segment near {@link Integer#MAX_VALUE}, over seeds: the
 * pure computations against a long-arithmetic oracle, and a real segment of the largest capacity (a sparse file)
 * driven by random appends and agent cycles through its last megabytes. Default 8 seeds; long mode 200.
 */
class PositionArithmeticProperties
{
    private static final int MAX = Segment.MAX_FILE_LENGTH;
    private static final int SAMPLES = 20_000;

    @TempDir
    Path dir;

    @TestFactory
    Stream<DynamicTest> arithmetic()
    {
        return seeds().mapToObj((seed) -> DynamicTest.dynamicTest("seed " + seed, () -> checkArithmetic(seed)));
    }

    @TestFactory
    Stream<DynamicTest> segmentAtTheLargestCapacity()
    {
        return seeds().limit(Boolean.getBoolean("tidemark.long") ? 20 : 2)
            .mapToObj((seed) -> DynamicTest.dynamicTest("seed " + seed, () -> driveSegment(seed)));
    }

    private static LongStream seeds()
    {
        final long first = Long.getLong("tidemark.seed", 22L);
        return LongStream.range(first, first + (Boolean.getBoolean("tidemark.long") ? 200 : 8));
    }

    /** A position in [0, bound], most often within a few megabytes of the bound. */
    private static int nearEnd(final Random random, final int bound)
    {
        switch (random.nextInt(4))
        {
            case 0: return random.nextInt(bound) + random.nextInt(2);
            case 1: return bound - random.nextInt(Math.min(bound, 64) + 1);
            default: return bound - random.nextInt(Math.min(bound, 8 << 20) + 1);
        }
    }

    private static void checkArithmetic(final long seed)
    {
        final Random random = new Random(seed);
        for (int i = 0; i < SAMPLES; i++)
        {
            final int capacity = random.nextInt(8) == 0 ? 1024 + random.nextInt(MAX - 1024) : nearEnd(random, MAX);
            final int size = nearEnd(random, capacity);
            final int batchLength = random.nextBoolean() ? RecordBatchDescriptor.HEADER_LENGTH +
                random.nextInt(1 << 20) : RecordBatchDescriptor.HEADER_LENGTH + random.nextInt(MAX -
                RecordBatchDescriptor.HEADER_LENGTH + 1);
            final int frame = RecordBatchDescriptor.frameLength(batchLength);
            final String where = "seed " + seed + " sample " + i + ": capacity " + capacity + " size " + size +
                " batch " + batchLength;

            assertTrue(frame >= batchLength && frame - batchLength < 8 && frame % 8 == 0, where + ": frame " + frame);
            assertEquals((long)size + frame <= capacity, Segment.fits(size, frame, capacity), where);

            final int from = nearEnd(random, capacity);
            final int end = capacity == from ? from : from + random.nextInt(capacity - from) + random.nextInt(2);
            final int chunkEnd = SegmentReservation.reserveChunkEnd(from, end, capacity);
            final String reserve = where + ": reserve from " + from + " to " + end + " gave " + chunkEnd;
            assertTrue(chunkEnd >= end && chunkEnd <= capacity, reserve);
            assertTrue(chunkEnd == capacity || chunkEnd % Segment.PAGE_SIZE == 0, reserve);
            assertTrue(chunkEnd >= Math.min(capacity, (long)from + SegmentReservation.RESERVE_CHUNK), reserve);

            final int touched = nearEnd(random, capacity);
            final long firstPage = Segment.align(Math.max(touched, size), Segment.PAGE_SIZE);
            final int limit = nearEnd(random, capacity);
            final int maxPages = 1 + random.nextInt(2048);
            final int pages = SegmentPrefaulter.pagesToTouch(firstPage, limit, maxPages);
            final String touch = where + ": touch from " + firstPage + " below " + limit + " gave " + pages;
            assertTrue(pages >= 0 && pages <= maxPages, touch);
            if (pages > 0)
            {
                final long lastPage = firstPage + (long)(pages - 1) * Segment.PAGE_SIZE;
                assertTrue(lastPage + 4 <= limit && (int)lastPage == lastPage && firstPage >= 0, touch);
            }
            assertTrue(pages == maxPages || firstPage + (long)pages * Segment.PAGE_SIZE + 4 > limit, touch);
        }
    }

    /**
     * A segment of the largest capacity whose writer starts 8 MiB before its end: random frames are appended while
     * they fit (reserving on the append path as the log does), with agent cycles (reserve and pre-touch up to 1 GiB
     * ahead) in between, until the segment is full. Nothing may throw, and every frame that fits must be placed.
     */
    private void driveSegment(final long seed) throws Exception
    {
        final Random random = new Random(seed);
        final Path segmentDir = Files.createDirectories(dir.resolve("seed-" + seed));
        final SegmentFiles files = new SegmentFiles(segmentDir, 0);
        final int start = (MAX - (8 << 20)) & -RecordBatchDescriptor.FRAME_ALIGNMENT;
        final Segment segment = SegmentOpener.openActive(files, MAX, start, 64, 0, 0, true);
        try
        {
            assertEquals(MAX, segment.capacity());
            int position = start;
            long offset = 0;
            int refused = 0;
            while (refused < 20)
            {
                final int frame = RecordBatchDescriptor.frameLength(RecordBatchDescriptor.HEADER_LENGTH +
                    (random.nextInt(10) == 0 ? random.nextInt(1 << 20) : random.nextInt(2048)));
                if (!segment.hasRoomFor(frame))
                {
                    assertTrue((long)position + frame > MAX, "seed " + seed + ": refused a frame of " + frame +
                        " at " + position + " that fits");
                    refused++;
                    continue;
                }
                segment.ensureReserved(position + frame);
                segment.resetState(position + frame, ++offset, Long.MIN_VALUE, 0);
                position += frame;
                if (random.nextInt(4) == 0)
                {
                    segment.prepareAhead(random.nextInt(1 << 30) + 1, 0);
                }
            }
            assertTrue(MAX - position < (1 << 20) + 64, "seed " + seed + ": stopped " + (MAX - position) +
                " bytes before the end");
            segment.prepareAhead(1 << 30, 0);
        }
        finally
        {
            segment.close();
        }
    }
}
