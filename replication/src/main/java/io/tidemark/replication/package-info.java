/**
 * Replication inside one JVM: Kafka's ISR replication (acks, high watermark, leader epochs, fetch, the controller)
 * over the store's logs.
 * <p>
 * <b>API.</b> {@link io.tidemark.replication.ReplicationCluster} and {@link io.tidemark.replication.ReplicaHost}
 * (configured by {@link io.tidemark.replication.ReplicationContext}), {@link io.tidemark.replication.ReplicaNode},
 * {@link io.tidemark.replication.LeaderPartitions}, {@link io.tidemark.replication.PartitionReader}, the values
 * {@link io.tidemark.replication.TopicPartition}, {@link io.tidemark.replication.Acks},
 * {@link io.tidemark.replication.ReplicationError}, and the pieces a deployment supplies or reuses
 * ({@link io.tidemark.replication.InProcessTransport}, {@link io.tidemark.replication.FileControllerStore},
 * {@link io.tidemark.replication.ControlChannel}, {@link io.tidemark.replication.Controller}).
 * <p>
 * <b>Behind it</b> (package-private): the leader's state and pending acks, the follower's fetcher, the fetch server,
 * the high-watermark and leader-epoch checkpoints, producer state, the duty-cycle agents.
 * <p>
 * <b>Sub-packages.</b> {@link io.tidemark.replication.protocol} holds the messages and their codecs (no replication
 * logic); {@link io.tidemark.replication.spi} holds the interfaces through which the network and the coordination
 * service reach replication ({@code Transport}, {@code ControllerStore}, {@code HostLiveness}).
 * <p>
 * May depend on: the JDK, Agrona, the store, and its own sub-packages. Never Aeron, Curator or ZooKeeper, nor any
 * module above it: checkstyle/import-control.xml enforces it.
 */
package io.tidemark.replication;
