package io.tidemark.client;

import io.tidemark.replication.TopicPartition;

import java.util.Map;

/** Receives the outcome of {@link Consumer#commitAsync}, on the consumer's thread during a later poll, commit or close. */
@FunctionalInterface
public interface CommitCallback
{
    /**
     * @param offsets the offsets committed (or not).
     * @param error   null on success; otherwise why they were not stored.
     */
    void onComplete(Map<TopicPartition, Long> offsets, Exception error);
}
