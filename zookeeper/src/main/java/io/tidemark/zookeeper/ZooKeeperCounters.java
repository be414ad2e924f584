package io.tidemark.zookeeper;

import org.apache.curator.framework.CuratorFramework;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;

/**
 * Counters in znodes, changed only by compare-and-set on the znode's version, so that writers in different
 * processes never hand out the same value. A counter znode holds 8 bytes:
 * <pre>
 *   0                   4                   8
 *   +-------------------+-------------------+
 *   |   value, int64 little-endian          |
 *   +-------------------+-------------------+
 * </pre>
 * A missing counter is created at 0 (its parents too, as persistent znodes). The host process numbers its
 * incarnations with one ({@code <root>/incarnations/<hostId>}); the controller store reserves producer ids and
 * claims its epoch with the same loop. Stateless; thread-safe as far as the client is.
 */
public final class ZooKeeperCounters
{
    /** Compare-and-set attempts lost to other writers before giving up. */
    static final int MAX_ATTEMPTS = 100;

    /** The conditional write of a counter's next value. */
    @FunctionalInterface
    interface VersionedWrite
    {
        /**
         * Write {@code data} at {@code path} if the znode is still at {@code expectedVersion}.
         *
         * @throws KeeperException.BadVersionException when another writer got there first (the loop re-reads).
         * @throws Exception                           any other failure, which ends the loop.
         */
        void write(String path, int expectedVersion, byte[] data) throws Exception;
    }

    private ZooKeeperCounters()
    {
    }

    /**
     * Add one to the counter at {@code path}, created at 0 when missing, by compare-and-set on its version.
     *
     * @param client a started Curator client.
     * @param path   the counter's znode.
     * @return the counter's new value: 1 the first time, then each call's value is greater than every value returned
     *         before it, to any client.
     * @throws ZooKeeperStoreException when ZooKeeper cannot be reached, or {@value #MAX_ATTEMPTS} attempts in a row
     *                                 lost to other writers.
     * @throws IllegalStateException   when the znode does not hold 8 bytes.
     */
    public static long incrementAndGet(final CuratorFramework client, final String path)
    {
        return getAndAdd(client, path, 1, "increment the counter",
            (p, version, data) -> client.setData().withVersion(version).forPath(p, data)) + 1;
    }

    /**
     * Add {@code delta} to the counter at {@code path} (created at 0 when missing) by compare-and-set on its
     * version, retrying when another writer got there first.
     *
     * @param what  what the addition is for, for error messages.
     * @param write the conditional write (a plain versioned setData, or one inside a fencing transaction).
     * @return the counter's value before the addition.
     * @throws ZooKeeperStoreException from {@code write}, or wrapping any other failure to reach ZooKeeper.
     */
    static long getAndAdd(
        final CuratorFramework client, final String path, final long delta, final String what,
        final VersionedWrite write)
    {
        for (int attempt = 0; attempt < MAX_ATTEMPTS; attempt++)
        {
            try
            {
                final Stat stat = new Stat();
                final byte[] data;
                try
                {
                    data = client.getData().storingStatIn(stat).forPath(path);
                }
                catch (final KeeperException.NoNodeException ex)
                {
                    ZNodes.createIfAbsent(client, path, encode(0)); // or another writer just did
                    continue;
                }
                final long value = decode(path, data);
                write.write(path, stat.getVersion(), encode(value + delta));
                return value;
            }
            catch (final KeeperException.BadVersionException ex)
            {
                // another writer got there first: read again
            }
            catch (final IllegalStateException | ZooKeeperStoreException ex)
            {
                throw ex; // damaged, or fenced: not a reason to retry
            }
            catch (final Exception ex)
            {
                throw failure("cannot " + what + " at " + path, ex);
            }
        }
        throw new ZooKeeperStoreException("cannot " + what + " at " + path + ": " + MAX_ATTEMPTS +
            " compare-and-set attempts lost to other writers", null);
    }

    /**
     * @return a {@link ZooKeeperStoreException} for a failure to reach ZooKeeper (re-asserting an interrupt).
     */
    static ZooKeeperStoreException failure(final String what, final Exception cause)
    {
        if (cause instanceof InterruptedException)
        {
            Thread.currentThread().interrupt();
        }
        return new ZooKeeperStoreException(what + ": " + cause, cause);
    }

    /** @return the counter held by {@code data}, read from {@code path}. */
    static long decode(final String path, final byte[] data)
    {
        if (data.length != Long.BYTES)
        {
            throw new IllegalStateException("znode " + path + " is damaged: " + data.length + " bytes, expected 8");
        }
        return ByteBuffer.wrap(data).order(ByteOrder.LITTLE_ENDIAN).getLong();
    }

    /** @return the 8 bytes of a counter holding {@code value}. */
    static byte[] encode(final long value)
    {
        return ByteBuffer.allocate(Long.BYTES).order(ByteOrder.LITTLE_ENDIAN).putLong(value).array();
    }
}
