/**
 * The interfaces through which the outside reaches replication, so that replication never imports Aeron, Curator
 * or ZooKeeper: {@link io.tidemark.replication.spi.Transport} (the network between replica hosts; Aeron's in the
 * {@code aeron} module, in-process queues in {@code InProcessTransport}),
 * {@link io.tidemark.replication.spi.ControllerStore} and its base
 * {@link io.tidemark.replication.spi.CachedControllerStore} (where the controller keeps partition state: a file,
 * or ZooKeeper), {@link io.tidemark.replication.spi.HostLiveness} (which hosts are alive, by incarnation).
 * <p>
 * May depend on: the JDK, Agrona, {@link io.tidemark.replication.protocol}, and the store's API; nothing else of
 * replication: checkstyle/import-control.xml enforces it.
 */
package io.tidemark.replication.spi;
