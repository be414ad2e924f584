package io.tidemark.client;

import io.tidemark.replication.TopicPartition;
import io.tidemark.store.RecordView;

/**
 * Receives records from {@link Consumer#poll}, on the polling thread. The {@link RecordView} is a zero-copy
 * flyweight over the leader's mapped segment: valid only during the call; copy what you keep.
 */
@FunctionalInterface
public interface ConsumerRecordHandler
{
    /**
     * @param partition the record's partition.
     * @param record    the record (offset, timestamp, key, value, headers), valid only during this call.
     */
    void onRecord(TopicPartition partition, RecordView record);
}
