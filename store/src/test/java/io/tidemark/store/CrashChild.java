package io.tidemark.store;

import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/**
 * The child JVM of the crash suite (started by {@link CrashProcess}). It reports on stdout, one line per event,
 * each written with one system call as soon as it is true: {@code A <n>} after an append returned (every offset
 * below n is appended), {@code F <n>} when the recovery point reached n (every offset below n is flushed).
 * <pre>
 *   append  DIR POLICY SEED            append random batches forever, under a flush policy
 *   hold    DIR                        open the log and keep it open
 *   tryopen DIR                        try to open the log once: OPENED END, or REFUSED CODE MESSAGE
 *   fill    DIR FILLER POLICY SEED free|wait same|random
 *                                      append until the disk is full, then free space or wait
 * </pre>
 * Flush policies: {@code none} (only rolls flush), {@code every-N} (flush.interval.messages=N),
 * {@code interval-ms-N} (flush.interval.ms=N, by the log's agent), {@code explicit-N} ({@link Log#flush()} every
 * 1..2N appends), {@code retention} (every-100 with retention.bytes=512 KiB checked every 20 ms).
 */
public final class CrashChild
{
    private static final FileOutputStream OUT = new FileOutputStream(FileDescriptor.out);

    private CrashChild()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        exitWhenTheParentIsGone();
        try
        {
            switch (args[0])
            {
                case "append":
                    append(Path.of(args[1]), args[2], Long.parseLong(args[3]));
                    break;
                case "hold":
                    hold(Path.of(args[1]));
                    break;
                case "tryopen":
                    tryOpen(Path.of(args[1]));
                    break;
                case "fill":
                    fill(Path.of(args[1]), Path.of(args[2]), args[3], Long.parseLong(args[4]), args[5], args[6]);
                    break;
                default:
                    throw new IllegalArgumentException("unknown mode " + args[0]);
            }
        }
        catch (final Throwable t)
        {
            exitWithError(t);
        }
        System.exit(0);
    }

    /** The parent holds our stdin open; end of input means it died: do not linger (a holder would sleep forever). */
    private static void exitWhenTheParentIsGone()
    {
        final Thread watcher = new Thread(() ->
        {
            try
            {
                while (System.in.read() >= 0)
                {
                    // nothing is ever sent
                }
            }
            catch (final IOException ignore)
            {
                // gone as well
            }
            System.exit(4);
        }, "parent-watcher");
        watcher.setDaemon(true);
        watcher.start();
    }

    /**
     * How a child's main ends when its mode threw: a report line {@code ERROR <what>} (which {@link CrashProcess}
     * and the tests read), the stack trace on stderr, exit status 2.
     */
    static void exitWithError(final Throwable t)
    {
        report("ERROR " + t.toString().replace('\n', ' '));
        t.printStackTrace();
        System.exit(2);
    }

    static void report(final String line)
    {
        try
        {
            OUT.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        }
        catch (final IOException ex)
        {
            System.exit(3); // the parent is gone
        }
    }

    /** @return the shared configuration with the flush policy applied. */
    static LogContext withPolicy(final LogContext ctx, final String policy)
    {
        if (policy.startsWith("every-"))
        {
            return ctx.flushIntervalMessages(Long.parseLong(policy.substring("every-".length())));
        }
        if (policy.startsWith("interval-ms-"))
        {
            return ctx.flushIntervalMs(Long.parseLong(policy.substring("interval-ms-".length())));
        }
        if (policy.equals("retention"))
        {
            return ctx.flushIntervalMessages(100).retentionBytes(512 * 1024).retentionCheckIntervalMs(20);
        }
        if (policy.equals("none") || policy.startsWith("explicit-"))
        {
            return ctx;
        }
        throw new IllegalArgumentException("unknown flush policy " + policy);
    }

    private static void append(final Path dir, final String policy, final long seed)
    {
        final Log log = Log.open(withPolicy(CrashRecords.context(dir), policy));
        report("OPEN " + log.logEndOffset() + " " + log.recoveryPoint());
        final Random random = new Random(seed);
        final int explicitEvery = policy.startsWith("explicit-") ?
            Integer.parseInt(policy.substring("explicit-".length())) : 0;
        int untilFlush = explicitEvery > 0 ? 1 + random.nextInt(2 * explicitEvery) : -1;
        long lastRecoveryPoint = log.recoveryPoint();
        while (true)
        {
            final long end = CrashRecords.appendRandom(log, random);
            report("A " + end);
            if (untilFlush > 0 && --untilFlush == 0)
            {
                log.flush();
                untilFlush = 1 + random.nextInt(2 * explicitEvery);
            }
            final long recoveryPoint = log.recoveryPoint();
            if (recoveryPoint > lastRecoveryPoint)
            {
                report("F " + recoveryPoint);
                lastRecoveryPoint = recoveryPoint;
            }
        }
    }

    private static void hold(final Path dir) throws InterruptedException
    {
        final Log log = Log.open(CrashRecords.context(dir));
        report("OPEN " + log.logEndOffset() + " " + log.recoveryPoint());
        while (!log.isClosed())
        {
            Thread.sleep(1000);
        }
    }

    private static void tryOpen(final Path dir)
    {
        try (Log log = Log.open(CrashRecords.testContext(dir)))
        {
            report("OPENED " + log.logEndOffset());
        }
        catch (final StorageException ex)
        {
            report("REFUSED " + ex.code() + " " + ex.getMessage().replace('\n', ' '));
        }
    }

    /**
     * Append until an append fails, report {@code FULL <code> <end>}, check that appends keep failing typed
     * ({@code STILL <code>}), then either delete the filler file and append again ({@code RESUMED <end>}, then
     * close: {@code CLOSED <end>}), or report {@code WAITING} and wait to be killed. With {@code retry=same} every
     * append after the failure first retries the batch that failed (what an application does); with
     * {@code retry=random} it appends new random batches, which may be smaller.
     */
    private static void fill(
        final Path dir, final Path filler, final String policy, final long seed, final String then, final String retry)
        throws IOException, InterruptedException
    {
        final Log log = Log.open(withPolicy(CrashRecords.context(dir), policy));
        report("OPEN " + log.logEndOffset() + " " + log.recoveryPoint());
        final Random random = new Random(seed);
        StorageException full = null;
        long lastRecoveryPoint = log.recoveryPoint();
        int records = 0;
        boolean plain = false;
        while (null == full)
        {
            records = random.nextInt(3) == 0 ? 1 : 1 + random.nextInt(8);
            plain = records == 1 && random.nextBoolean();
            try
            {
                report("A " + CrashRecords.appendBatch(log, records, plain));
                final long recoveryPoint = log.recoveryPoint();
                if (recoveryPoint > lastRecoveryPoint)
                {
                    report("F " + recoveryPoint);
                    lastRecoveryPoint = recoveryPoint;
                }
            }
            catch (final StorageException ex)
            {
                full = ex;
            }
        }
        report("FULL " + full.code() + " " + log.logEndOffset());
        final boolean same = !retry.equals("random");
        boolean pending = true;
        for (int i = 0; i < 20; i++)
        {
            try
            {
                report("A " + (same ? CrashRecords.appendBatch(log, records, plain) :
                    CrashRecords.appendRandom(log, random)));
                pending = false;
                report("STILL NONE");
                if (same)
                {
                    break; // the failed append went through after all
                }
            }
            catch (final StorageException ex)
            {
                report("STILL " + ex.code());
            }
        }
        if (then.equals("wait"))
        {
            report("WAITING");
            while (true)
            {
                Thread.sleep(1000);
            }
        }
        Files.delete(filler);
        if (pending && same)
        {
            report("A " + CrashRecords.appendBatch(log, records, plain));
        }
        for (int i = 0; i < 50; i++)
        {
            report("A " + CrashRecords.appendRandom(log, random));
        }
        report("RESUMED " + log.logEndOffset());
        log.close();
        report("CLOSED " + log.logEndOffset());
    }
}
