package io.tidemark.bench.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Writes {@code <results>/README.md}: an index of every run directory under the results root (newest first), with
 * its kind, date, command and, for harness runs, the verification outcome and the goals' tally. Rewritten after
 * every run from what the directories hold, so it never goes stale.
 */
public final class ResultsIndex
{
    /** The index file name. */
    public static final String FILE = "README.md";

    private ResultsIndex()
    {
    }

    /**
     * @param resultsDir the results root.
     * @return the index file written.
     */
    public static Path update(final Path resultsDir) throws IOException
    {
        final List<Path> runs = new ArrayList<>();
        try (Stream<Path> dirs = Files.list(resultsDir))
        {
            dirs.filter(Files::isDirectory).filter((d) -> Files.exists(d.resolve(PerfRun.SUMMARY_FILE)))
                .forEach(runs::add);
        }
        final Map<Path, String> dates = new java.util.HashMap<>();
        for (final Path run : runs)
        {
            dates.put(run, field(Files.readAllLines(run.resolve(PerfRun.SUMMARY_FILE), StandardCharsets.UTF_8),
                "- Date: "));
        }
        runs.sort((a, b) ->
        {
            final int byDate = dates.get(b).compareTo(dates.get(a));
            return byDate != 0 ? byDate : b.getFileName().toString().compareTo(a.getFileName().toString());
        });
        final StringBuilder md = new StringBuilder();
        md.append("# Benchmark results\n\n");
        md.append("One directory per run, `<date>_<git short sha>[-n]/`, written by `tidemark-bench` ")
            .append("(`java -jar bench/target/tidemark-bench.jar quick|full|run|jmh|jmh-quick`). Each holds ")
            .append("`summary.md` (start there), `env.txt` (machine, JVM, load averages) and, for harness runs, ")
            .append("`summary.json`, one `.hgrm` file per scenario and `charts/`; JMH runs hold ")
            .append("`jmh-result.json`. This index is rewritten after every run.\n\n");
        md.append("| Run | Kind | Date | Command | Verified | Goals |\n|---|---|---|---|---|---|\n");
        for (final Path run : runs)
        {
            final String name = run.getFileName().toString();
            final List<String> summary = Files.readAllLines(run.resolve(PerfRun.SUMMARY_FILE), StandardCharsets.UTF_8);
            final Path json = run.resolve(HarnessReport.JSON_FILE);
            String kind = "jmh";
            String verified = "-";
            String targets = "-";
            if (Files.exists(json))
            {
                try
                {
                    final Map<String, Object> root = Json.object(Json.parse(Files.readString(json,
                        StandardCharsets.UTF_8)));
                    kind = String.valueOf(root.getOrDefault("kind", "harness"));
                    verified = Boolean.TRUE.equals(root.get("allVerified")) ? "yes" : "**no**";
                    targets = tally(Json.array(root.get("targets")));
                }
                catch (final IllegalArgumentException ex)
                {
                    kind = "harness (unreadable summary.json)";
                }
            }
            md.append("| [").append(name).append("](").append(name).append("/summary.md) | ").append(kind)
                .append(" | ").append(HarnessReport.cell(field(summary, "- Date: "))).append(" | ")
                .append(HarnessReport.cell(field(summary, "- Command: "))).append(" | ").append(verified)
                .append(" | ").append(targets).append(" |\n");
        }
        final Path file = resultsDir.resolve(FILE);
        Files.writeString(file, md.toString(), StandardCharsets.UTF_8);
        return file;
    }

    private static String tally(final List<Object> targets)
    {
        int met = 0;
        int missed = 0;
        int notMeasurable = 0;
        int notRun = 0;
        for (final Object t : targets)
        {
            switch (String.valueOf(Json.object(t).get("status")))
            {
                case "MET": met++; break;
                case "MISSED": missed++; break;
                case "NOT_MEASURABLE": notMeasurable++; break;
                default: notRun++; break;
            }
        }
        return met + " reached, " + missed + " not reached" +
            (notMeasurable > 0 ? ", " + notMeasurable + " could not be measured" : "") +
            (notRun > 0 ? ", " + notRun + " not in this run" : "");
    }

    private static String field(final List<String> lines, final String prefix)
    {
        for (final String line : lines)
        {
            if (line.startsWith(prefix))
            {
                return line.substring(prefix.length()).trim();
            }
        }
        return "";
    }
}
