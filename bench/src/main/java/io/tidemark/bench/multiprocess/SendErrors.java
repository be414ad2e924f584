package io.tidemark.bench.multiprocess;

import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;

/**
 * Failed sends of one phase, counted by the producer's error name (Tidemark's {@code ProducerErrorCode}, or the
 * class of Kafka's exception), with the first one described. Thread-safe: send callbacks run on the producer's
 * thread, or on the thread closing the producer.
 */
final class SendErrors
{
    private final ConcurrentHashMap<String, LongAdder> counts = new ConcurrentHashMap<>();
    private final AtomicReference<String> first = new AtomicReference<>();

    /**
     * @param code    the failure's name.
     * @param message the failure in words.
     */
    void add(final String code, final String message)
    {
        counts.computeIfAbsent(code, (c) -> new LongAdder()).increment();
        if (null == first.get())
        {
            first.compareAndSet(null, code + ": " + message);
        }
    }

    /** @return failed sends. */
    long total()
    {
        long total = 0;
        for (final LongAdder n : counts.values())
        {
            total += n.sum();
        }
        return total;
    }

    /** @return the counts, by name, sorted. */
    Map<String, Long> byCode()
    {
        final Map<String, Long> byCode = new TreeMap<>();
        counts.forEach((code, n) -> byCode.put(code, n.sum()));
        return byCode;
    }

    /** @return the first failure, or null. */
    String first()
    {
        return first.get();
    }
}
