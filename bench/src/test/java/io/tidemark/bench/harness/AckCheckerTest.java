package io.tidemark.bench.harness;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class AckCheckerTest
{
    private static AckLog acks()
    {
        final AckLog log = new AckLog();
        log.add(10, 0xA, 3); // offsets 10, 11, 12
        log.add(0, 0xB, 2);  // offsets 0, 1 (out of order: sorted by the checker)
        return log;
    }

    @Test
    void everyAcknowledgedRecordFoundWithUnacknowledgedOnesAround()
    {
        final AckChecker checker = new AckChecker(acks());
        checker.onRecord(0, 0xB, 0);
        checker.onRecord(1, 0xB, 1);
        for (int o = 2; o < 10; o++)
        {
            checker.onRecord(o, 0xC, o); // not acknowledged (acks=0, unknown outcome): allowed
        }
        checker.onRecord(10, 0xA, 0);
        checker.onRecord(11, 0xA, 1);
        checker.onRecord(12, 0xA, 2);
        assertTrue(checker.ok(), checker.problem());
        assertNull(checker.problem());
        assertEquals(5, checker.expected());
        assertEquals(5, checker.found());
        assertEquals(13, checker.recordsRead());
    }

    @Test
    void aMissingRecordFails()
    {
        final AckChecker checker = new AckChecker(acks());
        checker.onRecord(0, 0xB, 0);
        checker.onRecord(1, 0xB, 1);
        checker.onRecord(10, 0xA, 0);
        checker.onRecord(12, 0xA, 2); // 11 lost
        assertFalse(checker.ok());
        assertTrue(checker.problem().contains("1 of 5 acknowledged records missing"), checker.problem());
    }

    @Test
    void aRecordAtTheWrongOffsetFails()
    {
        final AckChecker checker = new AckChecker(acks());
        checker.onRecord(0, 0xB, 1); // index swapped
        checker.onRecord(1, 0xB, 0);
        assertFalse(checker.ok());
        assertTrue(checker.problem().startsWith("offset 0 holds record 1 of request b"), checker.problem());
    }

    @Test
    void aTruncatedLogFails()
    {
        final AckChecker checker = new AckChecker(acks());
        checker.onRecord(0, 0xB, 0);
        checker.onRecord(1, 0xB, 1);
        assertFalse(checker.ok());
        assertTrue(checker.problem().contains("3 of 5"), checker.problem());
    }

    @Test
    void overlappingAcknowledgementsFail()
    {
        final AckLog log = new AckLog();
        log.add(0, 1, 3);
        log.add(2, 2, 1);
        final AckChecker checker = new AckChecker(log);
        assertFalse(checker.ok());
        assertTrue(checker.problem().contains("overlap"), checker.problem());
    }

    @Test
    void ackLogGrows()
    {
        final AckLog log = new AckLog();
        for (int i = 0; i < 5_000; i++)
        {
            log.add(i * 2L, i, 2);
        }
        assertEquals(5_000, log.size());
        assertEquals(10_000, log.records());
        assertEquals(9_998, log.sortedByOffset()[0][4_999]);
    }
}
