package io.tidemark.cli;

/**
 * The exit codes of every {@code tidemark} subcommand, for scripts. Each subcommand documents which it uses.
 */
public final class ExitCodes
{
    /** Success: clean, done. */
    public static final int OK = 0;
    /** Verification failed or corruption was found (verify, dump, a damaged batch met while reading). */
    public static final int CORRUPT = 1;
    /** Usage error: a bad or missing argument, an invalid configuration value, an offset out of range. */
    public static final int USAGE = 2;
    /** I/O error, or a file or directory that is missing or is not a Tidemark log. */
    public static final int IO = 3;
    /** The log directory is locked by a running process. */
    public static final int LOCKED = 4;
    /** stat: no running process writes the counters (or no counters file is there). */
    public static final int NO_PROCESS = 5;
    /** A replicated topic is unavailable, or a produce to it failed (no leader, timeout, refused). */
    public static final int UNAVAILABLE = 6;
    /** An unexpected internal error (a bug): rerun with --verbose for the stack trace. */
    public static final int INTERNAL = 70;

    private ExitCodes()
    {
    }
}
