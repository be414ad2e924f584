package io.tidemark.bench.multiprocess;

import io.tidemark.client.ProducerErrorCode;
import io.tidemark.client.ProducerException;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Failed sends of one phase, counted by {@link ProducerErrorCode}, with the first one described. Thread-safe: send
 * callbacks run on the producer's agent thread, or on the thread closing the producer.
 */
final class SendErrors
{
    private static final ProducerErrorCode[] CODES = ProducerErrorCode.values();

    private final AtomicLongArray counts = new AtomicLongArray(CODES.length);
    private final AtomicReference<String> first = new AtomicReference<>();

    /** @param error a send's failure. */
    void add(final ProducerException error)
    {
        counts.incrementAndGet(error.code().ordinal());
        if (null == first.get())
        {
            first.compareAndSet(null, error.code() + " (" + error.replicationError() + "): " + error.getMessage());
        }
    }

    /** @return failed sends. */
    long total()
    {
        long total = 0;
        for (int i = 0; i < counts.length(); i++)
        {
            total += counts.get(i);
        }
        return total;
    }

    /** @return the counts that are not zero, by code name. */
    Map<String, Long> byCode()
    {
        final Map<String, Long> byCode = new LinkedHashMap<>();
        for (final ProducerErrorCode code : CODES)
        {
            final long n = counts.get(code.ordinal());
            if (n > 0)
            {
                byCode.put(code.name(), n);
            }
        }
        return byCode;
    }

    /** @return the first failure, or null. */
    String first()
    {
        return first.get();
    }
}
