package io.tidemark.store;

import io.tidemark.store.file.FileSync;

import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The log's background agent: an error that repeats every duty cycle is reported a bounded number of times and takes
 * the log offline (fail-stop) instead of spinning; its dedicated thread is a daemon, so that a JVM whose application
 * returned without closing the log exits (the log is then recovered at the next open, as after a kill).
 */
class LogAgentTest
{
    @TempDir
    Path dir;

    @Test
    @Timeout(60)
    void anAgentErrorRepeatedEveryCycleTakesTheLogOfflineInsteadOfSpinning() throws Exception
    {
        final AtomicInteger reported = new AtomicInteger();
        final FileSync broken = new FileSync()
        {
            public void force(final MappedByteBuffer mapping, final int offset, final int length)
            {
                throw new IllegalStateException("injected: every flush of the agent fails");
            }

            public void force(final FileChannel channel, final boolean metadata) throws IOException
            {
                FileSync.SYSTEM.force(channel, metadata);
            }

            public void forceDirectory(final Path path) throws IOException
            {
                FileSync.SYSTEM.forceDirectory(path);
            }
        };
        final LogContext ctx = new LogContext().logDir(dir.resolve("log")).segmentBytes(1 << 20)
            .pretouchBytes(64 * 1024).flushIntervalMs(1).agentIdleStrategy(new BusySpinIdleStrategy())
            .errorHandler((t) -> reported.incrementAndGet()).fileSync(broken);
        try (Log log = Log.open(ctx))
        {
            final UnsafeBuffer value = new UnsafeBuffer(new byte[8]);
            assertEquals(0, log.append(value, 0, 8));
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (!log.isOffline() && System.nanoTime() < deadline)
            {
                Thread.sleep(1);
            }
            final int errors = reported.get();
            System.out.println("agent failing every cycle: offline=" + log.isOffline() + " errors reported=" + errors);
            assertTrue(log.isOffline(), "the log is still online after 10 s of a failing agent; errors reported: " +
                errors);
            Thread.sleep(100);
            assertTrue(reported.get() <= 3, "errors reported: " + reported.get());
            final StorageException offline = assertThrows(StorageException.class, () -> log.append(value, 0, 8));
            assertEquals(StorageErrorCode.LOG_OFFLINE, offline.code());
        }
    }

    @Test
    void theDedicatedAgentThreadIsADaemon() throws Exception
    {
        final Path logDir = dir.resolve("daemon-log");
        try (Log log = Log.open(new LogContext().logDir(logDir).segmentBytes(1 << 20).pretouchBytes(64 * 1024)))
        {
            assertEquals(0, log.append(new byte[]{ 1 }));
            final Thread agent = Thread.getAllStackTraces().keySet().stream()
                .filter((t) -> t.getName().equals("tidemark-log-" + logDir.getFileName()))
                .findFirst().orElseThrow(() -> new AssertionError("no agent thread named tidemark-log-daemon-log"));
            assertTrue(agent.isDaemon(), "the agent thread keeps the JVM alive");
        }
    }

    @Test
    void aJvmWhoseApplicationReturnedWithoutClosingItsLogExits() throws Exception
    {
        final Path logDir = dir.resolve("abandoned");
        try (CrashProcess child = CrashProcess.start(EdgeCaseChild.class, dir.resolve("stderr-abandon.txt"),
            "abandon", logDir.toString()))
        {
            final String appended = child.awaitLine((l) -> l.startsWith("APPENDED") || l.startsWith("ERROR"));
            assertEquals("APPENDED 0", appended, child::stderrText);
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            final ProcessHandle process = ProcessHandle.of(child.pid()).orElse(null);
            while (null != process && process.isAlive() && System.nanoTime() < deadline)
            {
                Thread.sleep(10);
            }
            assertTrue(null == process || !process.isAlive(),
                "the JVM did not exit 30 s after its main returned: a non-daemon log thread keeps it alive");
            assertEquals(0, child.awaitExit());
        }
        try (Log log = Log.open(new LogContext().logDir(logDir).segmentBytes(1 << 20)))
        {
            assertEquals(1, log.logEndOffset(), "the append survives the exit, as it survives a kill");
        }
    }
}
