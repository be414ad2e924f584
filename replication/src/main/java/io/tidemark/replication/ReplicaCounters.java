package io.tidemark.replication;

import io.tidemark.replication.protocol.PartitionState;

import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;

/**
 * A replica's positions as Agrona counters, readable from outside the process: the leader it follows (or is),
 * the leader epoch, its high watermark, the ISR size (on the leader), and for each assigned replica the log end
 * offset the leader knows and its lag behind the leader. Updated with ordered writes by the host's threads.
 */
final class ReplicaCounters implements AutoCloseable
{
    static final int LEADER_TYPE_ID = 2001;
    static final int LEADER_EPOCH_TYPE_ID = 2002;
    static final int HIGH_WATERMARK_TYPE_ID = 2003;
    static final int ISR_SIZE_TYPE_ID = 2004;
    static final int REPLICA_LEO_TYPE_ID = 2005;
    static final int FOLLOWER_LAG_TYPE_ID = 2006;

    final AtomicCounter leader;
    final AtomicCounter leaderEpoch;
    final AtomicCounter highWatermark;
    final AtomicCounter isrSize;
    private final int[] replicas;
    private final AtomicCounter[] replicaLogEnd;
    private final AtomicCounter[] followerLag;

    ReplicaCounters(final CountersManager manager, final int hostId, final PartitionState state)
    {
        final String name = state.topicPartition() + " host=" + hostId;
        leader = manager.newCounter("partition-leader: " + name, LEADER_TYPE_ID);
        leaderEpoch = manager.newCounter("partition-leader-epoch: " + name, LEADER_EPOCH_TYPE_ID);
        highWatermark = manager.newCounter("partition-high-watermark: " + name, HIGH_WATERMARK_TYPE_ID);
        isrSize = manager.newCounter("partition-isr-size: " + name, ISR_SIZE_TYPE_ID);
        replicas = state.assignedReplicas().clone();
        replicaLogEnd = new AtomicCounter[replicas.length];
        followerLag = new AtomicCounter[replicas.length];
        for (int i = 0; i < replicas.length; i++)
        {
            replicaLogEnd[i] = manager.newCounter("replica-log-end-offset: " + name + " replica=" + replicas[i],
                REPLICA_LEO_TYPE_ID);
            followerLag[i] = manager.newCounter("follower-lag: " + name + " replica=" + replicas[i],
                FOLLOWER_LAG_TYPE_ID);
        }
        leader.setRelease(PartitionState.NO_LEADER);
    }

    void replica(final int host, final long logEndOffset, final long leaderLogEndOffset)
    {
        for (int i = 0; i < replicas.length; i++)
        {
            if (replicas[i] == host)
            {
                replicaLogEnd[i].setRelease(logEndOffset);
                followerLag[i].setRelease(logEndOffset < 0 ? leaderLogEndOffset :
                    Math.max(0, leaderLogEndOffset - logEndOffset));
            }
        }
    }

    @Override
    public void close()
    {
        leader.close();
        leaderEpoch.close();
        highWatermark.close();
        isrSize.close();
        for (int i = 0; i < replicas.length; i++)
        {
            replicaLogEnd[i].close();
            followerLag[i].close();
        }
    }
}
