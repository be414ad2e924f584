package io.tidemark.zookeeper;

/**
 * A znode holds bytes that are not what Tidemark writes there (too long, not the expected encoding, a value out of
 * range): changed by hand or by another program. Nothing was applied; the znode is left for an operator.
 */
public class DamagedZnodeException extends ZooKeeperStoreException
{
    private static final long serialVersionUID = 1L;

    /** @param message the znode and what is wrong with it. */
    public DamagedZnodeException(final String message)
    {
        super(message, null);
    }
}
