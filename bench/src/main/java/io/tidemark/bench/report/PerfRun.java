package io.tidemark.bench.report;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalDate;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * One benchmark run's report directory and the one writer of its files, for every mode:
 * {@code <results>/<yyyy-MM-dd>_[<kind>-]<git short sha or 'nogit'>/} (no kind for the harness and JMH; e.g.
 * {@code multiprocess}, {@code kafka-clients}, {@code isr-flap}, {@code writer}, {@code auth-overhead} for the
 * others), holding {@value #SUMMARY_FILE} (start there), {@value #SUMMARY_JSON} (the same, for tools),
 * {@value #ENV_FILE} (the machine), {@code .hgrm} latency histograms and, for JMH, {@value #JSON_FILE}; and after
 * the run the results root's index ({@link ResultsIndex}). When that directory already holds a report (a second
 * run on the same day and commit), the next free {@code -2}, {@code -3}, ... suffix is used, so that no result is
 * overwritten.
 */
public final class PerfRun
{
    /** The JMH JSON result file. */
    public static final String JSON_FILE = "jmh-result.json";
    /** The results table. */
    public static final String SUMMARY_FILE = "summary.md";
    /** The machine-readable summary. */
    public static final String SUMMARY_JSON = "summary.json";
    /** The machine description. */
    public static final String ENV_FILE = "env.txt";
    /** Directory name used when the current directory is not in a git work tree. */
    public static final String NO_GIT = "nogit";

    private static final Pattern SHA = Pattern.compile("[0-9a-f]{4,40}");

    private final Path resultsDir;
    private final Path directory;
    private final String command;
    private final String gitSha;
    private final boolean gitDirty;
    private final ZonedDateTime started;
    private final String loadAtStart;

    private PerfRun(
        final Path resultsDir, final Path directory, final String command, final String gitSha,
        final boolean gitDirty, final ZonedDateTime started)
    {
        this.resultsDir = resultsDir;
        this.directory = directory;
        this.command = command;
        this.gitSha = gitSha;
        this.gitDirty = gitDirty;
        this.started = started;
        this.loadAtStart = Environment.loadAverage();
    }

    /**
     * Create the report directory of a run starting now.
     *
     * @param resultsDir the results root (relative paths are against the current directory).
     * @param workDir    where to ask git for the commit (the current directory).
     * @param command    the command line, for the record.
     * @return the run.
     */
    public static PerfRun start(final Path resultsDir, final Path workDir, final String command) throws IOException
    {
        return start(resultsDir, workDir, command, null);
    }

    /**
     * Create the report directory of a run of one kind starting now.
     *
     * @param resultsDir the results root (relative paths are against the current directory).
     * @param workDir    where to ask git for the commit (the current directory).
     * @param command    the command line, for the record.
     * @param kind       what ran, in the directory's name after the date; null for none (the harness, JMH).
     * @return the run.
     */
    public static PerfRun start(final Path resultsDir, final Path workDir, final String command, final String kind)
        throws IOException
    {
        final ZonedDateTime now = ZonedDateTime.now();
        final String sha = gitShortSha(workDir);
        final boolean dirty = !NO_GIT.equals(sha) && gitDirty(workDir);
        final Path directory = createDirectory(resultsDir, now.toLocalDate(), sha, kind);
        return new PerfRun(resultsDir, directory, command, sha, dirty, now);
    }

    /**
     * @param resultsDir the results root.
     * @param date       the run's date.
     * @param sha        git short sha or {@value #NO_GIT}.
     * @return a new or empty directory {@code <resultsDir>/<date>_<sha>[-n]}.
     */
    static Path createDirectory(final Path resultsDir, final LocalDate date, final String sha) throws IOException
    {
        return createDirectory(resultsDir, date, sha, null);
    }

    /**
     * @param resultsDir the results root.
     * @param date       the run's date.
     * @param sha        git short sha or {@value #NO_GIT}.
     * @param kind       what ran, or null.
     * @return a new or empty directory {@code <resultsDir>/<date>_[<kind>-]<sha>[-n]}.
     */
    public static Path createDirectory(final Path resultsDir, final LocalDate date, final String sha,
        final String kind) throws IOException
    {
        final String base = DateTimeFormatter.ISO_LOCAL_DATE.format(date) + "_" + (null == kind ? "" : kind + "-") +
            sha;
        Path candidate = resultsDir.resolve(base);
        for (int n = 2; holdsReport(candidate); n++)
        {
            candidate = resultsDir.resolve(base + "-" + n);
        }
        return Files.createDirectories(candidate);
    }

    private static boolean holdsReport(final Path dir)
    {
        return Files.exists(dir.resolve(SUMMARY_FILE)) || Files.exists(dir.resolve(JSON_FILE)) ||
            Files.exists(dir.resolve(ENV_FILE)) || Files.exists(dir.resolve(SUMMARY_JSON));
    }

    /**
     * @param workDir a directory.
     * @return the short sha of HEAD of the git work tree holding it, or {@value #NO_GIT}.
     */
    public static String gitShortSha(final Path workDir)
    {
        final String out = git(workDir, "rev-parse", "--short", "HEAD");
        return null != out && SHA.matcher(out).matches() ? out : NO_GIT;
    }

    /**
     * @param workDir a directory in a git work tree.
     * @return whether tracked files have uncommitted changes (false without git).
     */
    public static boolean gitDirty(final Path workDir)
    {
        final String out = git(workDir, "status", "--porcelain", "--untracked-files=no");
        return null != out && !out.isEmpty();
    }

    private static String git(final Path workDir, final String... args)
    {
        final String[] command = new String[args.length + 1];
        command[0] = "git";
        System.arraycopy(args, 0, command, 1, args.length);
        try
        {
            final Process process = new ProcessBuilder(command)
                .directory(workDir.toFile())
                .redirectError(ProcessBuilder.Redirect.DISCARD)
                .start();
            final String out;
            try (InputStream in = process.getInputStream())
            {
                out = new String(in.readAllBytes(), StandardCharsets.UTF_8).trim();
            }
            if (!process.waitFor(10, TimeUnit.SECONDS))
            {
                process.destroyForcibly();
                return null;
            }
            return process.exitValue() == 0 ? out : null;
        }
        catch (final IOException ex)
        {
            return null; // no git on this machine
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return null;
        }
    }

    /** @return the report directory. */
    public Path directory()
    {
        return directory;
    }

    /** @return the results root the report directory is in. */
    public Path resultsDir()
    {
        return resultsDir;
    }

    /**
     * Write {@value #SUMMARY_FILE}.
     *
     * @param markdown the report.
     * @return the file.
     */
    public Path writeSummary(final String markdown) throws IOException
    {
        return Files.writeString(summaryFile(), markdown, StandardCharsets.UTF_8);
    }

    /**
     * Write {@value #SUMMARY_JSON}.
     *
     * @param tree maps, lists, strings, numbers, booleans and null ({@link Json#write}).
     * @return the file.
     */
    public Path writeJson(final Object tree) throws IOException
    {
        return Files.writeString(directory.resolve(SUMMARY_JSON), Json.write(tree), StandardCharsets.UTF_8);
    }

    /**
     * Write {@value #ENV_FILE}.
     *
     * @param env the machine's and the run's facts ({@link Environment#describe}).
     * @return a one-line description of the machine for the summary.
     */
    public String writeEnvironment(final Map<String, String> env) throws IOException
    {
        Files.writeString(envFile(), Environment.format(env), StandardCharsets.UTF_8);
        return machine(env);
    }

    /**
     * Write a latency histogram as HdrHistogram's percentile distribution.
     *
     * @param name  the file, relative to the report directory ({@code .hgrm}); its directory is created.
     * @param h     the histogram.
     * @param scale what its values are divided by in the file (1000.0: nanoseconds written as microseconds).
     * @return the file.
     */
    public Path writeHgrm(final String name, final org.HdrHistogram.Histogram h, final double scale)
        throws IOException
    {
        final Path file = directory.resolve(name);
        Files.createDirectories(file.getParent());
        try (java.io.PrintStream out = new java.io.PrintStream(Files.newOutputStream(file), false,
            StandardCharsets.UTF_8))
        {
            h.outputPercentileDistribution(out, scale);
        }
        return file;
    }

    /**
     * Rewrite the results root's index ({@link ResultsIndex}) once the report is complete.
     *
     * @return the index file.
     */
    public Path updateIndex() throws IOException
    {
        return ResultsIndex.update(resultsDir);
    }

    /** @return where JMH writes its JSON result. */
    public Path jsonFile()
    {
        return directory.resolve(JSON_FILE);
    }

    /** @return the summary table's path. */
    public Path summaryFile()
    {
        return directory.resolve(SUMMARY_FILE);
    }

    /** @return the machine description's path. */
    public Path envFile()
    {
        return directory.resolve(ENV_FILE);
    }

    /** @return the git short sha or {@value #NO_GIT}. */
    public String gitSha()
    {
        return gitSha;
    }

    /**
     * @return the run's facts so far: date (start to now), git, command, load averages at the start and now.
     */
    public Map<String, String> facts()
    {
        final ZonedDateTime now = ZonedDateTime.now();
        final Map<String, String> facts = new LinkedHashMap<>();
        facts.put("date", DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(started.withNano(0)) + " to " +
            DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(now.withNano(0)));
        facts.put("git", gitSha + (gitDirty ? " (work tree has uncommitted changes)" : ""));
        facts.put("command", command);
        facts.put("loadavg.start", loadAtStart);
        facts.put("loadavg.end", Environment.loadAverage());
        return facts;
    }

    /**
     * Write {@value #ENV_FILE} for a harness run.
     *
     * @param facts         the run's facts ({@link #facts()}), listed first.
     * @param forkedJvmArgs JVM arguments of forked JVMs (peers), one entry per distinct set.
     * @param extra         further facts (threading, settings), listed after the machine.
     * @return the facts plus a one-line "machine" description.
     */
    public Map<String, String> writeEnvironment(final Map<String, String> facts, final List<String> forkedJvmArgs,
        final Map<String, String> extra) throws IOException
    {
        final Map<String, String> env = Environment.describe(facts, forkedJvmArgs);
        env.putAll(extra);
        env.put("note", "other processes (builds and test runs of other work) shared this machine during the " +
            "run: see loadavg.start and loadavg.end; with 2 CPUs a load above 2 means the benchmark threads " +
            "competed for the CPUs");
        Files.writeString(envFile(), Environment.format(env), StandardCharsets.UTF_8);
        final Map<String, String> out = new LinkedHashMap<>(facts);
        out.put("machine", machine(env));
        return out;
    }

    /** @return the machine in one line, from {@link Environment#describe}'s facts. */
    public static String machine(final Map<String, String> env)
    {
        return env.get("cpu.model") + ", " + env.get("cpu.available.to.jvm") + " CPUs, " +
            env.get("memory.total").replaceFirst(" \\(.*", "") + " RAM, JDK " + env.get("jdk.version") +
            ", " + env.get("os") + " (details in " + ENV_FILE + ")";
    }

    /**
     * Write {@value #SUMMARY_FILE} from the JMH result (if the run produced one) and {@value #ENV_FILE}.
     *
     * @param defaultForkedJvmArgs the JVM arguments the run gave its forks, recorded when the result does not
     *                             say (no result file).
     * @return the summary rows.
     */
    public List<JmhSummary.Row> finish(final List<String> defaultForkedJvmArgs) throws IOException
    {
        final ZonedDateTime ended = ZonedDateTime.now();
        final Map<String, String> facts = new LinkedHashMap<>();
        facts.put("date", DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(started.withNano(0)) + " to " +
            DateTimeFormatter.ISO_OFFSET_DATE_TIME.format(ended.withNano(0)));
        facts.put("git", gitSha + (gitDirty ? " (work tree has uncommitted changes)" : ""));
        facts.put("command", command);
        List<String> forkedJvmArgs = List.of(String.join(" ", defaultForkedJvmArgs));
        String jmhVersion = "unknown";
        if (Files.exists(jsonFile()))
        {
            final String json = Files.readString(jsonFile(), StandardCharsets.UTF_8);
            final List<String> recorded = JmhSummary.forkedJvmArgs(json);
            forkedJvmArgs = recorded.isEmpty() ? forkedJvmArgs : recorded;
            jmhVersion = JmhSummary.jmhVersion(json);
        }
        facts.put("jmh.version", jmhVersion);
        facts.put("loadavg.start", loadAtStart);
        facts.put("loadavg.end", Environment.loadAverage());
        final Map<String, String> env = Environment.describe(facts, forkedJvmArgs);
        Files.writeString(envFile(), Environment.format(env), StandardCharsets.UTF_8);

        final Map<String, String> header = new LinkedHashMap<>();
        header.put("Date", facts.get("date"));
        header.put("Commit", facts.get("git"));
        header.put("Command", "`" + command + "`");
        header.put("Machine", env.get("cpu.model") + ", " + env.get("cpu.available.to.jvm") + " CPUs, " +
            env.get("memory.total").replaceFirst(" \\(.*", "") + " RAM, JDK " + env.get("jdk.version") +
            " (details in " + ENV_FILE + ")");
        header.put("Raw results", JSON_FILE + (Files.exists(jsonFile()) ? "" : " (missing: the run produced none)"));
        return JmhSummary.write(jsonFile(), summaryFile(), "Tidemark benchmark results", header);
    }
}
