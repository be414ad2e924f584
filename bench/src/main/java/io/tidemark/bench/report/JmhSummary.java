package io.tidemark.bench.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;

/**
 * Turns a JMH JSON result file into the {@code summary.md} table: benchmark, params, mode, threads, score, error,
 * units and {@code gc.alloc.rate.norm} (bytes allocated per operation, from JMH's GC profiler; "n/a" when the run
 * had no GC profiler).
 */
public final class JmhSummary
{
    /** Name of the secondary metric the GC profiler reports allocation per operation under. */
    public static final String ALLOC_NORM = "gc.alloc.rate.norm";

    /**
     * One benchmark result.
     *
     * @param benchmark  {@code Class.method}.
     * @param params     {@code name=value} pairs, comma separated, or "" when none.
     * @param mode       JMH mode (thrpt, avgt, ...).
     * @param threads    benchmark threads.
     * @param score      primary score.
     * @param error      half-width of the 99.9% confidence interval (NaN with too few iterations).
     * @param unit       unit of the score.
     * @param allocNorm  bytes allocated per operation, or NaN when not measured.
     * @param allocUnit  unit of {@code allocNorm} (B/op), or "" when not measured.
     */
    public record Row(
        String benchmark,
        String params,
        String mode,
        int threads,
        double score,
        double error,
        String unit,
        double allocNorm,
        String allocUnit)
    {
    }

    private JmhSummary()
    {
    }

    /**
     * @param json the content of a JMH result file ({@code -rf json}).
     * @return its rows, in file order.
     */
    public static List<Row> parse(final String json)
    {
        final List<Row> rows = new ArrayList<>();
        for (final Object element : Json.array(Json.parse(json)))
        {
            final Map<String, Object> result = Json.object(element);
            final Map<String, Object> primary = Json.object(result.get("primaryMetric"));
            final Map<String, Object> alloc = Json.object(Json.object(result.get("secondaryMetrics")).get(ALLOC_NORM));
            final StringJoiner params = new StringJoiner(", ");
            Json.object(result.get("params")).forEach((k, v) -> params.add(k + "=" + v));
            final double threads = Json.number(result.get("threads"));
            rows.add(new Row(
                shortName(String.valueOf(result.get("benchmark"))),
                params.toString(),
                String.valueOf(result.get("mode")),
                Double.isNaN(threads) ? 1 : (int)threads,
                Json.number(primary.get("score")),
                Json.number(primary.get("scoreError")),
                String.valueOf(primary.getOrDefault("scoreUnit", "")),
                alloc.isEmpty() ? Double.NaN : Json.number(alloc.get("score")),
                alloc.isEmpty() ? "" : String.valueOf(alloc.getOrDefault("scoreUnit", ""))));
        }
        return rows;
    }

    /**
     * @param json the content of a JMH result file.
     * @return the JVM arguments of the forked benchmark JVMs, as JMH recorded them (distinct, in order).
     */
    public static List<String> forkedJvmArgs(final String json)
    {
        final List<String> distinct = new ArrayList<>();
        for (final Object element : Json.array(Json.parse(json)))
        {
            final StringJoiner args = new StringJoiner(" ");
            for (final Object arg : Json.array(Json.object(element).get("jvmArgs")))
            {
                args.add(String.valueOf(arg));
            }
            if (!distinct.contains(args.toString()))
            {
                distinct.add(args.toString());
            }
        }
        return distinct;
    }

    /**
     * @param json the content of a JMH result file.
     * @return the JMH version that wrote it, or "unknown".
     */
    public static String jmhVersion(final String json)
    {
        final List<Object> results = Json.array(Json.parse(json));
        return results.isEmpty() ? "unknown" :
            String.valueOf(Json.object(results.get(0)).getOrDefault("jmhVersion", "unknown"));
    }

    /**
     * @param fullName a JMH benchmark name ({@code package.Class.method}).
     * @return {@code Class.method}.
     */
    static String shortName(final String fullName)
    {
        final int lastDot = fullName.lastIndexOf('.');
        if (lastDot <= 0)
        {
            return fullName;
        }
        return fullName.substring(fullName.lastIndexOf('.', lastDot - 1) + 1);
    }

    /**
     * @param title   the document title.
     * @param facts   lines listed under the title ({@code key: value}), in order.
     * @param rows    the results.
     * @return the markdown document.
     */
    public static String markdown(final String title, final Map<String, String> facts, final List<Row> rows)
    {
        final StringBuilder md = new StringBuilder();
        md.append("# ").append(title).append("\n\n");
        facts.forEach((k, v) -> md.append("- ").append(k).append(": ").append(v).append('\n'));
        md.append('\n');
        md.append(table(rows));
        md.append('\n');
        md.append("Score: JMH primary metric (for thrpt, operations per second summed over the benchmark threads; ")
            .append("one operation is one record). Error: half-width of the 99.9% confidence interval ")
            .append("(NaN with too few measurement iterations). ")
            .append(ALLOC_NORM).append(": bytes allocated per operation by the JVM's threads during measurement ")
            .append("(JMH GC profiler); about 0 means the path allocates nothing per operation; n/a when the run ")
            .append("had no GC profiler.\n");
        return md.toString();
    }

    /**
     * @param rows the results.
     * @return the markdown table alone.
     */
    public static String table(final List<Row> rows)
    {
        final StringBuilder md = new StringBuilder();
        md.append("| Benchmark | Params | Mode | Threads | Score | Error | Units | ").append(ALLOC_NORM).append(" |\n");
        md.append("|---|---|---|---:|---:|---:|---|---:|\n");
        if (rows.isEmpty())
        {
            md.append("| (no results) | | | | | | | |\n");
        }
        for (final Row row : rows)
        {
            md.append("| ").append(cell(row.benchmark()))
                .append(" | ").append(row.params().isEmpty() ? "-" : cell(row.params()))
                .append(" | ").append(cell(row.mode()))
                .append(" | ").append(row.threads())
                .append(" | ").append(format(row.score()))
                .append(" | ").append(Double.isNaN(row.error()) ? "NaN" : "± " + format(row.error()))
                .append(" | ").append(cell(row.unit()))
                .append(" | ").append(Double.isNaN(row.allocNorm()) ? "n/a" :
                    format(row.allocNorm()) + " " + cell(row.allocUnit()))
                .append(" |\n");
        }
        return md.toString();
    }

    /**
     * @param value a score.
     * @return it with digits suited to its size: grouped integers from 1000 up, one decimal from 10, else three.
     */
    static String format(final double value)
    {
        if (Double.isNaN(value) || Double.isInfinite(value))
        {
            return String.valueOf(value);
        }
        final double magnitude = Math.abs(value);
        if (magnitude >= 1000)
        {
            return String.format(Locale.ROOT, "%,.0f", value);
        }
        if (magnitude >= 10)
        {
            return String.format(Locale.ROOT, "%.1f", value);
        }
        return String.format(Locale.ROOT, "%.3f", value);
    }

    private static String cell(final String text)
    {
        return text.replace("|", "\\|").replace("\n", " ");
    }

    /**
     * Write {@code summary.md} from a JMH result file.
     *
     * @param jsonFile    the JMH JSON result (may be missing after a failed run: the table then says so).
     * @param summaryFile where to write.
     * @param title       document title.
     * @param facts       lines under the title.
     * @return the rows written.
     */
    public static List<Row> write(
        final Path jsonFile, final Path summaryFile, final String title, final Map<String, String> facts)
        throws IOException
    {
        final List<Row> rows = Files.exists(jsonFile) ?
            parse(Files.readString(jsonFile, StandardCharsets.UTF_8)) : List.of();
        Files.writeString(summaryFile, markdown(title, facts, rows), StandardCharsets.UTF_8);
        return rows;
    }
}
