/**
 * The replication protocol: what replica hosts, the controller and clients say to each other, and how it is laid
 * out in bytes. {@link io.tidemark.replication.protocol.FetchMessages} (fetch and epoch requests and responses,
 * flyweights over the transport's buffers), {@link io.tidemark.replication.protocol.ProduceMessages} (the produce
 * request a client hands a leader), {@link io.tidemark.replication.protocol.ControlMessage} with
 * {@link io.tidemark.replication.protocol.ControlMessageCodec} (the control plane between hosts and the controller),
 * {@link io.tidemark.replication.protocol.PartitionState} with
 * {@link io.tidemark.replication.protocol.PartitionStateCodec} (the controller's record of a partition, on the wire
 * and in its store). Each codec treats its input as hostile: a malformed message is a typed error, never a partial
 * object.
 * <p>
 * May depend on: the JDK, Agrona, the store's format ({@code io.tidemark.store.format}), and replication's value
 * types {@code TopicPartition} and {@code ReplicationError}; no replication logic, nothing of {@code spi}:
 * checkstyle/import-control.xml enforces it.
 */
package io.tidemark.replication.protocol;
