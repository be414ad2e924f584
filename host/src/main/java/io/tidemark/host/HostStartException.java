package io.tidemark.host;

/**
 * A host could not start for a reason outside its configuration values: its Aeron endpoint cannot be bound (in
 * use, or not an address of this machine), or its directory cannot be created. Nothing of it is left running.
 */
public class HostStartException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    /**
     * @param message what failed, naming the endpoint or directory.
     * @param cause   the underlying failure.
     */
    public HostStartException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
