package io.tidemark.store;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Shared by the crash-consistency suite ({@code Crash*Test}): the long-mode switch, the seed, failure collection
 * and the one summary line each part prints at its end.
 * <p>
 * Long mode: {@code -Dtidemark.long=true} (surefire passes it; {@code mvn verify -Plong} sets it). A run can be
 * replayed with {@code -Dtidemark.crash.seed=<seed>} (every part prints the seed it used).
 */
final class CrashSupport
{
    static final boolean LONG = Boolean.getBoolean("tidemark.long");
    private static final int MAX_FAILURES_KEPT = 25;

    private CrashSupport()
    {
    }

    /** @return {@code normal} in the default mode, {@code longMode} in long mode. */
    static int scale(final int normal, final int longMode)
    {
        return LONG ? longMode : normal;
    }

    /** @return the seed of this run: {@code tidemark.crash.seed} if set, else a fresh one. */
    static long seed()
    {
        final String fixed = System.getProperty("tidemark.crash.seed");
        return null != fixed && !fixed.isBlank() ? Long.parseLong(fixed.trim()) : System.nanoTime();
    }

    /** Figures of one part, printed as {@code crash-suite <part>: k=v k=v ...} in insertion order. */
    static final class Summary
    {
        private final String part;
        private final Map<String, Long> figures = new LinkedHashMap<>();
        private final List<String> failures = new ArrayList<>();
        private long failureCount;

        Summary(final String part, final String... keys)
        {
            this.part = part;
            for (final String key : keys)
            {
                figures.put(key, 0L);
            }
        }

        void add(final String key, final long delta)
        {
            figures.merge(key, delta, Long::sum);
        }

        void inc(final String key)
        {
            add(key, 1);
        }

        long get(final String key)
        {
            return figures.getOrDefault(key, 0L);
        }

        /** Count {@code key} and keep the description of the failure for the assertion message. */
        void fail(final String key, final String description)
        {
            inc(key);
            failureCount++;
            if (failures.size() < MAX_FAILURES_KEPT)
            {
                failures.add(key + ": " + description);
            }
        }

        long failureCount()
        {
            return failureCount;
        }

        String failures()
        {
            return failureCount == 0 ? "none" : failureCount + " failure(s), first ones:\n  " +
                String.join("\n  ", failures);
        }

        String line()
        {
            final StringBuilder out = new StringBuilder("crash-suite ").append(part).append(':');
            for (final Map.Entry<String, Long> e : figures.entrySet())
            {
                out.append(' ').append(e.getKey()).append('=').append(e.getValue());
            }
            return out.toString();
        }

        /** Print the summary line (stdout, and appended to target/crash-suite-summary.txt). */
        void print(final String extra)
        {
            final String line = line() + (null == extra || extra.isEmpty() ? "" : " " + extra);
            System.out.println(line);
            try
            {
                final Path file = Path.of(System.getProperty("basedir", ".")).resolve("target")
                    .resolve("crash-suite-summary.txt");
                Files.createDirectories(file.getParent());
                Files.writeString(file, line + System.lineSeparator(), StandardCharsets.UTF_8,
                    StandardOpenOption.CREATE, StandardOpenOption.APPEND);
            }
            catch (final IOException ex)
            {
                System.out.println("(could not record the summary line: " + ex + ")");
            }
        }
    }

    /** Delete a directory tree (best effort: leftovers live under the test's temp dir anyway). */
    static void deleteTree(final Path dir)
    {
        if (!Files.exists(dir))
        {
            return;
        }
        try (var paths = Files.walk(dir))
        {
            paths.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach((p) ->
            {
                try
                {
                    Files.deleteIfExists(p);
                }
                catch (final IOException ignore)
                {
                    // best effort
                }
            });
        }
        catch (final IOException ignore)
        {
            // best effort
        }
    }
}
