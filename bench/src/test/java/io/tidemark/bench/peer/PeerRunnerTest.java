package io.tidemark.bench.peer;

import io.tidemark.bench.JvmFlags;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PeerRunnerTest
{
    @TempDir
    Path tmp;

    @Test
    void tidemarkAndRawCopyMeasuredInThisJvm()
    {
        final Properties tidemark = PeerMain.measure(PeerMain.TIDEMARK, 100, 20, 50, 50, 20_000, tmp);
        assertEquals("ok", tidemark.getProperty("status"), tidemark.getProperty("failure"));
        assertTrue(Double.parseDouble(tidemark.getProperty("append.records.per.second")) > 0);
        // 20,000/s for 50 ms: 1,000 timed appends and 1,000 records through the tailer
        assertEquals(1_000, PeerMain.decode(tidemark.getProperty("append.latency")).getTotalCount());
        assertEquals(1_000, PeerMain.decode(tidemark.getProperty("tailer.latency")).getTotalCount());
        assertEquals(1_000, PeerMain.decode(tidemark.getProperty("append.service")).getTotalCount());

        final Properties raw = PeerMain.measure(PeerMain.RAW_COPY, 100, 20, 50, 50, 20_000, tmp);
        assertEquals("ok", raw.getProperty("status"), raw.getProperty("failure"));
        assertNull(raw.getProperty("tailer.latency"), "the raw copy has no tailer");
        assertTrue(tmp.toFile().list().length == 0, "peer directories deleted");
    }

    @Test
    void tidemarkJvmsGetOnlyTheAllowedFlagAndChronicleItsDocumentedOnes() throws Exception
    {
        final PeerRunner runner = new PeerRunner(tmp, false);
        for (final String peer : List.of(PeerMain.TIDEMARK, PeerMain.RAW_COPY))
        {
            final List<String> command = runner.command(PeerRunner.currentJava(), peer, 100, 1, 2, 3, 4,
                tmp.resolve("out"));
            assertEquals(JvmFlags.FORKED_JVM_ARGS, command.subList(1, 3));
            assertFalse(String.join(" ", command).contains("add-opens"), peer);
            assertEquals(PeerMain.class.getName(), command.get(5));
        }
        final List<String> chronicleCommand = runner.command(PeerRunner.currentJava(), PeerMain.CHRONICLE, 100, 1, 2,
            3, 4, tmp.resolve("out"));
        assertEquals(JvmFlags.FORKED_JVM_ARGS, chronicleCommand.subList(1, 3));
        assertEquals(JvmFlags.CHRONICLE_QUEUE_JVM_ARGS,
            chronicleCommand.subList(3, 3 + JvmFlags.CHRONICLE_QUEUE_JVM_ARGS.size()));
        final List<String> strict = new PeerRunner(tmp, true).command(PeerRunner.currentJava(), PeerMain.CHRONICLE,
            100, 1, 2, 3, 4, tmp.resolve("out"));
        assertFalse(String.join(" ", strict).contains("add-opens"));

        final PeerResult tidemark = runner.run(PeerRunner.currentJava(), PeerMain.TIDEMARK, 100, 20, 50, 50, 20_000);
        assertTrue(tidemark.ok(), tidemark.failure());
        assertTrue(tidemark.appendRecordsPerSecond() > 0);
        assertNotNull(tidemark.tailerLatency());
        assertTrue(tidemark.jvmArgs().contains("jdk.internal.misc"), tidemark.jvmArgs());

        // With its documented flags Chronicle Queue runs, its tailer included.
        final PeerResult chronicle = runner.run(PeerRunner.currentJava(), PeerMain.CHRONICLE, 100, 20, 50, 50,
            20_000);
        assertTrue(chronicle.ok(), chronicle.failure());
        assertTrue(chronicle.appendRecordsPerSecond() > 0);
        assertNotNull(chronicle.tailerLatency());
        assertEquals(1_000, chronicle.tailerLatency().getTotalCount());

        // Strict, it fails to map its files in its own JVM, and the result says why.
        final PeerResult strictChronicle = new PeerRunner(tmp, true).run(PeerRunner.currentJava(),
            PeerMain.CHRONICLE, 100, 20, 50, 50, 20_000);
        assertFalse(strictChronicle.ok());
        assertTrue(strictChronicle.failure().contains("IllegalAccess"), strictChronicle.failure());
        assertFalse(strictChronicle.failureSummary().isBlank());
    }

    @Test
    void comparisonGroupsAndMedians()
    {
        final Histogram h = new Histogram(3);
        h.recordValue(1_000);
        final String home = System.getProperty("java.home");
        final PeerComparison c = new PeerComparison(home, List.of(
            new PeerResult(PeerMain.TIDEMARK, 100, "17", home, "", true, null, 3e6, h, h, h),
            new PeerResult(PeerMain.TIDEMARK, 100, "17", home, "", true, null, 1e6, h, h, h),
            new PeerResult(PeerMain.TIDEMARK, 100, "17", home, "", true, null, 2e6, h, h, h),
            new PeerResult(PeerMain.CHRONICLE, 100, "17", home, "", false, "x\nCaused by: y", Double.NaN, null,
                null, null),
            new PeerResult(PeerMain.CHRONICLE, 100, "25", "/other", "", false, "z", Double.NaN, null, null, null)));
        assertEquals(3, c.groups().size());
        final PeerComparison.Group ours = c.main(PeerMain.TIDEMARK, 100);
        assertEquals(2e6, ours.medianRecordsPerSecond());
        assertEquals(1.0, ours.medianPercentileMicros(false, 99), 0.01);
        assertEquals(3, ours.appendLatency().getTotalCount());
        final PeerComparison.Group chronicle = c.main(PeerMain.CHRONICLE, 100);
        assertFalse(chronicle.ok());
        assertEquals("x / Caused by: y", chronicle.firstFailure().failureSummary());
        assertEquals(List.of(100), c.sizes());
    }
}
