package io.tidemark.host;

import io.tidemark.zookeeper.ZooKeeperControllerStore;

import java.util.Map;

/**
 * The controller's watch over partition states its store quarantined as damaged: it names each in a warning once
 * every {@link #NAME_DAMAGED_EVERY_MS}, with the command that repairs it, and reads them again every
 * {@link #RECHECK_MS}; once one reads, it tells the controller role to restart the controller over the store (one
 * epoch bump per repair, not per attempt), which then serves it.
 * <p>
 * Owns the times of the next warning and the next read. Not thread-safe: confined to the controller role's thread.
 */
final class DamagedStateWatch
{
    static final long RECHECK_MS = 5_000;
    static final long NAME_DAMAGED_EVERY_MS = 60_000;

    private final System.Logger logger = System.getLogger(ControllerRole.class.getName());
    private long nextRecheckMs;
    private long nextNamingMs;

    /** A controller started at {@code now}: name its damaged partitions at once, read them again later. */
    void controllerStarted(final long now)
    {
        nextNamingMs = 0;
        nextRecheckMs = now + RECHECK_MS;
    }

    /**
     * One step of the watch.
     *
     * @param store the store of the controller this host runs.
     * @return whether a damaged partition state reads again: the controller is to restart over the store.
     */
    boolean repaired(final ZooKeeperControllerStore store, final long now)
    {
        final Map<Integer, String> damaged = store.damaged();
        if (damaged.isEmpty())
        {
            return false;
        }
        if (now >= nextNamingMs)
        {
            nextNamingMs = now + NAME_DAMAGED_EVERY_MS;
            damaged.forEach((id, why) -> logger.log(System.Logger.Level.WARNING, id == ZooKeeperControllerStore.STRAY ?
                "controller: " + why : "controller: partition state " + store.partitionPath(id) + " is damaged (" +
                why + "): quarantined, not served; the other partitions are. Repair it from a host's view: tidemark " +
                "partition repair --config FILE --partition-id " + id + " --host-dir DIR"));
        }
        if (now < nextRecheckMs)
        {
            return false;
        }
        nextRecheckMs = now + RECHECK_MS;
        for (final int id : damaged.keySet())
        {
            if (id != ZooKeeperControllerStore.STRAY && null == store.checkDamaged(id))
            {
                logger.log(System.Logger.Level.INFO, "controller: partition state " + store.partitionPath(id) +
                    " reads again; the controller restarts over the store to serve it");
                return true;
            }
        }
        return false;
    }
}
