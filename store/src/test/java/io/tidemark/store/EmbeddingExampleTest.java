package io.tidemark.store;

import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The store examples of README.md ("A log in your process") and docs/store.md ("Embedding the store"), compiled and
 * run. The build's documentation check (module docs-check) fails unless the lines between each pair of markers are
 * the page's code block, line for line.
 */
class EmbeddingExampleTest
{
    @TempDir
    Path dataDir;

    private final List<String> used = new ArrayList<>();

    /** What the docs page's reader does with each value: here, keep it for the assertions. */
    private void use(final DirectBuffer buffer, final int offset, final int length)
    {
        used.add(buffer.getStringWithoutLengthUtf8(offset, length));
    }

    @Test
    void storePageExample()
    {
        // EXAMPLE-START store
        try (Log log = Log.open(new LogContext()
                .logDir(LogNames.resolve(dataDir, "orders-0"))               // validated: no path traversal
                .flushIntervalMs(100)))                                    // see docs/durability.md
        {
            UnsafeBuffer key = new UnsafeBuffer("k".getBytes());
            UnsafeBuffer value = new UnsafeBuffer("hello".getBytes());
            long offset = log.append(value, 0, value.capacity());          // one record, offset assigned by the log

            BatchClaim claim = log.tryClaim(4096);                         // a batch encoded straight into the mapping
            int at = claim.addRecord(BatchClaim.NOW, null, 0, -1, 8);       //   reserve 8 value bytes...
            claim.buffer().putLong(at, 42L);                               //   ...and write them in place
            claim.addRecord(BatchClaim.NOW, key, 0, key.capacity(), value, 0, value.capacity());
            long base = claim.commit();                                    // CRC, offsets, publish (release)

            try (LogReader reader = log.openReader())
            {
                reader.seek(offset);                                       // or seekToTimestamp / seekToBeginning / seekToEnd
                reader.poll(record -> use(record.buffer(), record.valueOffset(), record.valueLength()),
                            Long.MAX_VALUE /* limit offset, e.g. the high watermark */, 100);
            }
        }
        // EXAMPLE-END store
        assertEquals(3, used.size(), used.toString());
        assertEquals("hello", used.get(0));
        assertEquals(8, used.get(1).length(), "the 8 bytes written in place");
        assertEquals("hello", used.get(2));
    }

    @Test
    void readmeExample()
    {
        final PrintStream stdout = System.out;
        final ByteArrayOutputStream printed = new ByteArrayOutputStream();
        System.setOut(new PrintStream(printed, true, StandardCharsets.UTF_8));
        try
        {
            // EXAMPLE-START readme
            try (Log log = Log.open(new LogContext().logDir(dataDir.resolve("orders-0"))))
            {
                long offset = log.append("BUY 100 XYZ @ 9.99".getBytes());      // survives a process crash once it returns
                try (LogReader reader = log.openReader())
                {
                    reader.seek(offset);
                    reader.poll(record -> System.out.println(record.offset() + " " + record.valueAsString()),
                                Long.MAX_VALUE, 10);                             // zero-copy views into the mapping
                }
            }
            // EXAMPLE-END readme
        }
        finally
        {
            System.setOut(stdout);
        }
        assertTrue(printed.toString(StandardCharsets.UTF_8).contains("0 BUY 100 XYZ @ 9.99"),
            printed.toString(StandardCharsets.UTF_8));
    }
}
