package io.tidemark.zookeeper;

/** ZooKeeper could not be reached or did not confirm a change, after Curator's retries. Nothing was applied. */
public class ZooKeeperStoreException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param message what failed.
     * @param cause   the underlying failure, or null.
     */
    public ZooKeeperStoreException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
