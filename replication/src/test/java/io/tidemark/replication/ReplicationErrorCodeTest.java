package io.tidemark.replication;

import org.junit.jupiter.api.Test;

import java.util.HashSet;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The wire codes of {@link ReplicationError} are a protocol: a host and a client of different builds must read each
 * other's codes the same way, so each code is pinned here, and a code no build gave is read as unknown.
 */
class ReplicationErrorCodeTest
{
    @Test
    void everyOutcomeKeepsItsCode()
    {
        final Object[][] pinned = {
            { ReplicationError.NONE, 0 },
            { ReplicationError.NOT_LEADER, 1 },
            { ReplicationError.LEADER_NOT_AVAILABLE, 2 },
            { ReplicationError.NOT_ENOUGH_REPLICAS, 3 },
            { ReplicationError.NOT_ENOUGH_REPLICAS_AFTER_APPEND, 4 },
            { ReplicationError.REQUEST_TIMED_OUT, 5 },
            { ReplicationError.FENCED_LEADER_EPOCH, 6 },
            { ReplicationError.UNKNOWN_LEADER_EPOCH, 7 },
            { ReplicationError.OFFSET_OUT_OF_RANGE, 8 },
            { ReplicationError.NOT_ASSIGNED_REPLICA, 9 },
            { ReplicationError.INVALID_RECORDS, 10 },
            { ReplicationError.STORAGE_ERROR, 11 },
            { ReplicationError.BACK_PRESSURED, 12 },
            { ReplicationError.OUT_OF_ORDER_SEQUENCE, 13 },
            { ReplicationError.INVALID_PRODUCER_EPOCH, 14 },
        };
        assertEquals(ReplicationError.values().length, pinned.length, "a new outcome needs its code pinned here");
        for (final Object[] p : pinned)
        {
            final ReplicationError error = (ReplicationError)p[0];
            assertEquals((int)p[1], error.code(), error.name());
            assertSame(error, ReplicationError.fromCode(error.code()));
        }
    }

    @Test
    void codesAreUnique()
    {
        final Set<Integer> seen = new HashSet<>();
        for (final ReplicationError error : ReplicationError.values())
        {
            assertTrue(seen.add(error.code()), "code " + error.code() + " twice");
        }
    }

    @Test
    void unknownCodesAreNotGuessed()
    {
        for (final int code : new int[]{ -1, 15, 255, Integer.MAX_VALUE, Integer.MIN_VALUE })
        {
            assertNull(ReplicationError.fromCode(code), "code " + code);
            assertSame(ReplicationError.STORAGE_ERROR, ReplicationError.fromCodeOrStorageError(code));
        }
    }
}
