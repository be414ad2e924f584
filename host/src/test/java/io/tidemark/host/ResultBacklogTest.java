package io.tidemark.host;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ResultBacklogTest
{
    @Test
    void keepsResultsInOrderAcrossGrowthAndWrapAround()
    {
        final ResultBacklog backlog = new ResultBacklog();
        assertTrue(backlog.isEmpty());
        long next = 0;
        long expected = 0;
        for (int round = 0; round < 50; round++)
        {
            for (int i = 0; i < 97; i++, next++)
            {
                assertTrue(backlog.add((int)(next % 16), -(int)(next % 7), next, next * 10));
            }
            for (int i = 0; i < 60; i++, expected++)
            {
                assertEquals((int)(expected % 16), backlog.partitionId());
                assertEquals(-(int)(expected % 7), backlog.errorCode(), "negative codes survive the packing");
                assertEquals(expected, backlog.correlationId());
                assertEquals(expected * 10, backlog.baseOffset());
                backlog.removeOldest();
            }
        }
        assertEquals(next - expected, backlog.size());
        while (!backlog.isEmpty())
        {
            assertEquals(expected, backlog.correlationId());
            backlog.removeOldest();
            expected++;
        }
        assertEquals(next, expected);
        assertThrows(IllegalStateException.class, backlog::removeOldest);
    }

    @Test
    void refusesBeyondItsBoundAndKeepsWhatItHas()
    {
        final ResultBacklog backlog = new ResultBacklog();
        for (int i = 0; i < ResultBacklog.MAX_ENTRIES; i++)
        {
            assertTrue(backlog.add(1, 0, i, i));
        }
        assertFalse(backlog.add(1, 0, -1, -1), "a client that stopped reading is not given more memory");
        assertEquals(ResultBacklog.MAX_ENTRIES, backlog.size());
        assertEquals(0, backlog.correlationId());
        backlog.removeOldest();
        assertTrue(backlog.add(1, 0, ResultBacklog.MAX_ENTRIES, 0), "room again once one is sent");
        backlog.clear();
        assertTrue(backlog.isEmpty());
    }
}
