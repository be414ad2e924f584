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

    @Test
    void theBacklogsOfOneHostShareItsBoundAndGiveBackWhatTheyTook()
    {
        final ResultBacklog.Budget budget = new ResultBacklog.Budget(1_000);
        final ResultBacklog[] clients = { new ResultBacklog(budget), new ResultBacklog(budget),
            new ResultBacklog(budget) };
        final int[] kept = new int[clients.length];
        int refused = 0;
        for (int round = 0; round < 2_000; round++)
        {
            for (int c = 0; c < clients.length; c++)
            {
                if (clients[c].add(c, 0, kept[c], kept[c]))
                {
                    kept[c]++;
                }
                else
                {
                    refused++;
                    assertTrue(clients[c].refusedForHost(), "refused for the host's bound, not the client's");
                }
            }
            assertTrue(budget.reserved() <= budget.limit(), "reserved " + budget.reserved());
        }
        assertTrue(refused > 0, "the host's bound was reached");
        long capacities = 0;
        for (int c = 0; c < clients.length; c++)
        {
            assertTrue(kept[c] >= 64, "each client kept some: " + kept[c]);
            assertEquals(kept[c], clients[c].size());
            capacities += clients[c].capacity();
            assertEquals(0, clients[c].correlationId(), "oldest first");
        }
        assertEquals(capacities, budget.reserved(), "the budget holds exactly what the backlogs took");

        final int before = clients[0].capacity();
        while (!clients[0].isEmpty()) // client 0 catches up: its memory goes back to the budget
        {
            clients[0].removeOldest();
        }
        assertEquals(0, clients[0].capacity());
        assertEquals(capacities - before, budget.reserved());
        final int size = clients[1].size();
        for (int i = 0; i < size; i++) // its capacity doubles into the room client 0 gave back
        {
            assertTrue(clients[1].add(1, 0, size + i, 0), "room again for the others");
        }
        clients[1].clear();
        clients[2].clear();
        assertEquals(0, budget.reserved(), "every backlog emptied: nothing held");
    }

    @Test
    void aHostsDefaultBoundIsFarBelowEveryClientsOwnBound()
    {
        assertTrue(ResultBacklog.HOST_MAX_ENTRIES < 256L * ResultBacklog.MAX_ENTRIES);
        assertEquals(ResultBacklog.HOST_MAX_ENTRIES, new ClientReplies.Totals().budget.limit());
    }
}
