package io.tidemark.replication;

import io.tidemark.store.config.ConfigDef;
import io.tidemark.store.config.ConfigKey;

import static io.tidemark.replication.ReplicationContext.*;

/**
 * The definitions of {@link ReplicationContext}'s keys (the names are its constants): default, accepted values and
 * the text of each key's row in docs/configuration.md, in the table's order. As Aeron keeps a component's
 * {@code Configuration} beside its {@code Context}: the keys here, the values and collaborators there. Checks that
 * relate two keys stay in {@link ReplicationContext#conclude()}.
 */
final class ReplicationKeys
{
    /** The definitions, bound to the context's accessors; published as {@link ReplicationContext#CONFIG}. */
    static final ConfigDef<ReplicationContext> CONFIG = new ConfigDef<ReplicationContext>()
        .define(ConfigKey.ofLong(REPLICA_LAG_TIME_MAX_MS, 1000, 2, MAX_TIMEOUT_MS)
            .withDoc("A follower behind the leader for longer leaves the ISR. At most 3600000, as every timeout here " +
            "(larger ones would overflow arithmetic further on, or never end)."),
            ReplicationContext::replicaLagTimeMaxMs, ReplicationContext::replicaLagTimeMaxMs)
        .define(ConfigKey.ofLong(REPLICA_LAG_MAX_MESSAGES, 0, 0, Long.MAX_VALUE)
            .withDefaultText("0 (off)")
            .withDoc("A follower more than this many records behind the leader's log end also leaves the ISR, at the " +
            "same check (Kafka 0.8's rule). Opt-in: a burst larger than this knocks healthy followers out and the ISR " +
            "flaps with every burst, failing acks=all writes while it is below `min.insync.replicas` (KIP-16; " +
            "[replication](replication.md#isr-membership) rule 8). Joining is unchanged."),
            ReplicationContext::replicaLagMaxMessages, ReplicationContext::replicaLagMaxMessages)
        .define(ConfigKey.ofInt(MIN_INSYNC_REPLICAS, 1, 1, 64)
            .withDoc("Smallest ISR that accepts acks=all and advances the high watermark."),
            ReplicationContext::minInsyncReplicas, ReplicationContext::minInsyncReplicas)
        .define(ConfigKey.ofBoolean(UNCLEAN_LEADER_ELECTION_ENABLE, false)
            .withDoc("Elect an out-of-sync replica when no ISR member is alive (data loss accepted)."),
            ReplicationContext::uncleanLeaderElectionEnable, ReplicationContext::uncleanLeaderElectionEnable)
        .define(ConfigKey.ofInt(REPLICA_FETCH_MAX_BYTES, 1024 * 1024, 1024, 64 * 1024 * 1024)
            .withDoc("Most record bytes in one fetch response."),
            ReplicationContext::replicaFetchMaxBytes, ReplicationContext::replicaFetchMaxBytes)
        .define(ConfigKey.ofLong(REPLICA_FETCH_WAIT_MAX_MS, 500, 0, 60_000)
            .withDoc("Longest the leader parks a fetch that has nothing new; at most 60000."),
            ReplicationContext::replicaFetchWaitMaxMs, ReplicationContext::replicaFetchWaitMaxMs)
        .define(ConfigKey.ofLong(REPLICA_FETCH_BACKOFF_MS, 50, 0, 60_000)
            .withDoc("Fetcher pause after an error; at most 60000."),
            ReplicationContext::replicaFetchBackoffMs, ReplicationContext::replicaFetchBackoffMs)
        .define(ConfigKey.ofLong(REQUEST_TIMEOUT_MS, 30_000, 1, MAX_TIMEOUT_MS)
            .withDoc("Longest a produce request waits for its acknowledgement."),
            ReplicationContext::requestTimeoutMs, ReplicationContext::requestTimeoutMs)
        .define(ConfigKey.ofLong(HOST_SESSION_TIMEOUT_MS, 600, 2, 600_000)
            .withDoc("A host silent for longer is dead: out of every ISR, loses leadership. At most 600000."),
            ReplicationContext::hostSessionTimeoutMs, ReplicationContext::hostSessionTimeoutMs)
        .define(ConfigKey.ofLong(HOST_HEARTBEAT_INTERVAL_MS, 100, 1, 60_000)
            .withDoc("Heartbeat period; at most 60000."),
            ReplicationContext::hostHeartbeatIntervalMs, ReplicationContext::hostHeartbeatIntervalMs)
        .define(ConfigKey.ofLong(CONTROLLER_TIMEOUT_MS, 1000, 300, 600_000)
            .withDoc("Host processes: a controller not heard (it announces itself every 100 ms) for longer is " +
            "suspected dead; a majority of the cluster's hosts suspecting it deposes it without waiting for its " +
            "ZooKeeper session ([multi-host](multi-host.md#controller-failover)). 300 to 600000."),
            ReplicationContext::controllerTimeoutMs, ReplicationContext::controllerTimeoutMs)
        .define(ConfigKey.ofLong(HIGH_WATERMARK_CHECKPOINT_INTERVAL_MS, 1000, 1, Integer.MAX_VALUE)
            .withDoc("High watermark checkpoint period."),
            ReplicationContext::highWatermarkCheckpointIntervalMs, ReplicationContext::highWatermarkCheckpointIntervalMs)
        .define(ConfigKey.ofInt(TRANSPORT_REQUEST_RING_BYTES, 1024 * 1024, 0, Integer.MAX_VALUE)
            .withValidator(ConfigKey.powerOfTwo(64 * 1024))
            .withDoc("Each host's inbound request ring (power of two)."),
            ReplicationContext::transportRequestRingBytes, ReplicationContext::transportRequestRingBytes)
        .define(ConfigKey.ofInt(TRANSPORT_RESPONSE_RING_BYTES, 16 * 1024 * 1024, 0, Integer.MAX_VALUE)
            .withValidator(ConfigKey.powerOfTwo(64 * 1024))
            .withDoc("Each fetcher's response ring (power of two, >= 8 x (fetch max + 2 KiB))."),
            ReplicationContext::transportResponseRingBytes, ReplicationContext::transportResponseRingBytes)
        .define(ConfigKey.ofInt(PRODUCE_RING_BYTES, 4 * 1024 * 1024, 0, Integer.MAX_VALUE)
            .withValidator(ConfigKey.powerOfTwo(64 * 1024))
            .withDoc("Each partition's produce queue (power of two), in direct memory on every replica: a host needs " +
            "`host.replicas.max` times it at most."),
            ReplicationContext::produceRingBytes, ReplicationContext::produceRingBytes)
        .define(ConfigKey.ofInt(TOPIC_PARTITIONS_MAX, 1024, 1, 65_536)
            .withDoc("Most partitions one topic may have. A larger request is refused (marked refused in ZooKeeper, " +
            "never retried) before anything is created; clients check it first. 1 to 65536."),
            ReplicationContext::topicPartitionsMax, ReplicationContext::topicPartitionsMax)
        .define(ConfigKey.ofInt(HOST_REPLICAS_MAX, 1024, 1, 65_536)
            .withDoc("Most replicas one host may hold: a topic that would put more on a host is refused before " +
            "anything is created, and a host does not open more. Sizes the host's counters file (`counters.dat`). " +
            "1 to 65536."),
            ReplicationContext::hostReplicasMax, ReplicationContext::hostReplicasMax)
        .define(ConfigKey.ofLong(HOST_PRETOUCH_BUDGET_BYTES, 1L << 30, 0, 1L << 40)
            .withDoc("Bytes of segment pretouching (each replica's `pretouch.bytes`) a host spends over all its " +
            "replicas; replicas opened once it is spent do not pretouch."),
            ReplicationContext::hostPretouchBudgetBytes, ReplicationContext::hostPretouchBudgetBytes);

    private ReplicationKeys()
    {
    }
}
