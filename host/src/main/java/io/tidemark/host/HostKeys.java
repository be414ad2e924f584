package io.tidemark.host;

import io.tidemark.aeron.AeronMedia;
import io.tidemark.client.remote.protocol.ClusterSettings;
import io.tidemark.store.ConfigException;
import io.tidemark.store.config.ConfigDef;
import io.tidemark.store.config.ConfigKey;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static io.tidemark.host.HostConfig.*;

/**
 * The definitions of {@link HostConfig}'s own keys (the names are its constants; ZooKeeper's, replication's and the
 * Kafka listener's keys are defined by their classes): type, default, accepted values and the text of each key's
 * row in docs/configuration.md, in the table's order; the keys a host shares with its clients are bound from
 * {@link ClusterSettings}' definitions. As Aeron keeps a component's {@code Configuration} beside its
 * {@code Context}: the keys here, the values there. Checks that relate two keys (the host in the host list, the
 * per-address limit under the total, the secret file or insecure) stay in {@link HostConfig#validate()}.
 */
final class HostKeys
{
    /** The definitions, bound to the configuration's accessors; published as {@link HostConfig#CONFIG}. */
    static final ConfigDef<HostConfig> CONFIG = new ConfigDef<HostConfig>()
        .define(ConfigKey.ofInt(HOST_ID, -1, 0, MAX_HOSTS - 1)
            .withValidator((v) -> v == -1 ? "missing: this host's id, in [0, " + MAX_HOSTS + ")" :
                ConfigKey.range(0, MAX_HOSTS - 1).problem((long)v))
            .withDefaultText("required")
            .withDoc("This host's id, in [0, 64), one of the ids in `cluster.hosts`."),
            HostConfig::hostId, HostConfig::hostId)
        .define(ConfigKey.of(HOST_DIR, Path.class, null, HostKeys::path)
            .withValidator((v) -> null == v ? "missing" :
                Files.exists(v) && !Files.isDirectory(v) ? v + " is not a directory" : null)
            .withDefaultText("required")
            .withDoc("Directory of this host's replica logs (locked against a second host by `host.lock`)."),
            HostConfig::hostDir, HostConfig::hostDir)
        .define(ClusterSettings.CLUSTER_ID_KEY, HostConfig::clusterId, HostConfig::clusterId)
        .define(endpointsKey()
            .withValidator(HostKeys::checkEndpoints)
            .withDefaultText("required")
            .withDoc("Every host of the cluster as `id@address:port`, separated by commas: the Aeron UDP endpoints. " +
            "Ids 0 to n-1 without gaps; no two hosts on one endpoint."),
            HostConfig::endpoints, HostConfig::endpoints)
        .define(ClusterSettings.AERON_DIR_KEY, HostConfig::aeronDir, HostConfig::aeronDir)
        .define(ConfigKey.of(THREADING, AeronMedia.Profile.class, AeronMedia.Profile.SHARED, HostKeys::threading)
            .withDefaultText("`shared`")
            .withDoc("`shared`: for machines whose cores other processes share. One thread runs the embedded media " +
            "driver (Aeron's INVOKER mode), the host's Aeron client, the gateway and every agent of the replica " +
            "host, and when idle waits for the next datagram on the driver's sockets (at most as long as it has had " +
            "no work, from 1 ms to 50 ms; [multi-host](multi-host.md)): an idle host costs little, and a " +
            "message from another process is handled when it arrives (where the sockets cannot be reached the " +
            "thread parks instead, up to 1 ms after work and 10 ms once quiet, and a message waits up to the park). " +
            "With an external driver " +
            "(`aeron.dir`) the " +
            "driver and the client's conductor keep their own threads. `latency`: for dedicated machines with cores " +
            "to spare: the host's agents, the gateway and the driver's sender and receiver each busy-spin on a " +
            "thread of their own."),
            HostConfig::threading, HostConfig::threading)
        .define(ConfigKey.ofInt(LIVENESS_PORT, 0, 0, 65_535)
            .withDoc("TCP port of the host's liveness listener, on the address of its endpoint in `cluster.hosts`; " +
            "0: a free port. Advertised in the host's ZooKeeper registration: the other hosts hold a connection to " +
            "it and learn of this process's exit (a kill, a crash, a stop) from the connection's close within " +
            "milliseconds, instead of after `host.session.timeout.ms` (docs/multi-host.md, \"Process exit\"). 0 to " +
            "65535."),
            HostConfig::livenessPort, HostConfig::livenessPort)
        .define(ClusterSettings.TRANSPORT_MTU_KEY, HostConfig::transportMtu, HostConfig::transportMtu)
        .define(ClusterSettings.CLUSTER_SECRET_FILE_KEY, HostConfig::secretFile, HostConfig::secretFile)
        .define(ClusterSettings.CLUSTER_INSECURE_KEY, HostConfig::insecure, HostConfig::insecure)
        .define(ConfigKey.ofInt(CLIENT_MAX, 256, 1, 65_536)
            .withDoc("Most clients the host serves at once; a HELLO beyond it is dropped and counted " +
            "(`client-limit`). 1 to 65536."),
            (c) -> c.clientLimits().maxClients(),
            (c, v) -> c.clientLimits(v, c.clientLimits().maxClientsPerAddress(), c.clientLimits().idleTimeoutMs()))
        .define(ConfigKey.ofInt(CLIENT_MAX_PER_ADDRESS, 32, 1, 65_536)
            .withDoc("Most clients from one source address at once. 1 to `client.max`."),
            (c) -> c.clientLimits().maxClientsPerAddress(),
            (c, v) -> c.clientLimits(c.clientLimits().maxClients(), v, c.clientLimits().idleTimeoutMs()))
        .define(ConfigKey.ofLong(CLIENT_IDLE_TIMEOUT_MS, 30_000, 15_000, 3_600_000)
            .withDoc("A client not heard from for this long is forgotten (its reply publication closed); live " +
            "clients repeat their HELLO every 5 s. 15000 to 3600000."),
            (c) -> c.clientLimits().idleTimeoutMs(),
            (c, v) -> c.clientLimits(c.clientLimits().maxClients(), c.clientLimits().maxClientsPerAddress(), v));

    private HostKeys()
    {
    }

    @SuppressWarnings("unchecked")
    private static ConfigKey<Map<Integer, String>> endpointsKey()
    {
        return ConfigKey.of(CLUSTER_HOSTS, (Class<Map<Integer, String>>)(Class<?>)Map.class, null,
            (t) -> parseEndpoints(CLUSTER_HOSTS, t));
    }

    private static String checkEndpoints(final Map<Integer, String> endpoints)
    {
        if (null == endpoints || endpoints.isEmpty())
        {
            return "missing: list every host as id@address:port";
        }
        for (int id = 0; id < endpoints.size(); id++)
        {
            if (!endpoints.containsKey(id))
            {
                return "host ids must be 0 to " + (endpoints.size() - 1) + " without gaps; " + id +
                    " is missing from " + endpoints;
            }
        }
        return null;
    }

    private static Path path(final String text)
    {
        return text.isEmpty() ? null : Path.of(text);
    }

    private static AeronMedia.Profile threading(final String text)
    {
        if (text.isEmpty() || "shared".equalsIgnoreCase(text))
        {
            return AeronMedia.Profile.SHARED;
        }
        if ("latency".equalsIgnoreCase(text))
        {
            return AeronMedia.Profile.LATENCY;
        }
        throw new ConfigException(THREADING, "'" + text + "' is not shared or latency");
    }
}
