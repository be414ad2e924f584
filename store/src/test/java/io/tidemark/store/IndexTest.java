package io.tidemark.store;

import org.agrona.concurrent.CachedEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The sparse indexes against {@link TreeMap} oracles. */
class IndexTest
{
    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(longs = { 1, 2, 3, 42, 1234 })
    void offsetIndexLookupsMatchATreeMapFloor(final long seed) throws Exception
    {
        final Random random = new Random(seed);
        final long base = random.nextInt(1_000_000);
        final int max = 5000;
        final TreeMap<Long, Integer> oracle = new TreeMap<>();
        try (IndexFile file = IndexFile.openForAppend(dir.resolve("o.index"), OffsetIndex.ENTRY_LENGTH, max, 0, true))
        {
            final OffsetIndex index = new OffsetIndex(file, base);
            long offset = base;
            int position = 0;
            while (!index.isFull())
            {
                offset += 1 + random.nextInt(50);
                position += 1 + random.nextInt(4000);
                file.ensureRoomForOneMore();
                index.append(offset, position);
                oracle.put(offset, position);
            }
            assertEquals(max, index.entries());
            assertEquals(null, index.check(position + 1));
            for (int i = 0; i < 20_000; i++)
            {
                final long target = base + random.nextInt((int)(offset - base + 100));
                final Map.Entry<Long, Integer> floor = oracle.floorEntry(target);
                assertEquals(null == floor ? 0 : floor.getValue(), index.lookup(target), "target " + target);
            }
            final long cut = base + (offset - base) / 2;
            index.truncateToOffset(cut);
            oracle.tailMap(cut, true).clear();
            assertEquals(oracle.size(), index.entries());
            for (int i = 0; i < 5_000; i++)
            {
                final long target = base + random.nextInt((int)(offset - base + 100));
                final Map.Entry<Long, Integer> floor = oracle.floorEntry(target);
                assertEquals(null == floor ? 0 : floor.getValue(), index.lookup(target));
            }
        }
    }

    @ParameterizedTest
    @ValueSource(longs = { 5, 6, 7 })
    void timeIndexLookupsMatchATreeMapLower(final long seed) throws Exception
    {
        final Random random = new Random(seed);
        final long base = 100;
        final TreeMap<Long, Long> oracle = new TreeMap<>();
        try (IndexFile file = IndexFile.openForAppend(dir.resolve("t.timeindex"), TimeIndex.ENTRY_LENGTH, 3000, 0,
            true))
        {
            final TimeIndex index = new TimeIndex(file, base);
            long timestamp = 1_000_000;
            long offset = base;
            for (int i = 0; i < 4000; i++)
            {
                timestamp += random.nextInt(20) - 3; // sometimes going backwards: such entries are skipped
                offset += 1 + random.nextInt(10);
                file.ensureRoomForOneMore();
                final boolean advances = oracle.isEmpty() || timestamp > oracle.lastKey();
                final boolean added = index.maybeAppend(timestamp, offset);
                assertEquals(advances && oracle.size() < 3000, added);
                if (added)
                {
                    oracle.put(timestamp, offset);
                }
            }
            assertEquals(null, index.check(offset));
            for (int i = 0; i < 20_000; i++)
            {
                final long target = 999_000 + random.nextInt((int)(timestamp - 999_000 + 1000));
                final Map.Entry<Long, Long> lower = oracle.lowerEntry(target);
                assertEquals(null == lower ? base : lower.getValue(), index.lookup(target), "target " + target);
            }
        }
    }

    @Test
    void segmentPositionLookupFindsTheBatchHoldingEveryOffset()
    {
        final Random random = new Random(11);
        final CachedEpochClock clock = new CachedEpochClock();
        for (final int interval : new int[]{ 0, 100, 512, 4096 })
        {
            final TreeMap<Long, Integer> batchStarts = new TreeMap<>();
            try (Log log = Log.open(TestLogs.context(dir.resolve("log-" + interval), clock)
                .indexIntervalBytes(interval).segmentBytes(1 << 20)))
            {
                for (int b = 0; b < 800; b++)
                {
                    final int records = 1 + random.nextInt(5);
                    final BatchClaim claim = log.tryClaim(8192);
                    for (int r = 0; r < records; r++)
                    {
                        final UnsafeBuffer v = new UnsafeBuffer(new byte[random.nextInt(300)]);
                        claim.addRecord(BatchClaim.NOW, null, 0, -1, v, 0, v.capacity());
                    }
                    final Segment active = log.activeSegmentForTest();
                    final int position = active.size();
                    batchStarts.put(claim.commit(), position);
                }
                final Segment segment = log.segmentsSnapshot()[0];
                assertEquals(1, log.segmentCount());
                if (interval == 4096)
                {
                    assertTrue(segment.offsetIndex().entries() > 10);
                }
                for (long offset = 0; offset < log.logEndOffset(); offset++)
                {
                    assertEquals(batchStarts.floorEntry(offset).getValue(), segment.positionOf(offset),
                        "interval " + interval + " offset " + offset);
                }
                assertEquals(segment.size(), segment.positionOf(log.logEndOffset()));
                assertFalse(segment.offsetIndex().entries() > LogLoader.maxIndexEntries(log.context()));
            }
        }
    }
}
