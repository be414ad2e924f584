package io.tidemark.store;

/**
 * The one typed error of the store: every I/O failure, corruption and refused operation surfaces as this
 * exception with a {@link StorageErrorCode}. Misuse of the API (illegal arguments, calling from the wrong state)
 * throws the usual {@link IllegalArgumentException} / {@link IllegalStateException} instead.
 */
public class StorageException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final StorageErrorCode code;

    /**
     * @param code    the reason.
     * @param message what happened, naming the file or offset involved.
     */
    public StorageException(final StorageErrorCode code, final String message)
    {
        super(code + ": " + message);
        this.code = code;
    }

    /**
     * @param code    the reason.
     * @param message what happened, naming the file or offset involved.
     * @param cause   the underlying failure.
     */
    public StorageException(final StorageErrorCode code, final String message, final Throwable cause)
    {
        super(code + ": " + message, cause);
        this.code = code;
    }

    /**
     * @return the reason for the failure.
     */
    public StorageErrorCode code()
    {
        return code;
    }
}
