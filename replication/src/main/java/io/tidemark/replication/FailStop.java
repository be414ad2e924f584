package io.tidemark.replication;

import io.tidemark.store.StorageErrorCode;
import io.tidemark.store.StorageException;
import org.agrona.ErrorHandler;

/**
 * A host's fail-stop switch. When a durable write of its replication state could not be made (a leader-epoch
 * checkpoint, an fsync, a log gone offline), carrying on would let the state in memory run ahead of the state on
 * disk, and a later crash would bring back a replica that disagrees with what it acknowledged. So the host stops at
 * once: its agents do nothing more, it tells the controller it is gone, and it waits to be restarted, when recovery
 * rebuilds its state from the disk (Kafka takes a failed log directory offline, {@code LogDirFailureChannel}; a
 * host has one directory).
 * <p>
 * Thread-safe: any of the host's agents may trip it; the first failure is kept.
 */
final class FailStop
{
    private static final System.Logger LOGGER = System.getLogger(FailStop.class.getName());

    private final int hostId;
    private final ErrorHandler errorHandler;
    private volatile StorageException failure;

    FailStop(final int hostId, final ErrorHandler errorHandler)
    {
        this.hostId = hostId;
        this.errorHandler = errorHandler;
    }

    /**
     * @param ex a storage failure met by a replication path.
     * @return whether it means the host's durable state can no longer be trusted to follow its memory: an I/O error
     *         (a failed fsync or checkpoint write), a log taken offline, a log that could not be opened.
     */
    static boolean isFatal(final StorageException ex)
    {
        final StorageErrorCode code = ex.code();
        return code == StorageErrorCode.IO_ERROR || code == StorageErrorCode.LOG_OFFLINE ||
            code == StorageErrorCode.CORRUPT_LOG || code == StorageErrorCode.NOT_A_LOG_DIRECTORY;
    }

    /**
     * Stop the host (once; later calls keep the first failure).
     *
     * @param what  what was being done.
     * @param cause what failed.
     */
    void stop(final String what, final Throwable cause)
    {
        if (null != failure)
        {
            return;
        }
        synchronized (this)
        {
            if (null != failure)
            {
                return;
            }
            failure = new StorageException(StorageErrorCode.IO_ERROR, "host " + hostId + " stopped (fail-stop): " +
                what + ": " + cause, cause);
        }
        LOGGER.log(System.Logger.Level.ERROR, failure.getMessage(), cause);
        errorHandler.onError(failure);
    }

    /** @return whether the host has stopped. */
    boolean stopped()
    {
        return null != failure;
    }

    /** @return why the host stopped, or null while it runs. */
    StorageException failure()
    {
        return failure;
    }
}
