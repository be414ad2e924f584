package io.tidemark.kafka;

import io.tidemark.replication.ReplicationError;
import org.apache.kafka.common.protocol.Errors;

/**
 * Tidemark's replication outcomes as Kafka error codes, chosen so that the real client's retry and metadata-refresh
 * logic does the right thing: a leader change is NOT_LEADER_OR_FOLLOWER (refresh metadata, resend), too few
 * replicas are NOT_ENOUGH_REPLICAS(_AFTER_APPEND) (retry), an idempotent sequence gap is
 * OUT_OF_ORDER_SEQUENCE_NUMBER.
 */
final class KafkaErrors
{
    private KafkaErrors()
    {
    }

    static ReplicationError replicationError(final int code)
    {
        return ReplicationError.fromCodeOrStorageError(code);
    }

    static Errors of(final ReplicationError error)
    {
        return switch (error)
        {
            case NONE -> Errors.NONE;
            case NOT_LEADER, NOT_ASSIGNED_REPLICA -> Errors.NOT_LEADER_OR_FOLLOWER;
            case LEADER_NOT_AVAILABLE -> Errors.LEADER_NOT_AVAILABLE;
            case NOT_ENOUGH_REPLICAS -> Errors.NOT_ENOUGH_REPLICAS;
            case NOT_ENOUGH_REPLICAS_AFTER_APPEND -> Errors.NOT_ENOUGH_REPLICAS_AFTER_APPEND;
            case REQUEST_TIMED_OUT, BACK_PRESSURED -> Errors.REQUEST_TIMED_OUT;
            case FENCED_LEADER_EPOCH -> Errors.FENCED_LEADER_EPOCH;
            case UNKNOWN_LEADER_EPOCH -> Errors.UNKNOWN_LEADER_EPOCH;
            case OFFSET_OUT_OF_RANGE -> Errors.OFFSET_OUT_OF_RANGE;
            case INVALID_RECORDS -> Errors.INVALID_RECORD;
            case STORAGE_ERROR -> Errors.KAFKA_STORAGE_ERROR;
            case OUT_OF_ORDER_SEQUENCE -> Errors.OUT_OF_ORDER_SEQUENCE_NUMBER;
            case INVALID_PRODUCER_EPOCH -> Errors.INVALID_PRODUCER_EPOCH;
        };
    }
}
