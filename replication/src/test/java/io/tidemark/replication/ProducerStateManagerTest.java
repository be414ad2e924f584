package io.tidemark.replication;

import org.junit.jupiter.api.Test;

import static io.tidemark.replication.ProducerStateManager.APPEND;
import static io.tidemark.replication.ProducerStateManager.FENCED_EPOCH;
import static io.tidemark.replication.ProducerStateManager.OUT_OF_SEQUENCE;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The leader's sequence rules, one check at a time (Kafka's ProducerStateManager is the reference, with one rule
 * stricter: a producer the replica has no state for starts at sequence 0).
 */
class ProducerStateManagerTest
{
    private final ProducerStateManager state = new ProducerStateManager();
    private long nextOffset;

    private long appendIfAllowed(final long pid, final int epoch, final int base, final int count)
    {
        final long check = state.check(pid, (short)epoch, base, count);
        if (check == APPEND)
        {
            state.onAppend(pid, (short)epoch, base, count, nextOffset);
            nextOffset += count;
        }
        return check;
    }

    @Test
    void aProducerWithoutStateStartsAtSequenceZero()
    {
        assertEquals(OUT_OF_SEQUENCE, appendIfAllowed(7, 0, 3, 3), "the batch after a refused first one");
        assertEquals(APPEND, appendIfAllowed(7, 0, 0, 3));
        assertEquals(APPEND, appendIfAllowed(7, 0, 3, 3));
        assertEquals(APPEND, state.check(-1, (short)-1, -1, 1), "not idempotent: no checks");
    }

    @Test
    void retriesOfTheLastFiveBatchesAreAnsweredWithTheirOffsetsOlderOnesAreOutOfOrder()
    {
        for (int b = 0; b < 6; b++)
        {
            assertEquals(APPEND, appendIfAllowed(1, 0, b * 10, 10));
        }
        for (int b = 1; b < 6; b++)
        {
            assertEquals(b * 10L, state.check(1, (short)0, b * 10, 10), "batch " + b + " is a duplicate");
        }
        assertEquals(OUT_OF_SEQUENCE, state.check(1, (short)0, 0, 10), "older than the five kept");
        assertEquals(OUT_OF_SEQUENCE, state.check(1, (short)0, 10, 5), "the same start, another end");
        assertEquals(OUT_OF_SEQUENCE, state.check(1, (short)0, 70, 10), "a gap");
        assertEquals(APPEND, state.check(1, (short)0, 60, 10));
    }

    @Test
    void epochsFenceOlderOnesAndStartAtZero()
    {
        assertEquals(APPEND, appendIfAllowed(2, 3, 0, 4));
        assertEquals(FENCED_EPOCH, state.check(2, (short)2, 4, 1));
        assertEquals(OUT_OF_SEQUENCE, state.check(2, (short)4, 4, 1), "a new epoch starts at 0");
        assertEquals(APPEND, appendIfAllowed(2, 4, 0, 1));
        assertEquals(FENCED_EPOCH, state.check(2, (short)3, 4, 1), "the old epoch is fenced now");
        assertEquals(OUT_OF_SEQUENCE, state.check(2, (short)4, 0, 4), "the old epoch's batch is not this epoch's");
    }

    @Test
    void sequencesWrapPastIntegerMaxValueToZero()
    {
        assertEquals(Integer.MAX_VALUE, ProducerStateManager.lastSequence(Integer.MAX_VALUE - 4, 5));
        assertEquals(2, ProducerStateManager.lastSequence(Integer.MAX_VALUE - 1, 5));
        assertTrue(ProducerStateManager.inSequence(Integer.MAX_VALUE, 0));
        assertFalse(ProducerStateManager.inSequence(Integer.MAX_VALUE, 1));
        assertFalse(ProducerStateManager.inSequence(-1, Integer.MIN_VALUE));

        // a producer that sent 2^31 - 10 records goes on across the wrap, and its retries are still recognized
        assertEquals(APPEND, appendIfAllowed(3, 0, 0, 1));
        state.onAppend(3, (short)0, 1, Integer.MAX_VALUE - 10, nextOffset); // stands for many batches
        nextOffset += Integer.MAX_VALUE - 10;
        final long spanning = nextOffset;
        assertEquals(APPEND, appendIfAllowed(3, 0, Integer.MAX_VALUE - 9, 20), "a batch across the wrap");
        assertEquals(spanning, state.check(3, (short)0, Integer.MAX_VALUE - 9, 20), "its retry");
        assertEquals(APPEND, appendIfAllowed(3, 0, 10, 5), "the batch after it");
    }
}
