package io.tidemark.zookeeper;

/**
 * A znode Tidemark relies on grants something to {@code world:anyone} (anyone who can reach ZooKeeper, without
 * credentials), and these credentials cannot take that away: the node could be read, changed or deleted by anyone.
 * Raised at a host's start ({@link ZooKeeperRootCheck}); nothing was changed.
 */
public final class ZooKeeperAclException extends ZooKeeperStoreException
{
    private static final long serialVersionUID = 1L;

    private final String node;

    /**
     * @param node    the znode's path.
     * @param message what is wrong and what to do.
     * @param cause   the refusal, or null.
     */
    public ZooKeeperAclException(final String node, final String message, final Throwable cause)
    {
        super(message, cause);
        this.node = node;
    }

    /** @return the path of the open znode. */
    public String node()
    {
        return node;
    }
}
