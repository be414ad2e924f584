package io.tidemark.cli;

/**
 * An expected failure of a subcommand: its message is printed (never a stack trace unless --verbose) and the
 * command exits with its code.
 */
final class CliException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    private final int exitCode;

    CliException(final int exitCode, final String message)
    {
        super(message);
        this.exitCode = exitCode;
    }

    CliException(final int exitCode, final String message, final Throwable cause)
    {
        super(message, cause);
        this.exitCode = exitCode;
    }

    int exitCode()
    {
        return exitCode;
    }
}
