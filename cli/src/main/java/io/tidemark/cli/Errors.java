package io.tidemark.cli;

import io.tidemark.client.ProducerException;
import io.tidemark.store.ConfigException;
import io.tidemark.store.MissingJvmFlagException;
import io.tidemark.store.StorageErrorCode;
import io.tidemark.store.StorageException;
import io.tidemark.zookeeper.ZooKeeperStoreException;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.AccessDeniedException;
import java.nio.file.NoSuchFileException;

/** Maps the typed errors of the store, replication, clients and ZooKeeper to messages and exit codes. */
final class Errors
{
    private Errors()
    {
    }

    static int exitCode(final Throwable ex)
    {
        if (ex instanceof CliException cli)
        {
            return cli.exitCode();
        }
        if (ex instanceof StorageException storage)
        {
            return exitCode(storage.code());
        }
        if (ex instanceof ProducerException)
        {
            return ExitCodes.UNAVAILABLE;
        }
        if (ex instanceof IOException || ex instanceof UncheckedIOException || ex instanceof ZooKeeperStoreException)
        {
            return ExitCodes.IO;
        }
        if (ex instanceof IllegalArgumentException || ex instanceof MissingJvmFlagException)
        {
            return ExitCodes.USAGE; // ConfigException included; the JVM's command line lacks the one flag
        }
        return ExitCodes.INTERNAL;
    }

    static int exitCode(final StorageErrorCode code)
    {
        switch (code)
        {
            case LOCKED: return ExitCodes.LOCKED;
            case CORRUPT_BATCH:
            case CORRUPT_LOG: return ExitCodes.CORRUPT;
            case OFFSET_OUT_OF_RANGE:
            case RECORD_TOO_LARGE:
            case INVALID_BATCH: return ExitCodes.USAGE;
            default: return ExitCodes.IO;
        }
    }

    static String message(final Throwable ex)
    {
        if (ex instanceof StorageException storage)
        {
            final String hint = hint(storage.code());
            return storage.getMessage() + (hint.isEmpty() ? "" : "\n  " + hint);
        }
        if (ex instanceof ConfigException)
        {
            return "invalid configuration: " + ex.getMessage();
        }
        if (ex instanceof NoSuchFileException missing)
        {
            return "no such file: " + missing.getFile();
        }
        if (ex instanceof AccessDeniedException denied)
        {
            return "permission denied: " + denied.getFile();
        }
        if (ex instanceof UncheckedIOException unchecked && null != unchecked.getCause())
        {
            return ex.getMessage() + ": " + message(unchecked.getCause());
        }
        if (ex instanceof ZooKeeperStoreException)
        {
            return ex.getMessage() + (null == ex.getCause() ? "" : " (" + ex.getCause() + ")");
        }
        if (ex instanceof CliException || ex instanceof IllegalArgumentException || ex instanceof ProducerException ||
            ex instanceof MissingJvmFlagException)
        {
            return ex.getMessage();
        }
        if (ex instanceof IOException)
        {
            return "I/O error: " + ex;
        }
        return "internal error: " + ex + " (rerun with --verbose for the stack trace)";
    }

    private static String hint(final StorageErrorCode code)
    {
        switch (code)
        {
            case LOCKED: return "a running process has the log open: stop it first, or use a command that " +
                "reads without the lock (dump, verify, tail, stat)";
            case NOT_A_LOG_DIRECTORY: return "give the directory that holds log.meta and the segment files";
            case CORRUPT_BATCH:
            case CORRUPT_LOG: return "run `tidemark verify <log dir>` for a full report";
            case STORAGE_SPACE: return "the file system is full";
            default: return "";
        }
    }
}
