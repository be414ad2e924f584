/**
 * What a replica host and its remote clients share, so that neither imports the other's internals: the gateway's
 * messages ({@link io.tidemark.client.remote.protocol.GatewayMessages}), the znodes the controller writes and clients
 * read ({@link io.tidemark.client.remote.protocol.ClusterZNodes}), and the settings both configurations read
 * ({@link io.tidemark.client.remote.protocol.ClusterSettings}).
 * <p>
 * Imports the aeron and zookeeper modules and the store's API (its exceptions), nothing else of the client.
 */
package io.tidemark.client.remote.protocol;
