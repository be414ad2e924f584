package io.tidemark.zookeeper;

import io.tidemark.replication.RateLimitedLog;
import io.tidemark.replication.TopicPartition;
import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;

import java.nio.charset.StandardCharsets;
import java.util.regex.Pattern;

/**
 * Consumer groups' committed offsets across hosts, one znode per group and partition, where Tidemark's remote
 * client and the Kafka gateway both keep them (so a Kafka consumer and a Tidemark consumer of one group resume from
 * each other's commits):
 * <pre>
 *   &lt;root&gt;/consumer-offsets/&lt;group&gt;/&lt;topic&gt;-&lt;partition&gt;
 *
 *   "&lt;offset&gt;"                      a commit that carries no leader epoch
 *   "&lt;offset&gt;\n&lt;leader epoch&gt;"      a commit that does (a Kafka consumer's)
 * </pre>
 * in ASCII decimal; the offset is the next one the group will read. The last commit wins. A znode is input from
 * outside (anyone holding the cluster's ACL can write it): a read checks its size and form, and a damaged one is a
 * {@link DamagedZnodeException} with a rate-limited log line, never taken for an offset. Thread-safe as far as the
 * client is.
 */
public final class ZooKeeperGroupOffsets
{
    /** The child of the root holding the groups. */
    public static final String CONSUMER_OFFSETS = "consumer-offsets";

    /** Longer than any commit (a 19-digit offset, a newline, a 10-digit epoch): a longer znode is not ours. */
    static final int MAX_ZNODE_BYTES = 32;

    private static final Pattern GROUP = Pattern.compile("[A-Za-z0-9._-]{1,200}");
    private static final Pattern VALUE = Pattern.compile("(\\d{1,19})(\\n(-1|\\d{1,10}))?");
    private static final RateLimitedLog LOG =
        new RateLimitedLog(System.getLogger(ZooKeeperGroupOffsets.class.getName()));

    /** A committed offset and the leader epoch of the record before it (-1 when unknown). */
    public record Committed(long offset, int leaderEpoch)
    {
    }

    private final CuratorFramework client;
    private final String root;

    /**
     * @param client a started Curator client, with the cluster's ACL.
     * @param root   the cluster's root path (e.g. {@code /tidemark/prod}).
     */
    public ZooKeeperGroupOffsets(final CuratorFramework client, final String root)
    {
        this.client = client;
        this.root = root;
    }

    /**
     * Store a group's position in a partition durably (returns once ZooKeeper has it).
     *
     * @param offset      the next offset the group will read, 0 or more.
     * @param leaderEpoch the leader epoch of the record before it, or -1 (then none is written).
     * @throws IllegalArgumentException for a group name outside 1 to 200 of A-Z a-z 0-9 . _ -, a negative offset, or
     *                                  an epoch below -1.
     * @throws ZooKeeperStoreException  when ZooKeeper cannot be written.
     */
    public void commit(final String group, final TopicPartition partition, final long offset, final int leaderEpoch)
    {
        final String path = path(group, partition);
        if (offset < 0)
        {
            throw new IllegalArgumentException("offset must not be negative: " + offset);
        }
        if (leaderEpoch < -1)
        {
            throw new IllegalArgumentException("leader epoch must be -1 or more: " + leaderEpoch);
        }
        final String value = leaderEpoch < 0 ? Long.toString(offset) : offset + "\n" + leaderEpoch;
        try
        {
            ZNodes.upsert(client, path, value.getBytes(StandardCharsets.US_ASCII));
        }
        catch (final Exception ex)
        {
            throw ZooKeeperCounters.failure("cannot commit offset " + offset + " of group " + group + " at " + path,
                ex);
        }
    }

    /**
     * @return the group's committed position in the partition, or null when it has committed none.
     * @throws IllegalArgumentException for a group name outside 1 to 200 of A-Z a-z 0-9 . _ -.
     * @throws DamagedZnodeException    when the znode holds anything but a commit (logged, rate-limited).
     * @throws ZooKeeperStoreException  when ZooKeeper cannot be read.
     */
    public Committed read(final String group, final TopicPartition partition)
    {
        final String path = path(group, partition);
        final byte[] data;
        try
        {
            data = client.getData().forPath(path);
        }
        catch (final KeeperException.NoNodeException ex)
        {
            return null;
        }
        catch (final Exception ex)
        {
            throw ZooKeeperCounters.failure("cannot read the committed offset at " + path, ex);
        }
        return decode(path, data);
    }

    /** @return the znode of a group's offset in a partition. */
    public String path(final String group, final TopicPartition partition)
    {
        if (null == group || !GROUP.matcher(group).matches())
        {
            throw new IllegalArgumentException("group ids are 1 to 200 of A-Z a-z 0-9 . _ - here: " + group);
        }
        return root + "/" + CONSUMER_OFFSETS + "/" + group + "/" + partition.logName();
    }

    /** @return the commit {@code data} holds, read from {@code path}. */
    static Committed decode(final String path, final byte[] data)
    {
        if (null == data || data.length > MAX_ZNODE_BYTES)
        {
            throw damaged(path, null == data ? "no data" : data.length + " bytes, at most " + MAX_ZNODE_BYTES);
        }
        // earlier versions trimmed surrounding white space: accept what they accepted
        final String text = new String(data, StandardCharsets.ISO_8859_1).strip();
        final java.util.regex.Matcher value = VALUE.matcher(text);
        if (!value.matches())
        {
            throw damaged(path, "not an offset");
        }
        try
        {
            final long offset = Long.parseLong(value.group(1));
            final int epoch = null == value.group(3) ? -1 : Integer.parseInt(value.group(3));
            return new Committed(offset, epoch);
        }
        catch (final NumberFormatException ex)
        {
            throw damaged(path, "a value out of range");
        }
    }

    private static DamagedZnodeException damaged(final String path, final String what)
    {
        final String message = "the committed offset at " + path + " is damaged: " + what;
        LOG.log(System.Logger.Level.WARNING, "group-offsets damaged-znode", message);
        return new DamagedZnodeException(message);
    }
}
