package io.tidemark.kafka;

import io.tidemark.replication.TopicPartition;

/**
 * Where consumer groups' committed offsets are kept: the same place Tidemark's own consumers keep them, so that a
 * KafkaConsumer and a Tidemark consumer of one group resume from each other's commits (in one process the clients'
 * offset files; across hosts ZooKeeper). Calls may block on I/O: the listener makes them off its agent thread.
 * Thread-safe.
 */
public interface GroupOffsetStore
{
    /** A committed offset and the leader epoch of the record before it (-1 when unknown). */
    record Committed(long offset, int leaderEpoch)
    {
    }

    /**
     * Store a group's position durably (returns once stored).
     *
     * @throws RuntimeException when it cannot be stored.
     */
    void commit(String group, TopicPartition partition, long offset, int leaderEpoch);

    /**
     * @return the group's committed position, or null when it has none.
     * @throws RuntimeException when it cannot be read.
     */
    Committed fetch(String group, TopicPartition partition);
}
