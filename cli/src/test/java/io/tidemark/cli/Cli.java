package io.tidemark.cli;

import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.TestWatcher;
import picocli.CommandLine;

import java.io.ByteArrayOutputStream;
import java.io.OutputStreamWriter;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

/**
 * Runs {@code tidemark} as a user would: arguments in, exit code and output back. Every run is added to a
 * transcript, which {@link Transcript} (an extension of every CLI test class) prints when a test fails, and only
 * then: passing builds stay quiet.
 */
final class Cli
{
    private static final StringBuffer TRANSCRIPT = new StringBuffer();

    /** What a run printed and returned. */
    record Result(int exitCode, String out, String err, byte[] outBytes)
    {
        @Override
        public String toString()
        {
            return "exit " + exitCode + "\n--- stdout ---\n" + out + "--- stderr ---\n" + err;
        }
    }

    private Cli()
    {
    }

    static Result run(final String... args)
    {
        return run(new StringWriter(), args);
    }

    private static Result run(final StringWriter err, final String... args)
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final CommandLine commandLine = TidemarkCli.commandLine(args, out);
        commandLine.setOut(new PrintWriter(new OutputStreamWriter(out, StandardCharsets.UTF_8), true));
        commandLine.setErr(new PrintWriter(err, true));
        final int exitCode = commandLine.execute(args);
        commandLine.getOut().flush();
        final Result result = new Result(exitCode, out.toString(StandardCharsets.UTF_8), err.toString(),
            out.toByteArray());
        TRANSCRIPT.append("$ tidemark ").append(String.join(" ", args)).append('\n').append(result).append('\n');
        return result;
    }

    /**
     * Start a run on another thread, for commands that follow (tail --follow, read --follow).
     *
     * @return the running command: its standard error as it is written, and its result.
     */
    static Running start(final String... args)
    {
        final StringWriter err = new StringWriter(); // a StringBuffer inside: safe to read while it is written
        return new Running(err, CompletableFuture.supplyAsync(() -> run(err, args)));
    }

    /** A command running on another thread. */
    record Running(StringWriter err, CompletableFuture<Result> result)
    {
        /**
         * Wait until the command has written what {@code condition} looks for to its standard error (a follow
         * command announces where it starts), or has ended.
         *
         * @return whether the condition was met before the command ended or {@code patienceMs} passed (a liveness
         *         guard, not a timing assumption).
         */
        boolean awaitErr(final Predicate<String> condition, final long patienceMs) throws InterruptedException
        {
            final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(patienceMs);
            while (!condition.test(err.toString()))
            {
                if (result.isDone() || System.nanoTime() - deadline > 0)
                {
                    return condition.test(err.toString());
                }
                Thread.sleep(5);
            }
            return true;
        }
    }

    /** Clears the transcript before each test, prints it when the test failed. */
    static final class Transcript implements BeforeEachCallback, TestWatcher
    {
        @Override
        public void beforeEach(final ExtensionContext context)
        {
            TRANSCRIPT.setLength(0);
        }

        @Override
        public void testFailed(final ExtensionContext context, final Throwable cause)
        {
            if (TRANSCRIPT.length() > 0)
            {
                System.out.println("Commands run by " + context.getDisplayName() + ":\n" + TRANSCRIPT);
            }
        }
    }
}
