package io.tidemark.client;

import io.tidemark.replication.TopicPartition;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** The outcome of every asynchronous send of a test, by the record's value. Thread-safe. */
final class Outcomes
{
    /** One send's outcome. */
    record Outcome(TopicPartition partition, long offset, ProducerException error)
    {
    }

    final Map<String, Outcome> byValue = new ConcurrentHashMap<>();
    final List<String> completionOrder = java.util.Collections.synchronizedList(new ArrayList<>());

    SendCallback callback(final String value)
    {
        return (tp, offset, error) ->
        {
            if (null != byValue.put(value, new Outcome(tp, offset, error)))
            {
                throw new AssertionError("a second outcome for " + value);
            }
            completionOrder.add(value);
        };
    }

    int size()
    {
        return byValue.size();
    }

    Outcome get(final String value)
    {
        return byValue.get(value);
    }

    /** @return the values acknowledged without error. */
    List<String> acknowledged()
    {
        final List<String> out = new ArrayList<>();
        byValue.forEach((value, outcome) ->
        {
            if (null == outcome.error())
            {
                out.add(value);
            }
        });
        return out;
    }

    /** @return the values that failed. */
    List<String> failed()
    {
        final List<String> out = new ArrayList<>();
        byValue.forEach((value, outcome) ->
        {
            if (null != outcome.error())
            {
                out.add(value);
            }
        });
        return out;
    }
}
