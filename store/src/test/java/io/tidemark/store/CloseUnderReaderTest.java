package io.tidemark.store;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * {@link Log#close()} never unmaps a segment under a reader inside a poll: neither when another thread closes the
 * log while a poll handler is busy (a shutdown hook while a consumer writes to a database), nor when the handler
 * closes the log itself. The reader finishes the record it holds, its poll ends at the next batch boundary, the next
 * poll fails with CLOSED, and the directory can be opened again as soon as close returns. Each case runs in a child
 * JVM ({@link EdgeCaseChild}), where an unmapped page would be a SIGSEGV.
 */
class CloseUnderReaderTest
{
    @TempDir
    Path root;

    @Test
    void closeFromAnotherThreadWaitsOutNoReaderAndUnmapsNothingUnderIt() throws Exception
    {
        final List<String> lines = run("other-thread");
        assertEquals(List.of("CLOSED", "REOPENED 3", "READ 0 1000", "POLLED 1", "NEXT CLOSED"), lines);
    }

    @Test
    void aPollHandlerThatClosesTheLogKeepsReadingItsRecord() throws Exception
    {
        final List<String> lines = run("handler");
        assertEquals(List.of("CLOSED", "READ 0 1000", "POLLED 1", "NEXT CLOSED", "REOPENED 3"), lines);
    }

    private List<String> run(final String mode) throws Exception
    {
        try (CrashProcess child = CrashProcess.start(EdgeCaseChild.class, root.resolve("stderr-" + mode + ".txt"),
            "close-under-reader", root.resolve("log-" + mode).toString(), mode))
        {
            final int exit = child.awaitExit();
            assertEquals(0, exit, () -> "the child JVM died (exit " + exit + "): " + child.lines() + "; stderr: " +
                child.stderrText());
            return child.lines();
        }
    }
}
