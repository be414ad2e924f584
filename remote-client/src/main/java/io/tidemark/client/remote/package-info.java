/**
 * The remote client: a client of replica hosts running in other processes. {@link
 * io.tidemark.client.remote.TidemarkClient} learns the partitions and the hosts from ZooKeeper, sends produce and read
 * requests to the leaders over Aeron, keeps consumer groups' offsets and asks the controller for topics; it is the
 * {@link io.tidemark.client.ClusterConnection} of a {@link io.tidemark.client.Producer}.
 * <p>
 * Depends on the clients, aeron and zookeeper modules, never on the host module ({@code io.tidemark.host}): what the
 * host and the client must agree on lives in {@link io.tidemark.client.remote.protocol}.
 */
package io.tidemark.client.remote;
