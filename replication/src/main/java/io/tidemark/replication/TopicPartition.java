package io.tidemark.replication;

import io.tidemark.store.LogNames;

/**
 * A partition of a topic. Its replicas live in log directories named {@code <topic>-<partition>}.
 *
 * @param topic     topic name ({@code [A-Za-z0-9._-]}, validated).
 * @param partition partition number, from 0.
 */
public record TopicPartition(String topic, int partition)
{
    /**
     * @param topic     topic name.
     * @param partition partition number.
     */
    public TopicPartition
    {
        LogNames.validate(topic);
        if (partition < 0)
        {
            throw new IllegalArgumentException("partition must not be negative: " + partition);
        }
    }

    /** @return the name of the partition's log directory. */
    public String logName()
    {
        return topic + "-" + partition;
    }

    @Override
    public String toString()
    {
        return logName();
    }
}
