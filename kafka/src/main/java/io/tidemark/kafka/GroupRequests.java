package io.tidemark.kafka;

import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.TopicPartition;
import org.apache.kafka.common.message.DescribeGroupsRequestData;
import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.HeartbeatRequestData;
import org.apache.kafka.common.message.HeartbeatResponseData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.LeaveGroupRequestData;
import org.apache.kafka.common.message.LeaveGroupResponseData;
import org.apache.kafka.common.message.ListGroupsRequestData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.OffsetCommitRequestData;
import org.apache.kafka.common.message.OffsetCommitResponseData;
import org.apache.kafka.common.message.OffsetFetchRequestData;
import org.apache.kafka.common.message.OffsetFetchResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.OffsetFetchRequest;

import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;

/**
 * The group APIs of one listener: membership goes to the {@link GroupCoordinator}; offset commits and fetches go to
 * the {@link GroupOffsetStore} on the listener's I/O thread (they are durable writes). A broker that is not the
 * coordinator answers NOT_COORDINATOR, and the client asks FindCoordinator again.
 */
final class GroupRequests
{
    private final KafkaListener listener;
    private final GroupCoordinator coordinator;

    GroupRequests(final KafkaListener listener, final GroupCoordinator coordinator)
    {
        this.listener = listener;
        this.coordinator = coordinator;
    }

    void poll(final long nowMs)
    {
        if (null != coordinator)
        {
            coordinator.poll(nowMs);
        }
    }

    private boolean coordinating()
    {
        return null != coordinator && (coordinator.sharedByAllBrokers() ||
            listener.metadata().coordinatorId() == listener.brokerId());
    }

    void join(final InFlight request, final JoinGroupRequestData data)
    {
        if (!coordinating())
        {
            request.respond(new JoinGroupResponseData().setErrorCode(Errors.NOT_COORDINATOR.code())
                .setMemberId(data.memberId()).setGenerationId(-1).setLeader("").setProtocolName(null));
            return;
        }
        coordinator.join(data, request.version(), request.header.clientId(), request.connection.remote,
            System.currentTimeMillis(), (response) -> listener.complete(request, response));
    }

    void sync(final InFlight request, final SyncGroupRequestData data)
    {
        if (!coordinating())
        {
            request.respond(new SyncGroupResponseData().setErrorCode(Errors.NOT_COORDINATOR.code())
                .setAssignment(new byte[0]));
            return;
        }
        coordinator.sync(data, System.currentTimeMillis(), (response) -> listener.complete(request, response));
    }

    void heartbeat(final InFlight request, final HeartbeatRequestData data)
    {
        final Errors error = coordinating() ? coordinator.heartbeat(data.groupId(), data.memberId(),
            data.generationId(), System.currentTimeMillis()) : Errors.NOT_COORDINATOR;
        request.respond(new HeartbeatResponseData().setThrottleTimeMs(0).setErrorCode(error.code()));
    }

    void leave(final InFlight request, final LeaveGroupRequestData data)
    {
        final LeaveGroupResponseData response = new LeaveGroupResponseData().setThrottleTimeMs(0);
        if (!coordinating())
        {
            request.respond(response.setErrorCode(Errors.NOT_COORDINATOR.code()));
            return;
        }
        final long now = System.currentTimeMillis();
        if (request.version() < 3)
        {
            response.setErrorCode(coordinator.leave(data.groupId(), data.memberId(), now).code());
        }
        else
        {
            for (final LeaveGroupRequestData.MemberIdentity member : data.members())
            {
                response.members().add(new LeaveGroupResponseData.MemberResponse().setMemberId(member.memberId())
                    .setGroupInstanceId(member.groupInstanceId())
                    .setErrorCode(coordinator.leave(data.groupId(), member.memberId(), now).code()));
            }
        }
        request.respond(response);
    }

    void commit(final InFlight request, final OffsetCommitRequestData data)
    {
        final OffsetCommitResponseData response = new OffsetCommitResponseData().setThrottleTimeMs(0);
        final Errors groupError = !coordinating() ? Errors.NOT_COORDINATOR :
            coordinator.validateCommit(data.groupId(), data.memberId(), data.generationIdOrMemberEpoch());
        final Collection<PartitionState> states = listener.metadata().partitions();
        final List<Runnable> writes = new ArrayList<>();
        for (final OffsetCommitRequestData.OffsetCommitRequestTopic topic : data.topics())
        {
            final OffsetCommitResponseData.OffsetCommitResponseTopic topicResponse =
                new OffsetCommitResponseData.OffsetCommitResponseTopic().setName(topic.name());
            response.topics().add(topicResponse);
            for (final OffsetCommitRequestData.OffsetCommitRequestPartition partition : topic.partitions())
            {
                final OffsetCommitResponseData.OffsetCommitResponsePartition answer =
                    new OffsetCommitResponseData.OffsetCommitResponsePartition()
                        .setPartitionIndex(partition.partitionIndex());
                topicResponse.partitions().add(answer);
                if (groupError != Errors.NONE)
                {
                    answer.setErrorCode(groupError.code());
                }
                else if (!KafkaTopics.partitionExists(states, topic.name(), partition.partitionIndex()))
                {
                    answer.setErrorCode(Errors.UNKNOWN_TOPIC_OR_PARTITION.code());
                }
                else if (null != partition.committedMetadata() && !partition.committedMetadata().isEmpty())
                {
                    // the offset stores keep an offset and a leader epoch per partition, not Kafka's metadata string
                    answer.setErrorCode(Errors.OFFSET_METADATA_TOO_LARGE.code());
                }
                else if (partition.committedOffset() < 0)
                {
                    answer.setErrorCode(Errors.INVALID_COMMIT_OFFSET_SIZE.code());
                }
                else
                {
                    final TopicPartition tp = new TopicPartition(topic.name(), partition.partitionIndex());
                    writes.add(() ->
                    {
                        try
                        {
                            coordinator.offsets().commit(data.groupId(), tp, partition.committedOffset(),
                                partition.committedLeaderEpoch());
                        }
                        catch (final RuntimeException ex)
                        {
                            answer.setErrorCode(Errors.COORDINATOR_NOT_AVAILABLE.code());
                        }
                    });
                }
            }
        }
        if (writes.isEmpty())
        {
            request.respond(response);
            return;
        }
        listener.runBlocking(() ->
        {
            for (final Runnable write : writes)
            {
                write.run();
            }
            listener.complete(request, response);
        });
    }

    void fetchOffsets(final InFlight request, final OffsetFetchRequest body)
    {
        final OffsetFetchRequestData data = body.data();
        final Collection<PartitionState> states = listener.metadata().partitions();
        final boolean coordinating = coordinating();
        if (request.version() < 8)
        {
            final List<TopicPartition> wanted = new ArrayList<>();
            if (null == data.topics())
            {
                states.forEach((s) -> wanted.add(s.topicPartition()));
            }
            else
            {
                for (final OffsetFetchRequestData.OffsetFetchRequestTopic topic : data.topics())
                {
                    topic.partitionIndexes().forEach((p) -> wanted.add(new TopicPartition(topic.name(), p)));
                }
            }
            final OffsetFetchResponseData response = new OffsetFetchResponseData().setThrottleTimeMs(0);
            if (!coordinating)
            {
                request.respond(response.setErrorCode(Errors.NOT_COORDINATOR.code()));
                return;
            }
            listener.runBlocking(() ->
            {
                final Map<String, List<OffsetFetchResponseData.OffsetFetchResponsePartitions>> found =
                    lookUp(data.groupId(), wanted, null != data.topics());
                for (final Map.Entry<String, List<OffsetFetchResponseData.OffsetFetchResponsePartitions>> e :
                    found.entrySet())
                {
                    final OffsetFetchResponseData.OffsetFetchResponseTopic topic =
                        new OffsetFetchResponseData.OffsetFetchResponseTopic().setName(e.getKey());
                    for (final OffsetFetchResponseData.OffsetFetchResponsePartitions p : e.getValue())
                    {
                        topic.partitions().add(new OffsetFetchResponseData.OffsetFetchResponsePartition()
                            .setPartitionIndex(p.partitionIndex()).setCommittedOffset(p.committedOffset())
                            .setCommittedLeaderEpoch(p.committedLeaderEpoch()).setMetadata(p.metadata())
                            .setErrorCode(p.errorCode()));
                    }
                    response.topics().add(topic);
                }
                listener.complete(request, response);
            });
            return;
        }
        final OffsetFetchResponseData response = new OffsetFetchResponseData().setThrottleTimeMs(0);
        listener.runBlocking(() ->
        {
            for (final OffsetFetchRequestData.OffsetFetchRequestGroup group : data.groups())
            {
                final OffsetFetchResponseData.OffsetFetchResponseGroup groupResponse =
                    new OffsetFetchResponseData.OffsetFetchResponseGroup().setGroupId(group.groupId());
                response.groups().add(groupResponse);
                if (!coordinating)
                {
                    groupResponse.setErrorCode(Errors.NOT_COORDINATOR.code());
                    continue;
                }
                final List<TopicPartition> wanted = new ArrayList<>();
                if (null == group.topics())
                {
                    states.forEach((s) -> wanted.add(s.topicPartition()));
                }
                else
                {
                    for (final OffsetFetchRequestData.OffsetFetchRequestTopics topic : group.topics())
                    {
                        topic.partitionIndexes().forEach((p) -> wanted.add(new TopicPartition(topic.name(), p)));
                    }
                }
                for (final Map.Entry<String, List<OffsetFetchResponseData.OffsetFetchResponsePartitions>> e :
                    lookUp(group.groupId(), wanted, null != group.topics()).entrySet())
                {
                    groupResponse.topics().add(new OffsetFetchResponseData.OffsetFetchResponseTopics()
                        .setName(e.getKey()).setPartitions(e.getValue()));
                }
            }
            listener.complete(request, response);
        });
    }

    /** On the I/O thread: committed offsets of a group; with {@code includeMissing} also the partitions without. */
    private Map<String, List<OffsetFetchResponseData.OffsetFetchResponsePartitions>> lookUp(final String group,
        final List<TopicPartition> wanted, final boolean includeMissing)
    {
        final Map<String, List<OffsetFetchResponseData.OffsetFetchResponsePartitions>> found =
            new java.util.LinkedHashMap<>();
        for (final TopicPartition tp : wanted)
        {
            final OffsetFetchResponseData.OffsetFetchResponsePartitions answer =
                new OffsetFetchResponseData.OffsetFetchResponsePartitions().setPartitionIndex(tp.partition())
                    .setCommittedOffset(-1).setCommittedLeaderEpoch(-1).setMetadata("");
            try
            {
                final GroupOffsetStore.Committed committed = coordinator.offsets().fetch(group, tp);
                if (null == committed && !includeMissing)
                {
                    continue;
                }
                if (null != committed)
                {
                    answer.setCommittedOffset(committed.offset()).setCommittedLeaderEpoch(committed.leaderEpoch());
                }
            }
            catch (final RuntimeException ex)
            {
                answer.setErrorCode(Errors.COORDINATOR_NOT_AVAILABLE.code());
            }
            found.computeIfAbsent(tp.topic(), (t) -> new ArrayList<>()).add(answer);
        }
        return found;
    }

    void describe(final InFlight request, final DescribeGroupsRequestData data)
    {
        final DescribeGroupsResponseData response = new DescribeGroupsResponseData().setThrottleTimeMs(0);
        for (final String groupId : data.groups())
        {
            response.groups().add(coordinating() ? coordinator.describe(groupId) :
                new DescribeGroupsResponseData.DescribedGroup().setGroupId(groupId)
                    .setErrorCode(Errors.NOT_COORDINATOR.code()));
        }
        request.respond(response);
    }

    void list(final InFlight request, final ListGroupsRequestData data)
    {
        final ListGroupsResponseData response = new ListGroupsResponseData().setThrottleTimeMs(0);
        if (coordinating())
        {
            for (final ListGroupsResponseData.ListedGroup group : coordinator.list())
            {
                if ((null == data.statesFilter() || data.statesFilter().isEmpty() ||
                    data.statesFilter().contains(group.groupState())) &&
                    (null == data.typesFilter() || data.typesFilter().isEmpty() ||
                    data.typesFilter().contains("classic") || data.typesFilter().contains("Classic")))
                {
                    response.groups().add(group);
                }
            }
        }
        request.respond(response);
    }
}
