package io.tidemark.client.remote.protocol;

import io.tidemark.aeron.ClusterSecret;
import io.tidemark.aeron.UdpChannels;
import io.tidemark.store.ConfigException;
import io.tidemark.store.config.ConfigKey;

import java.io.IOException;
import java.io.Reader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;
import java.util.stream.Stream;

/**
 * The settings a replica host and its remote clients both read, defined once: the cluster's name, its secret, the
 * Aeron MTU and media driver, with the parsing and checks they share and where an embedded media driver's files go.
 * A host's configuration ({@code HostConfig}) and a client's ({@link io.tidemark.client.remote.ClientConfig}) name
 * these keys by these constants, bind these {@link ConfigKey definitions} (type, default, accepted values, the
 * documentation rows of both tables in docs/configuration.md) to the accessors of their common base
 * {@link ClusterConfig}, and check the pair secret-file-or-insecure with {@link #secret}.
 */
public final class ClusterSettings
{
    /** The cluster's name; hosts and clients of another cluster are refused. */
    public static final String CLUSTER_ID = "cluster.id";
    /** Directory of an external Aeron media driver; empty or absent: an embedded one. */
    public static final String AERON_DIR = "aeron.dir";
    /**
     * The Aeron MTU of the publications: {@code auto} (the default: the MTU of the interface that reaches each
     * destination, see {@link UdpChannels}) or a number of bytes, a multiple of 32 in [1024, 65504].
     */
    public static final String TRANSPORT_MTU = "transport.mtu";
    /** File holding the cluster secret that authenticates every message; readable by its owner only. */
    public static final String CLUSTER_SECRET_FILE = "cluster.secret.file";
    /** {@code true}: no secret, messages are not authenticated (local try-outs only; logged loudly). */
    public static final String CLUSTER_INSECURE = "cluster.insecure";

    /** {@link #CLUSTER_ID}: required, 1 to 128 of {@code A-Z a-z 0-9 . _ -}. */
    public static final ConfigKey<String> CLUSTER_ID_KEY = ConfigKey.ofString(CLUSTER_ID, null)
        .withValidator((v) -> null == v || !v.matches("[A-Za-z0-9._-]{1,128}") ?
            "need 1 to 128 of A-Z a-z 0-9 . _ -, not '" + v + "'" : null)
        .withDefaultText("required")
        .withDoc("The cluster's name, 1 to 128 of `A-Z a-z 0-9 . _ -`; hosts and clients of another cluster are " +
        "refused (a client's must match the one its hosts wrote in ZooKeeper).");

    /** {@link #AERON_DIR}: an existing directory, or empty for an embedded media driver. */
    public static final ConfigKey<String> AERON_DIR_KEY = ConfigKey.ofString(AERON_DIR, null)
        .withValidator((v) -> null != v && !v.isEmpty() && !Files.isDirectory(Path.of(v)) ?
            "no media driver directory at " + v : null)
        .withDefaultText("empty: an embedded media driver")
        .withDoc("Directory of an external Aeron media driver. The embedded driver lives in `/dev/shm` where " +
        "there is one, else in the temporary directory.");

    /** {@link #TRANSPORT_MTU}: {@code auto} ({@link UdpChannels#AUTO}) or a multiple of 32 in [1024, 65504]. */
    public static final ConfigKey<Integer> TRANSPORT_MTU_KEY = ConfigKey.of(TRANSPORT_MTU, Integer.class,
            UdpChannels.AUTO, (t) -> parseMtu(TRANSPORT_MTU, t))
        .withValidator((v) ->
        {
            checkMtu(TRANSPORT_MTU, v);
            return null;
        })
        .withDefaultText("`auto`")
        .withDoc("The Aeron MTU of the publications (a host's to its peers and clients, a client's requests). " +
        "`auto`: the MTU of the interface that reaches each destination less the IP and UDP headers: Aeron's 1408 " +
        "on Ethernet (1500) and below, 8960 on jumbo frames, 65504 on loopback; subscriptions get a receiver window " +
        "and socket buffer of 32 such datagrams (128 KiB to 2 MiB, at most `net.core.rmem_max`). Or a multiple of " +
        "32 in [1024, 65504], for a path whose MTU is smaller than the hosts' interfaces. Fewer, larger datagrams " +
        "are what cut the media driver's CPU per record " +
        "([benchmarks](benchmarks.md#multi-process-tidemarks-host-jvms-beside-a-real-kafka)).");

    /** {@link #CLUSTER_SECRET_FILE}: a path, or empty for none (then {@link #CLUSTER_INSECURE} must be true). */
    public static final ConfigKey<Path> CLUSTER_SECRET_FILE_KEY = ConfigKey.of(CLUSTER_SECRET_FILE, Path.class, null,
            (t) -> t.isEmpty() ? null : Path.of(t))
        .withDefaultText("required, unless `cluster.insecure=true`")
        .withDoc("File holding the cluster secret that keys the authentication tag of every message (`tidemark " +
        "secret FILE` writes one; a client names its hosts' file content). Refused if its group or others may read " +
        "it, or it holds fewer than 32 bytes. Never logged. [Safety at the edges](multi-host.md#safety-at-the-edges).");

    /** {@link #CLUSTER_INSECURE}: {@code true} or {@code false}, default false. */
    public static final ConfigKey<Boolean> CLUSTER_INSECURE_KEY = ConfigKey.of(CLUSTER_INSECURE, Boolean.class, false,
            (t) -> parseBoolean(CLUSTER_INSECURE, t))
        .withDefaultText("`false`")
        .withDoc("`true`: no secret, no message is authenticated; for local try-outs only (a client: only against " +
        "insecure hosts), logged as a warning at every start. Exclusive with `cluster.secret.file`.");

    private ClusterSettings()
    {
    }

    /**
     * @return the properties in a file (UTF-8).
     * @throws ConfigException when it cannot be read.
     */
    public static Properties readProperties(final Path file)
    {
        final Properties properties = new Properties();
        try (Reader reader = Files.newBufferedReader(file, StandardCharsets.UTF_8))
        {
            properties.load(reader);
        }
        catch (final IOException ex)
        {
            throw new ConfigException("--config", "cannot read " + file + ": " + ex.getMessage());
        }
        return properties;
    }

    /** @return {@link UdpChannels#AUTO} for absent or {@code auto}, else the number. */
    public static int parseMtu(final String key, final String value)
    {
        if (null == value || value.isBlank() || "auto".equalsIgnoreCase(value.trim()))
        {
            return UdpChannels.AUTO;
        }
        try
        {
            return Integer.parseInt(value.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw new ConfigException(key, "not an integer: " + value);
        }
    }

    /** @throws ConfigException unless {@code mtu} is auto or a multiple of 32 in [1024, 65504]. */
    public static void checkMtu(final String key, final int mtu)
    {
        if (mtu != UdpChannels.AUTO && (mtu < 1024 || mtu > UdpChannels.MAX_MTU || mtu % 32 != 0))
        {
            throw new ConfigException(key, "must be auto or a multiple of 32 in [1024, " + UdpChannels.MAX_MTU +
                "]: " + mtu);
        }
    }

    /** @return false for absent, blank or {@code false}, true for {@code true}. @throws ConfigException else. */
    public static boolean parseBoolean(final String key, final String value)
    {
        if (null == value || value.isBlank() || "false".equalsIgnoreCase(value.trim()))
        {
            return false;
        }
        if ("true".equalsIgnoreCase(value.trim()))
        {
            return true;
        }
        throw new ConfigException(key, "must be true or false: " + value);
    }

    /**
     * @throws ConfigException unless {@code endpoint} is {@code address:port} with a port in [0, 65535] (0: any
     *                         free port, for clients).
     */
    public static void checkEndpoint(final String key, final String endpoint)
    {
        final int colon = endpoint.lastIndexOf(':');
        if (colon <= 0 || colon == endpoint.length() - 1)
        {
            throw new ConfigException(key, "'" + endpoint + "' is not address:port");
        }
        final int port;
        try
        {
            port = Integer.parseInt(endpoint.substring(colon + 1));
        }
        catch (final NumberFormatException ex)
        {
            throw new ConfigException(key, "'" + endpoint + "': port is not a number");
        }
        if (port < 0 || port > 65535)
        {
            throw new ConfigException(key, "'" + endpoint + "': port out of range");
        }
    }

    /**
     * The cluster secret a configuration asks for: exactly one of a secret file or {@code cluster.insecure=true}.
     *
     * @throws ConfigException naming the key at fault.
     */
    public static ClusterSecret secret(final Path secretFile, final boolean insecure)
    {
        if (null != secretFile && insecure)
        {
            throw new ConfigException(CLUSTER_INSECURE, "true, but " + CLUSTER_SECRET_FILE + " is set too: choose " +
                "one");
        }
        if (insecure)
        {
            return ClusterSecret.insecure();
        }
        if (null == secretFile)
        {
            throw new ConfigException(CLUSTER_SECRET_FILE, "missing: cluster traffic is authenticated with a " +
                "secret file (create one with: tidemark secret FILE); for a local try-out without one, set " +
                CLUSTER_INSECURE + "=true");
        }
        return ClusterSecret.load(secretFile, CLUSTER_SECRET_FILE);
    }

    /** The line a host or client logs at start when its cluster traffic is not authenticated. */
    public static String insecureWarning(final String who)
    {
        return "INSECURE: " + who + " runs with " + CLUSTER_INSECURE + "=true: cluster traffic is NOT " +
            "authenticated; anyone who can send a datagram to its endpoints can forge fetches, control messages and " +
            "client requests. For local try-outs only; set " + CLUSTER_SECRET_FILE + " for anything else.";
    }

    /**
     * @param name a name unique on this machine.
     * @return the directory of an embedded media driver: in {@code /dev/shm} where there is one (its buffers stay in
     *         memory), else in the temporary directory.
     */
    public static Path embeddedAeronDir(final String name)
    {
        final Path shm = Path.of("/dev/shm");
        final Path base = Files.isDirectory(shm) && Files.isWritable(shm) ? shm :
            Path.of(System.getProperty("java.io.tmpdir"));
        return base.resolve(name);
    }

    /**
     * Remove the embedded driver directories a killed process left behind (their buffers would otherwise stay in
     * {@code /dev/shm} until a reboot): those named {@code <prefix><pid>} or {@code <prefix><pid>-<anything>} whose
     * process is not running. A directory of a running process is never touched.
     */
    public static void removeStaleAeronDirs(final String prefix)
    {
        final Path base = embeddedAeronDir(prefix).getParent();
        try (Stream<Path> entries = Files.list(base))
        {
            entries.filter((p) -> p.getFileName().toString().startsWith(prefix)).forEach((dir) ->
            {
                final String rest = dir.getFileName().toString().substring(prefix.length());
                final int dash = rest.indexOf('-');
                final String pid = dash < 0 ? rest : rest.substring(0, dash);
                if (pid.matches("[0-9]{1,18}") && ProcessHandle.of(Long.parseLong(pid)).isEmpty())
                {
                    org.agrona.IoUtil.delete(dir.toFile(), true);
                }
            });
        }
        catch (final IOException | RuntimeException ex)
        {
            System.getLogger(ClusterSettings.class.getName()).log(System.Logger.Level.WARNING,
                "cannot clean up stale Aeron directories in " + base + ": " + ex);
        }
    }
}
