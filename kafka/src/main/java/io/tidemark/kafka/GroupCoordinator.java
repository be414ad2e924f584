package io.tidemark.kafka;

import org.apache.kafka.common.message.DescribeGroupsResponseData;
import org.apache.kafka.common.message.JoinGroupRequestData;
import org.apache.kafka.common.message.JoinGroupResponseData;
import org.apache.kafka.common.message.ListGroupsResponseData;
import org.apache.kafka.common.message.SyncGroupRequestData;
import org.apache.kafka.common.message.SyncGroupResponseData;
import org.apache.kafka.common.protocol.Errors;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;

/**
 * The classic consumer group protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup), as Kafka's group coordinator
 * runs it: one coordinator for the cluster, groups as state machines
 * ({@code Empty -> PreparingRebalance -> CompletingRebalance -> Stable}), members with session timeouts, a rebalance
 * that waits for every known member to rejoin (up to the rebalance timeout), a leader member that computes the
 * assignment, and generations that fence stale members. Membership lives in memory: when the coordinator moves
 * (its host stops), members find the new one and join again; committed offsets are durable elsewhere
 * ({@link GroupOffsetStore}).
 * <p>
 * Static membership (group.instance.id) is accepted but treated as dynamic. Thread-safe: every call holds the
 * coordinator's lock; answers that wait (a join until the rebalance completes, a follower's sync until the
 * leader's) are handed to callbacks, which the listeners run on their own threads.
 */
public final class GroupCoordinator
{
    /** Group states, named as Kafka names them in DescribeGroups and ListGroups. */
    enum State
    {
        EMPTY("Empty"),
        PREPARING_REBALANCE("PreparingRebalance"),
        COMPLETING_REBALANCE("CompletingRebalance"),
        STABLE("Stable");

        final String kafkaName;

        State(final String kafkaName)
        {
            this.kafkaName = kafkaName;
        }
    }

    private static final class Member
    {
        final String memberId;
        final String clientId;
        final String clientHost;
        String groupInstanceId;
        int sessionTimeoutMs;
        int rebalanceTimeoutMs;
        JoinGroupRequestData.JoinGroupRequestProtocolCollection protocols;
        byte[] assignment = new byte[0];
        long lastHeartbeatMs;
        Consumer<JoinGroupResponseData> awaitingJoin;
        Consumer<SyncGroupResponseData> awaitingSync;

        Member(final String memberId, final String clientId, final String clientHost)
        {
            this.memberId = memberId;
            this.clientId = clientId;
            this.clientHost = clientHost;
        }

        byte[] metadata(final String protocol)
        {
            final JoinGroupRequestData.JoinGroupRequestProtocol p = protocols.find(protocol);
            return null == p ? new byte[0] : p.metadata();
        }
    }

    private static final class Group
    {
        final String groupId;
        State state = State.EMPTY;
        int generation;
        String protocolType;
        String protocolName;
        String leaderId;
        final LinkedHashMap<String, Member> members = new LinkedHashMap<>();
        final Map<String, Long> pendingMemberIds = new HashMap<>();
        long rebalanceDeadlineMs;
        long initialDelayUntilMs;

        Group(final String groupId)
        {
            this.groupId = groupId;
        }
    }

    private final KafkaContext ctx;
    private final GroupOffsetStore offsets;
    private final boolean sharedByAllBrokers;
    private final Map<String, Group> groups = new HashMap<>();
    private long nextPollMs;

    /**
     * @param ctx                group timeouts ({@code kafka.group.*}).
     * @param offsets            where committed offsets are kept.
     * @param sharedByAllBrokers true when every listener of the cluster shares this object (one process): any broker
     *                           may then answer group requests; false when only the coordinator broker may (hosts as
     *                           processes, where the metadata names one coordinator).
     */
    public GroupCoordinator(final KafkaContext ctx, final GroupOffsetStore offsets, final boolean sharedByAllBrokers)
    {
        this.ctx = ctx.clone().validate();
        this.offsets = offsets;
        this.sharedByAllBrokers = sharedByAllBrokers;
    }

    GroupOffsetStore offsets()
    {
        return offsets;
    }

    boolean sharedByAllBrokers()
    {
        return sharedByAllBrokers;
    }

    synchronized void join(final JoinGroupRequestData data, final short version, final String clientId,
        final String clientHost, final long nowMs, final Consumer<JoinGroupResponseData> answer)
    {
        final JoinGroupResponseData response = new JoinGroupResponseData().setThrottleTimeMs(0).setGenerationId(-1)
            .setMemberId(data.memberId()).setLeader("").setProtocolName(null).setProtocolType(null);
        if (null == data.groupId() || data.groupId().isEmpty())
        {
            answer.accept(response.setErrorCode(Errors.INVALID_GROUP_ID.code()));
            return;
        }
        if (data.sessionTimeoutMs() < ctx.groupMinSessionTimeoutMs() ||
            data.sessionTimeoutMs() > ctx.groupMaxSessionTimeoutMs())
        {
            answer.accept(response.setErrorCode(Errors.INVALID_SESSION_TIMEOUT.code()));
            return;
        }
        Group group = groups.get(data.groupId());
        if (null == group)
        {
            group = new Group(data.groupId());
            groups.put(data.groupId(), group);
        }
        if (data.protocols().isEmpty() || (!group.members.isEmpty() &&
            (!data.protocolType().equals(group.protocolType) || !sharesProtocol(group, data))))
        {
            answer.accept(response.setErrorCode(Errors.INCONSISTENT_GROUP_PROTOCOL.code()));
            return;
        }
        String memberId = data.memberId();
        if (memberId.isEmpty())
        {
            memberId = (null == clientId ? "" : clientId) + "-" + UUID.randomUUID();
            if (version >= 4)
            {
                group.pendingMemberIds.put(memberId, nowMs + data.sessionTimeoutMs());
                answer.accept(response.setMemberId(memberId).setErrorCode(Errors.MEMBER_ID_REQUIRED.code()));
                return;
            }
        }
        else if (!group.members.containsKey(memberId) && null == group.pendingMemberIds.remove(memberId))
        {
            answer.accept(response.setErrorCode(Errors.UNKNOWN_MEMBER_ID.code()));
            return;
        }
        Member member = group.members.get(memberId);
        if (null == member)
        {
            member = new Member(memberId, clientId, clientHost);
            group.members.put(memberId, member);
        }
        if (null != member.awaitingJoin && member.awaitingJoin != answer)
        {
            // the client gave up on an earlier join of this member and sent another: that one gets no answer
            member.awaitingJoin = null;
        }
        member.groupInstanceId = data.groupInstanceId();
        member.sessionTimeoutMs = data.sessionTimeoutMs();
        member.rebalanceTimeoutMs = data.rebalanceTimeoutMs() > 0 ? data.rebalanceTimeoutMs() : data.sessionTimeoutMs();
        member.protocols = data.protocols().duplicate();
        member.lastHeartbeatMs = nowMs;
        member.awaitingJoin = answer;
        if (group.members.size() == 1 || null == group.protocolType)
        {
            group.protocolType = data.protocolType();
        }
        prepareRebalance(group, nowMs);
        maybeCompleteJoin(group, nowMs);
    }

    private static boolean sharesProtocol(final Group group, final JoinGroupRequestData data)
    {
        for (final JoinGroupRequestData.JoinGroupRequestProtocol protocol : data.protocols())
        {
            boolean everyone = true;
            for (final Member member : group.members.values())
            {
                if (!member.memberId.equals(data.memberId()) && null == member.protocols.find(protocol.name()))
                {
                    everyone = false;
                    break;
                }
            }
            if (everyone)
            {
                return true;
            }
        }
        return false;
    }

    private void prepareRebalance(final Group group, final long nowMs)
    {
        if (group.state == State.COMPLETING_REBALANCE)
        {
            for (final Member member : group.members.values())
            {
                if (null != member.awaitingSync)
                {
                    member.awaitingSync.accept(new SyncGroupResponseData()
                        .setErrorCode(Errors.REBALANCE_IN_PROGRESS.code()).setAssignment(new byte[0]));
                    member.awaitingSync = null;
                }
            }
        }
        if (group.state != State.PREPARING_REBALANCE)
        {
            if (group.state == State.EMPTY)
            {
                group.initialDelayUntilMs = nowMs + ctx.groupInitialRebalanceDelayMs();
            }
            group.state = State.PREPARING_REBALANCE;
            int timeout = 0;
            for (final Member member : group.members.values())
            {
                timeout = Math.max(timeout, member.rebalanceTimeoutMs);
            }
            group.rebalanceDeadlineMs = nowMs + timeout;
        }
    }

    private void maybeCompleteJoin(final Group group, final long nowMs)
    {
        if (group.state != State.PREPARING_REBALANCE)
        {
            return;
        }
        boolean everyone = true;
        for (final Member member : group.members.values())
        {
            everyone &= null != member.awaitingJoin;
        }
        final boolean overdue = nowMs >= group.rebalanceDeadlineMs;
        if (!overdue && (!everyone || nowMs < group.initialDelayUntilMs))
        {
            return;
        }
        group.members.values().removeIf((m) -> null == m.awaitingJoin);
        group.generation++;
        if (group.members.isEmpty())
        {
            group.state = State.EMPTY;
            group.protocolName = null;
            group.leaderId = null;
            return;
        }
        group.protocolName = selectProtocol(group);
        if (null == group.leaderId || !group.members.containsKey(group.leaderId))
        {
            group.leaderId = group.members.keySet().iterator().next();
        }
        group.state = State.COMPLETING_REBALANCE;
        final List<JoinGroupResponseData.JoinGroupResponseMember> all = new ArrayList<>();
        for (final Member member : group.members.values())
        {
            all.add(new JoinGroupResponseData.JoinGroupResponseMember().setMemberId(member.memberId)
                .setGroupInstanceId(member.groupInstanceId).setMetadata(member.metadata(group.protocolName)));
        }
        for (final Member member : group.members.values())
        {
            final boolean leader = member.memberId.equals(group.leaderId);
            final Consumer<JoinGroupResponseData> answer = member.awaitingJoin;
            member.awaitingJoin = null;
            member.lastHeartbeatMs = nowMs;
            answer.accept(new JoinGroupResponseData().setThrottleTimeMs(0).setErrorCode(Errors.NONE.code())
                .setGenerationId(group.generation).setProtocolType(group.protocolType)
                .setProtocolName(group.protocolName).setLeader(group.leaderId).setMemberId(member.memberId)
                .setSkipAssignment(false).setMembers(leader ? all : new ArrayList<>()));
        }
    }

    /** The protocol every member supports with the most first-choice votes, as Kafka's coordinator picks. */
    private static String selectProtocol(final Group group)
    {
        final Map<String, Integer> votes = new LinkedHashMap<>();
        for (final Member member : group.members.values())
        {
            for (final JoinGroupRequestData.JoinGroupRequestProtocol protocol : member.protocols)
            {
                boolean everyone = true;
                for (final Member other : group.members.values())
                {
                    everyone &= null != other.protocols.find(protocol.name());
                }
                if (everyone)
                {
                    votes.merge(protocol.name(), 1, Integer::sum);
                    break;
                }
            }
        }
        String best = null;
        int most = -1;
        for (final Map.Entry<String, Integer> e : votes.entrySet())
        {
            if (e.getValue() > most)
            {
                best = e.getKey();
                most = e.getValue();
            }
        }
        return null != best ? best : group.members.values().iterator().next().protocols.iterator().next().name();
    }

    synchronized void sync(final SyncGroupRequestData data, final long nowMs,
        final Consumer<SyncGroupResponseData> answer)
    {
        final SyncGroupResponseData response = new SyncGroupResponseData().setThrottleTimeMs(0)
            .setAssignment(new byte[0]);
        final Group group = groups.get(data.groupId());
        final Member member = null == group ? null : group.members.get(data.memberId());
        if (null == member)
        {
            answer.accept(response.setErrorCode(Errors.UNKNOWN_MEMBER_ID.code()));
            return;
        }
        if (data.generationId() != group.generation)
        {
            answer.accept(response.setErrorCode(Errors.ILLEGAL_GENERATION.code()));
            return;
        }
        if ((null != data.protocolType() && !data.protocolType().equals(group.protocolType)) ||
            (null != data.protocolName() && !data.protocolName().equals(group.protocolName)))
        {
            answer.accept(response.setErrorCode(Errors.INCONSISTENT_GROUP_PROTOCOL.code()));
            return;
        }
        member.lastHeartbeatMs = nowMs;
        switch (group.state)
        {
            case PREPARING_REBALANCE, EMPTY ->
                answer.accept(response.setErrorCode(Errors.REBALANCE_IN_PROGRESS.code()));
            case STABLE -> answer.accept(response.setErrorCode(Errors.NONE.code())
                .setProtocolType(group.protocolType).setProtocolName(group.protocolName)
                .setAssignment(member.assignment));
            case COMPLETING_REBALANCE ->
            {
                member.awaitingSync = answer;
                if (member.memberId.equals(group.leaderId))
                {
                    for (final Member m : group.members.values())
                    {
                        m.assignment = new byte[0];
                    }
                    for (final SyncGroupRequestData.SyncGroupRequestAssignment assignment : data.assignments())
                    {
                        final Member m = group.members.get(assignment.memberId());
                        if (null != m)
                        {
                            m.assignment = assignment.assignment();
                        }
                    }
                    group.state = State.STABLE;
                    for (final Member m : group.members.values())
                    {
                        if (null != m.awaitingSync)
                        {
                            final Consumer<SyncGroupResponseData> waiting = m.awaitingSync;
                            m.awaitingSync = null;
                            waiting.accept(new SyncGroupResponseData().setThrottleTimeMs(0)
                                .setErrorCode(Errors.NONE.code()).setProtocolType(group.protocolType)
                                .setProtocolName(group.protocolName).setAssignment(m.assignment));
                        }
                    }
                }
            }
            default -> throw new IllegalStateException(group.state.name());
        }
    }

    synchronized Errors heartbeat(final String groupId, final String memberId, final int generation,
        final long nowMs)
    {
        final Group group = groups.get(groupId);
        final Member member = null == group ? null : group.members.get(memberId);
        if (null == member)
        {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        if (generation != group.generation)
        {
            return Errors.ILLEGAL_GENERATION;
        }
        member.lastHeartbeatMs = nowMs;
        return group.state == State.PREPARING_REBALANCE ? Errors.REBALANCE_IN_PROGRESS : Errors.NONE;
    }

    synchronized Errors leave(final String groupId, final String memberId, final long nowMs)
    {
        final Group group = groups.get(groupId);
        final Member member = null == group ? null : group.members.get(memberId);
        if (null == member)
        {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        removeMember(group, member, nowMs);
        return Errors.NONE;
    }

    private void removeMember(final Group group, final Member member, final long nowMs)
    {
        group.members.remove(member.memberId);
        if (null != member.awaitingJoin)
        {
            member.awaitingJoin.accept(new JoinGroupResponseData().setErrorCode(Errors.UNKNOWN_MEMBER_ID.code())
                .setMemberId(member.memberId).setGenerationId(-1).setLeader("").setProtocolName(null));
        }
        if (null != member.awaitingSync)
        {
            member.awaitingSync.accept(new SyncGroupResponseData().setErrorCode(Errors.UNKNOWN_MEMBER_ID.code())
                .setAssignment(new byte[0]));
        }
        if (member.memberId.equals(group.leaderId))
        {
            group.leaderId = null;
        }
        if (group.members.isEmpty() && group.state != State.PREPARING_REBALANCE)
        {
            group.state = State.EMPTY;
            group.generation++;
            return;
        }
        prepareRebalance(group, nowMs);
        maybeCompleteJoin(group, nowMs);
    }

    /**
     * Check a commit's member and generation.
     *
     * @return NONE when the group's offsets may be committed by this member.
     */
    synchronized Errors validateCommit(final String groupId, final String memberId, final int generation)
    {
        final Group group = groups.get(groupId);
        if (generation < 0 && (null == memberId || memberId.isEmpty()))
        {
            // a consumer outside group management (assign + commit): only while no member manages the group
            return null == group || group.members.isEmpty() ? Errors.NONE : Errors.UNKNOWN_MEMBER_ID;
        }
        final Member member = null == group ? null : group.members.get(memberId);
        if (null == member)
        {
            return Errors.UNKNOWN_MEMBER_ID;
        }
        if (generation != group.generation)
        {
            return Errors.ILLEGAL_GENERATION;
        }
        return group.state == State.COMPLETING_REBALANCE ? Errors.REBALANCE_IN_PROGRESS : Errors.NONE;
    }

    /** Expire members whose session ran out, and complete rebalances whose time is up. Cheap when nothing is due. */
    synchronized void poll(final long nowMs)
    {
        if (nowMs < nextPollMs)
        {
            return;
        }
        nextPollMs = nowMs + 10;
        for (final Group group : new ArrayList<>(groups.values()))
        {
            group.pendingMemberIds.values().removeIf((deadline) -> deadline < nowMs);
            if (group.state == State.PREPARING_REBALANCE)
            {
                maybeCompleteJoin(group, nowMs);
            }
            final Iterator<Member> it = new ArrayList<>(group.members.values()).iterator();
            while (it.hasNext())
            {
                final Member member = it.next();
                if (group.state != State.PREPARING_REBALANCE && null == member.awaitingJoin &&
                    nowMs - member.lastHeartbeatMs > member.sessionTimeoutMs)
                {
                    removeMember(group, member, nowMs);
                }
            }
            if (group.state == State.EMPTY && group.members.isEmpty() && group.pendingMemberIds.isEmpty())
            {
                groups.remove(group.groupId);
            }
        }
    }

    synchronized DescribeGroupsResponseData.DescribedGroup describe(final String groupId)
    {
        final DescribeGroupsResponseData.DescribedGroup described = new DescribeGroupsResponseData.DescribedGroup()
            .setGroupId(groupId).setErrorCode(Errors.NONE.code());
        final Group group = groups.get(groupId);
        if (null == group)
        {
            return described.setGroupState("Dead").setProtocolType("").setProtocolData("");
        }
        described.setGroupState(group.state.kafkaName).setProtocolType(null == group.protocolType ? "" :
            group.protocolType).setProtocolData(group.state == State.STABLE ? group.protocolName : "");
        for (final Member member : group.members.values())
        {
            described.members().add(new DescribeGroupsResponseData.DescribedGroupMember()
                .setMemberId(member.memberId).setGroupInstanceId(member.groupInstanceId)
                .setClientId(member.clientId).setClientHost(member.clientHost)
                .setMemberMetadata(group.state == State.STABLE ? member.metadata(group.protocolName) : new byte[0])
                .setMemberAssignment(group.state == State.STABLE ? member.assignment : new byte[0]));
        }
        return described;
    }

    synchronized List<ListGroupsResponseData.ListedGroup> list()
    {
        final List<ListGroupsResponseData.ListedGroup> listed = new ArrayList<>();
        for (final Group group : groups.values())
        {
            listed.add(new ListGroupsResponseData.ListedGroup().setGroupId(group.groupId)
                .setProtocolType(null == group.protocolType ? "" : group.protocolType)
                .setGroupState(group.state.kafkaName).setGroupType("classic"));
        }
        return listed;
    }
}
