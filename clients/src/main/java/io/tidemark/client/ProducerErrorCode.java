package io.tidemark.client;

/** Why a send failed: the code of a {@link ProducerException}. */
public enum ProducerErrorCode
{
    /** The partition leader refused the records with a non-retriable error, or {@code retries} ran out: see
     * {@link ProducerException#replicationError()} (NOT_ENOUGH_REPLICAS, REQUEST_TIMED_OUT, INVALID_RECORDS...). */
    REPLICATION,
    /** {@code delivery.timeout.ms} passed before the records were acknowledged; the last error seen is in
     * {@link ProducerException#replicationError()} (NONE when they were never sent, e.g. no leader). */
    DELIVERY_TIMEOUT,
    /** No buffer memory became free within {@code max.block.ms}: the producer is sending slower than it is fed. */
    BUFFER_EXHAUSTED,
    /** The record can never fit: larger than {@code buffer.memory} or than the leader's produce queue accepts. */
    RECORD_TOO_LARGE,
    /** The topic does not exist, or the partition number is out of its range. */
    UNKNOWN_TOPIC,
    /**
     * The topic's metadata is damaged (a partition's stored state cannot be read, or is missing): its records are
     * refused until it is repaired, rather than spread over fewer partitions (which would move keys).
     */
    DAMAGED_METADATA,
    /** The producer is closed: a send after {@code close()}, or records that close() had to fail. */
    CLOSED,
    /** A blocking call was interrupted. */
    INTERRUPTED
}
