package io.tidemark.kafka;

import io.tidemark.replication.protocol.PartitionState;
import org.apache.kafka.common.message.CreateTopicsRequestData;
import org.apache.kafka.common.message.CreateTopicsResponseData;
import org.apache.kafka.common.message.DeleteTopicsRequestData;
import org.apache.kafka.common.message.DeleteTopicsResponseData;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.Errors;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/**
 * InitProducerId (idempotent producers get a new id each time; transactional ids are refused), CreateTopics (partitions spread over the
 * hosts by the controller; explicit assignments and per-topic configurations are refused with a reason) and
 * DeleteTopics (refused: Tidemark does not delete topics). The blocking parts (the controller's durable write,
 * ZooKeeper) run on the listener's I/O thread.
 */
final class AdminRequests
{
    private final KafkaListener listener;
    private final TopicAdmin admin;

    AdminRequests(final KafkaListener listener, final TopicAdmin admin)
    {
        this.listener = listener;
        this.admin = admin;
    }

    void initProducerId(final InFlight request, final InitProducerIdRequestData data)
    {
        final InitProducerIdResponseData response = new InitProducerIdResponseData().setThrottleTimeMs(0)
            .setProducerId(-1).setProducerEpoch((short)-1);
        if (null != data.transactionalId())
        {
            request.respond(response.setErrorCode(Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED.code()));
            return;
        }
        // Without a transactional id the answer is always a new producer id from the cluster's counter, epoch 0,
        // whatever id and epoch the request names: as Kafka's coordinator does for idempotent producers. A producer
        // bumping its epoch after an unknown outcome (KIP-360) names its current id and epoch; a fresh id serves it
        // as well (its sequences restart at 0), and the request cannot claim, or fence, another producer's id.
        listener.runBlocking(() ->
        {
            InitProducerIdResponseData answer;
            try
            {
                answer = response.duplicate().setProducerId(admin.allocateProducerId()).setProducerEpoch((short)0);
            }
            catch (final RuntimeException ex)
            {
                answer = response.duplicate().setErrorCode(Errors.COORDINATOR_NOT_AVAILABLE.code());
            }
            listener.complete(request, answer);
        });
    }

    void createTopics(final InFlight request, final CreateTopicsRequestData data)
    {
        final CreateTopicsResponseData response = new CreateTopicsResponseData().setThrottleTimeMs(0);
        final Collection<PartitionState> states = listener.metadata().partitions();
        final List<Runnable> creations = new ArrayList<>();
        final int hosts = admin.hostCount();
        for (final CreateTopicsRequestData.CreatableTopic topic : data.topics())
        {
            final CreateTopicsResponseData.CreatableTopicResult result =
                new CreateTopicsResponseData.CreatableTopicResult().setName(topic.name()).setNumPartitions(-1)
                    .setReplicationFactor((short)-1).setConfigs(new ArrayList<>());
            response.topics().add(result);
            final int partitions = topic.numPartitions() == -1 ? listener.context().numPartitions() :
                topic.numPartitions();
            final int replicationFactor = topic.replicationFactor() == -1 ? defaultReplicationFactor(hosts) :
                topic.replicationFactor();
            if (!KafkaTopics.validName(topic.name()))
            {
                result.setErrorCode(Errors.INVALID_TOPIC_EXCEPTION.code()).setErrorMessage("topic names are 1 to " +
                    "200 of A-Z a-z 0-9 . _ -");
            }
            else if (KafkaTopics.exists(states, topic.name()))
            {
                result.setErrorCode(Errors.TOPIC_ALREADY_EXISTS.code()).setErrorMessage("topic " + topic.name() +
                    " exists");
            }
            else if (!topic.assignments().isEmpty())
            {
                result.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("explicit replica assignments " +
                    "are not supported: the controller spreads the replicas over the hosts");
            }
            else if (!topic.configs().isEmpty())
            {
                result.setErrorCode(Errors.INVALID_CONFIG.code()).setErrorMessage("per-topic configurations are " +
                    "not supported: the hosts' configuration applies to every topic");
            }
            else if (partitions < 1)
            {
                result.setErrorCode(Errors.INVALID_PARTITIONS.code()).setErrorMessage("at least one partition");
            }
            else if (replicationFactor < 1 || replicationFactor > hosts)
            {
                result.setErrorCode(Errors.INVALID_REPLICATION_FACTOR.code()).setErrorMessage("replication factor " +
                    replicationFactor + " outside [1, " + hosts + "] (the hosts)");
            }
            else
            {
                result.setNumPartitions(partitions).setReplicationFactor((short)replicationFactor)
                    .setTopicId(listener.topicIds().idOf(topic.name()));
                if (!data.validateOnly())
                {
                    creations.add(() ->
                    {
                        try
                        {
                            admin.createTopic(topic.name(), partitions, replicationFactor,
                                Math.max(1_000, data.timeoutMs()));
                        }
                        catch (final IllegalArgumentException ex)
                        {
                            result.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage(ex.getMessage());
                        }
                        catch (final RuntimeException ex)
                        {
                            result.setErrorCode(Errors.REQUEST_TIMED_OUT.code()).setErrorMessage(ex.getMessage());
                        }
                    });
                }
            }
        }
        if (creations.isEmpty())
        {
            request.respond(response);
            return;
        }
        listener.runBlocking(() ->
        {
            for (final Runnable creation : creations)
            {
                creation.run();
            }
            listener.complete(request, response);
        });
    }

    private int defaultReplicationFactor(final int hosts)
    {
        final int configured = listener.context().defaultReplicationFactor();
        return configured > 0 ? configured : Math.max(1, Math.min(3, hosts));
    }

    void deleteTopics(final InFlight request, final DeleteTopicsRequestData data)
    {
        final DeleteTopicsResponseData response = new DeleteTopicsResponseData().setThrottleTimeMs(0);
        final List<String> names = new ArrayList<>(data.topicNames());
        for (final DeleteTopicsRequestData.DeleteTopicState topic : data.topics())
        {
            names.add(null != topic.name() ? topic.name() :
                listener.topicIds().nameOf(topic.topicId(), listener.metadata().partitions()));
        }
        for (final String name : names)
        {
            response.responses().add(new DeleteTopicsResponseData.DeletableTopicResult().setName(name)
                .setErrorCode(Errors.TOPIC_DELETION_DISABLED.code())
                .setErrorMessage("Tidemark does not delete topics; retention removes old segments"));
        }
        request.respond(response);
    }
}
