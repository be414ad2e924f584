package io.tidemark.client;

import io.tidemark.replication.ReplicationError;
import io.tidemark.replication.TopicPartition;

/**
 * A send that failed, with a {@link ProducerErrorCode}, the leader's last answer, and whether the outcome is
 * unknown: when {@link #outcomeUnknown()} is true the records may still be in the log (the leader appended them, then
 * the acknowledgement was lost, timed out, or leadership moved), exactly as with Kafka's producer.
 * <p>
 * Immutable; thread-safe.
 */
public final class ProducerException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final ProducerErrorCode code;
    private final transient ReplicationError replicationError;
    private final transient TopicPartition partition;
    private final boolean outcomeUnknown;

    /**
     * @param code             why.
     * @param replicationError the leader's last answer, or NONE.
     * @param partition        the partition the records were for, or null when none was chosen.
     * @param outcomeUnknown   whether the records may be in the log.
     * @param message          detail.
     */
    public ProducerException(final ProducerErrorCode code, final ReplicationError replicationError,
        final TopicPartition partition, final boolean outcomeUnknown, final String message)
    {
        super(code + (ReplicationError.NONE == replicationError ? "" : " (" + replicationError + ")") +
            (null == partition ? "" : " on " + partition) + (outcomeUnknown ? ", outcome unknown" : "") + ": " +
            message);
        this.code = code;
        this.replicationError = replicationError;
        this.partition = partition;
        this.outcomeUnknown = outcomeUnknown;
    }

    static ProducerException of(final ProducerErrorCode code, final String message)
    {
        return new ProducerException(code, ReplicationError.NONE, null, false, message);
    }

    /** @return why the send failed. */
    public ProducerErrorCode code()
    {
        return code;
    }

    /** @return the leader's last answer (NONE when it never answered). */
    public ReplicationError replicationError()
    {
        return replicationError;
    }

    /** @return the partition the records were for, or null. */
    public TopicPartition partition()
    {
        return partition;
    }

    /** @return whether the records may be in the log despite the error. */
    public boolean outcomeUnknown()
    {
        return outcomeUnknown;
    }
}
