package io.tidemark.zookeeper;

/**
 * A controller's write was refused because a newer controller has taken over (it opened its store after this one):
 * the older controller must stop deciding. Nothing was written.
 */
public class ControllerFencedException extends ZooKeeperStoreException
{
    private static final long serialVersionUID = 1L;

    /** @param message what was refused. */
    public ControllerFencedException(final String message)
    {
        super(message, null);
    }
}
