package io.tidemark.kafka;

import io.tidemark.replication.LeaderPartitions;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.LogReader;
import io.tidemark.store.StorageException;
import org.apache.kafka.common.message.DescribeConfigsRequestData;
import org.apache.kafka.common.message.DescribeConfigsResponseData;
import org.apache.kafka.common.message.FindCoordinatorRequestData;
import org.apache.kafka.common.message.FindCoordinatorResponseData;
import org.apache.kafka.common.message.ListOffsetsRequestData;
import org.apache.kafka.common.message.ListOffsetsResponseData;
import org.apache.kafka.common.message.MetadataRequestData;
import org.apache.kafka.common.message.MetadataResponseData;
import org.apache.kafka.common.message.OffsetForLeaderEpochRequestData;
import org.apache.kafka.common.message.OffsetForLeaderEpochResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.ListOffsetsRequest;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

/**
 * Metadata (brokers are the hosts with a Kafka listener; each partition's leader, leader epoch, replicas, ISR and
 * offline replicas), ListOffsets (earliest, latest, by timestamp), OffsetsForLeaderEpoch (a consumer's check for a
 * truncated log, KIP-320), FindCoordinator (one group coordinator for the cluster) and DescribeConfigs (read-only).
 * On the listener's agent thread; answers from memory.
 */
final class MetadataRequests
{
    private final KafkaListener listener;
    private final long[] epochAnswer = new long[2];

    MetadataRequests(final KafkaListener listener)
    {
        this.listener = listener;
    }

    void metadata(final InFlight request, final MetadataRequestData data)
    {
        final ClusterMetadata cluster = listener.metadata();
        final List<KafkaBroker> brokers = cluster.brokers();
        final Set<Integer> live = new TreeSet<>();
        final MetadataResponseData response = new MetadataResponseData().setThrottleTimeMs(0)
            .setClusterId(cluster.clusterId()).setControllerId(cluster.controllerId());
        for (final KafkaBroker broker : brokers)
        {
            live.add(broker.id());
            response.brokers().add(new MetadataResponseData.MetadataResponseBroker().setNodeId(broker.id())
                .setHost(broker.host()).setPort(broker.port()).setRack(null));
        }
        final Collection<PartitionState> states = cluster.partitions();
        final Map<String, List<PartitionState>> topics = KafkaTopics.byTopic(states);
        final List<String> names = new ArrayList<>();
        if (null == data.topics())
        {
            names.addAll(topics.keySet());
        }
        else
        {
            for (final MetadataRequestData.MetadataRequestTopic topic : data.topics())
            {
                String name = topic.name();
                if (null == name && null != topic.topicId())
                {
                    name = listener.topicIds().nameOf(topic.topicId(), states);
                    if (null == name)
                    {
                        response.topics().add(new MetadataResponseData.MetadataResponseTopic()
                            .setTopicId(topic.topicId()).setErrorCode(Errors.UNKNOWN_TOPIC_ID.code()));
                        continue;
                    }
                }
                names.add(name);
            }
        }
        for (final String name : names)
        {
            final List<PartitionState> partitions = topics.get(name);
            final MetadataResponseData.MetadataResponseTopic topic = new MetadataResponseData.MetadataResponseTopic()
                .setName(name).setIsInternal(false);
            if (null == partitions)
            {
                topic.setErrorCode((KafkaTopics.validName(name) ? Errors.UNKNOWN_TOPIC_OR_PARTITION :
                    Errors.INVALID_TOPIC_EXCEPTION).code());
                response.topics().add(topic);
                continue;
            }
            topic.setTopicId(listener.topicIds().idOf(name));
            for (final PartitionState state : partitions)
            {
                final boolean leaderLive = state.leader() != PartitionState.NO_LEADER && live.contains(state.leader());
                final MetadataResponseData.MetadataResponsePartition partition =
                    new MetadataResponseData.MetadataResponsePartition()
                        .setPartitionIndex(state.topicPartition().partition())
                        .setLeaderId(leaderLive ? state.leader() : -1)
                        .setLeaderEpoch(state.leaderEpoch())
                        .setErrorCode(leaderLive ? Errors.NONE.code() : Errors.LEADER_NOT_AVAILABLE.code());
                final List<Integer> replicas = new ArrayList<>();
                final List<Integer> offline = new ArrayList<>();
                for (final int replica : state.assignedReplicas())
                {
                    replicas.add(replica);
                    if (!live.contains(replica))
                    {
                        offline.add(replica);
                    }
                }
                final List<Integer> isr = new ArrayList<>();
                for (final int member : state.isr())
                {
                    isr.add(member);
                }
                partition.setReplicaNodes(replicas).setIsrNodes(isr).setOfflineReplicas(offline);
                topic.partitions().add(partition);
            }
            response.topics().add(topic);
        }
        request.respond(response);
    }

    void listOffsets(final InFlight request, final ListOffsetsRequestData data)
    {
        final LeaderPartitions partitions = listener.partitions();
        final Collection<PartitionState> states = listener.metadata().partitions();
        final ListOffsetsResponseData response = new ListOffsetsResponseData().setThrottleTimeMs(0);
        for (final ListOffsetsRequestData.ListOffsetsTopic topic : data.topics())
        {
            final ListOffsetsResponseData.ListOffsetsTopicResponse topicResponse =
                new ListOffsetsResponseData.ListOffsetsTopicResponse().setName(topic.name());
            response.topics().add(topicResponse);
            for (final ListOffsetsRequestData.ListOffsetsPartition partition : topic.partitions())
            {
                final ListOffsetsResponseData.ListOffsetsPartitionResponse answer =
                    new ListOffsetsResponseData.ListOffsetsPartitionResponse()
                        .setPartitionIndex(partition.partitionIndex()).setTimestamp(-1).setOffset(-1)
                        .setLeaderEpoch(-1);
                topicResponse.partitions().add(answer);
                answer.setErrorCode(listOffset(partitions, states, topic.name(), partition, answer).code());
            }
        }
        request.respond(response);
    }

    private Errors listOffset(final LeaderPartitions partitions, final Collection<PartitionState> states,
        final String topic, final ListOffsetsRequestData.ListOffsetsPartition partition,
        final ListOffsetsResponseData.ListOffsetsPartitionResponse answer)
    {
        if (!KafkaTopics.partitionExists(states, topic, partition.partitionIndex()))
        {
            return Errors.UNKNOWN_TOPIC_OR_PARTITION;
        }
        final int partitionId = null == partitions ? -1 :
            partitions.partitionIdOf(new TopicPartition(topic, partition.partitionIndex()));
        if (partitionId < 0 || !partitions.isLeading(partitionId))
        {
            return Errors.NOT_LEADER_OR_FOLLOWER;
        }
        final int epoch = partitions.leaderEpoch(partitionId);
        if (partition.currentLeaderEpoch() >= 0 && partition.currentLeaderEpoch() != epoch)
        {
            return partition.currentLeaderEpoch() < epoch ? Errors.FENCED_LEADER_EPOCH : Errors.UNKNOWN_LEADER_EPOCH;
        }
        final long timestamp = partition.timestamp();
        if (timestamp == ListOffsetsRequest.LATEST_TIMESTAMP)
        {
            final long latest = partitions.latestOffset(partitionId);
            if (latest == LeaderPartitions.NO_OFFSET)
            {
                return Errors.OFFSET_NOT_AVAILABLE;
            }
            answer.setOffset(latest).setLeaderEpoch(epoch);
            return Errors.NONE;
        }
        if (timestamp == ListOffsetsRequest.EARLIEST_TIMESTAMP || timestamp == ListOffsetsRequest.EARLIEST_LOCAL_TIMESTAMP)
        {
            answer.setOffset(partitions.logStartOffset(partitionId));
            return Errors.NONE;
        }
        if (timestamp < 0)
        {
            return Errors.UNSUPPORTED_VERSION; // max timestamp, tiered offsets: not served
        }
        final long offset = partitions.offsetForTimestamp(partitionId, timestamp);
        if (offset < 0)
        {
            return Errors.NONE; // no committed record that recent: offset -1, as Kafka answers
        }
        try (LogReader reader = partitions.openReader(partitionId))
        {
            if (null == reader)
            {
                return Errors.NOT_LEADER_OR_FOLLOWER;
            }
            reader.seek(offset);
            reader.poll((record) -> answer.setOffset(record.offset()).setTimestamp(record.timestamp()),
                partitions.highWatermark(partitionId), 1);
        }
        catch (final StorageException ex)
        {
            return Errors.NOT_LEADER_OR_FOLLOWER;
        }
        return Errors.NONE;
    }

    void offsetForLeaderEpoch(final InFlight request, final OffsetForLeaderEpochRequestData data)
    {
        final LeaderPartitions partitions = listener.partitions();
        final Collection<PartitionState> states = listener.metadata().partitions();
        final OffsetForLeaderEpochResponseData response = new OffsetForLeaderEpochResponseData().setThrottleTimeMs(0);
        for (final OffsetForLeaderEpochRequestData.OffsetForLeaderTopic topic : data.topics())
        {
            final OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult result =
                new OffsetForLeaderEpochResponseData.OffsetForLeaderTopicResult().setTopic(topic.topic());
            response.topics().add(result);
            for (final OffsetForLeaderEpochRequestData.OffsetForLeaderPartition partition : topic.partitions())
            {
                final OffsetForLeaderEpochResponseData.EpochEndOffset end =
                    new OffsetForLeaderEpochResponseData.EpochEndOffset().setPartition(partition.partition())
                        .setLeaderEpoch(-1).setEndOffset(-1);
                result.partitions().add(end);
                final int partitionId = null == partitions ? -1 :
                    partitions.partitionIdOf(new TopicPartition(topic.topic(), partition.partition()));
                if (partitionId < 0 || !partitions.isLeading(partitionId))
                {
                    end.setErrorCode((KafkaTopics.partitionExists(states, topic.topic(), partition.partition()) ?
                        Errors.NOT_LEADER_OR_FOLLOWER : Errors.UNKNOWN_TOPIC_OR_PARTITION).code());
                    continue;
                }
                final int epoch = partitions.leaderEpoch(partitionId);
                if (partition.currentLeaderEpoch() >= 0 && partition.currentLeaderEpoch() != epoch)
                {
                    end.setErrorCode((partition.currentLeaderEpoch() < epoch ? Errors.FENCED_LEADER_EPOCH :
                        Errors.UNKNOWN_LEADER_EPOCH).code());
                    continue;
                }
                if (!partitions.endOffsetForEpoch(partitionId, partition.leaderEpoch(), epochAnswer))
                {
                    end.setErrorCode(Errors.NOT_LEADER_OR_FOLLOWER.code());
                    continue;
                }
                end.setLeaderEpoch((int)epochAnswer[0]).setEndOffset(epochAnswer[1]);
            }
        }
        request.respond(response);
    }

    void findCoordinator(final InFlight request, final FindCoordinatorRequestData data)
    {
        final ClusterMetadata cluster = listener.metadata();
        final int coordinatorId = cluster.coordinatorId();
        KafkaBroker coordinator = null;
        for (final KafkaBroker broker : cluster.brokers())
        {
            if (broker.id() == coordinatorId)
            {
                coordinator = broker;
            }
        }
        final boolean transactions = data.keyType() != 0;
        final Errors error = transactions ? Errors.TRANSACTIONAL_ID_AUTHORIZATION_FAILED :
            null == coordinator ? Errors.COORDINATOR_NOT_AVAILABLE : Errors.NONE;
        final String message = transactions ? "transactions are not supported" : null;
        final FindCoordinatorResponseData response = new FindCoordinatorResponseData().setThrottleTimeMs(0);
        if (request.version() < 4)
        {
            response.setErrorCode(error.code()).setErrorMessage(message)
                .setNodeId(null == coordinator || transactions ? -1 : coordinator.id())
                .setHost(null == coordinator || transactions ? "" : coordinator.host())
                .setPort(null == coordinator || transactions ? -1 : coordinator.port());
        }
        else
        {
            for (final String key : data.coordinatorKeys())
            {
                response.coordinators().add(new FindCoordinatorResponseData.Coordinator().setKey(key)
                    .setErrorCode(error.code()).setErrorMessage(message)
                    .setNodeId(null == coordinator || transactions ? -1 : coordinator.id())
                    .setHost(null == coordinator || transactions ? "" : coordinator.host())
                    .setPort(null == coordinator || transactions ? -1 : coordinator.port()));
            }
        }
        request.respond(response);
    }

    void describeConfigs(final InFlight request, final DescribeConfigsRequestData data)
    {
        final ClusterMetadata cluster = listener.metadata();
        final Collection<PartitionState> states = cluster.partitions();
        final DescribeConfigsResponseData response = new DescribeConfigsResponseData().setThrottleTimeMs(0);
        for (final DescribeConfigsRequestData.DescribeConfigsResource resource : data.resources())
        {
            final DescribeConfigsResponseData.DescribeConfigsResult result =
                new DescribeConfigsResponseData.DescribeConfigsResult().setResourceType(resource.resourceType())
                    .setResourceName(resource.resourceName());
            response.results().add(result);
            final boolean topic = resource.resourceType() == 2;
            final boolean broker = resource.resourceType() == 4;
            if (topic && !KafkaTopics.exists(states, resource.resourceName()))
            {
                result.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
                continue;
            }
            if (!topic && !broker)
            {
                result.setErrorCode(Errors.INVALID_REQUEST.code()).setErrorMessage("only topic and broker " +
                    "configurations are described");
                continue;
            }
            for (final Map.Entry<String, String> config : cluster.topicConfigs().entrySet())
            {
                if (null != resource.configurationKeys() && !resource.configurationKeys().contains(config.getKey()))
                {
                    continue;
                }
                result.configs().add(new DescribeConfigsResponseData.DescribeConfigsResourceResult()
                    .setName(config.getKey()).setValue(config.getValue()).setReadOnly(true)
                    .setConfigSource((byte)(topic ? 5 : 4)).setIsSensitive(false));
            }
        }
        request.respond(response);
    }
}
