package io.tidemark.bench;

import picocli.CommandLine.Option;

import java.nio.file.Path;

/**
 * The option blocks several subcommands share, as picocli mixins ({@code @Mixin}): where the report goes, how many
 * rounds run, and the warm-up and measurement windows. A command that wants another default than the usual one
 * passes it to the mixin's constructor (picocli then keeps that instance and shows its value as the default).
 * <p>
 * Filled in by picocli, one instance per execution; not thread-safe.
 */
public final class BenchOptions
{
    private BenchOptions()
    {
    }

    /** {@code --results-dir}: the results root, under which each run creates its directory. */
    public static final class Results
    {
        @Option(names = "--results-dir", paramLabel = "DIR",
            description = "Where run directories are created (default: ${DEFAULT-VALUE}, relative to the " +
                "current directory; perf-results/local is ignored by git; the project publishes runs with " +
                "--results-dir perf-results, which also rewrites the tracked index).")
        Path resultsDir;

        /** The usual default, {@value BenchMain#DEFAULT_RESULTS_DIR}. */
        public Results()
        {
            this(BenchMain.DEFAULT_RESULTS_DIR);
        }

        /** @param defaultDir this command's default. */
        public Results(final String defaultDir)
        {
            this.resultsDir = Path.of(defaultDir);
        }

        /** @return the results root. */
        public Path dir()
        {
            return resultsDir;
        }
    }

    /** {@code --runs}: rounds of the whole sweep; the reports give medians and spreads over them. */
    public static final class Runs
    {
        @Option(names = "--runs", paramLabel = "N",
            description = "Rounds of the sweep, interleaved; the report gives the median and spread (default: " +
                "${DEFAULT-VALUE}).")
        int runs;

        /** One round. */
        public Runs()
        {
            this(1);
        }

        /** @param defaultRuns this command's default. */
        public Runs(final int defaultRuns)
        {
            this.runs = defaultRuns;
        }

        /** @return the rounds asked for. */
        public int runs()
        {
            return runs;
        }
    }

    /** {@code --warmup} and {@code --duration}: the unreported start and the measurement window of each phase. */
    public static final class Window
    {
        @Option(names = "--warmup", paramLabel = "TIME", defaultValue = "2s", converter = Durations.class,
            description = "Unreported start of every phase (default: ${DEFAULT-VALUE}).")
        long warmupMs;

        @Option(names = "--duration", paramLabel = "TIME", defaultValue = "10s", converter = Durations.class,
            description = "Measurement window of each phase (default: ${DEFAULT-VALUE}).")
        long durationMs;

        /** @return the warm-up of each phase, milliseconds. */
        public long warmupMs()
        {
            return warmupMs;
        }

        /** @return the measurement window of each phase, milliseconds. */
        public long durationMs()
        {
            return durationMs;
        }
    }

    /**
     * {@code --segment-bytes} and {@code --dirty-bytes-max}: the replica logs of an embedded cluster (the harness
     * commands of this package read the fields).
     */
    public static final class ReplicaLogs
    {
        @Option(names = "--segment-bytes", paramLabel = "BYTES", defaultValue = "268435456",
            description = "segment.bytes of the replica logs (default: ${DEFAULT-VALUE}).")
        long segmentBytes;

        @Option(names = "--dirty-bytes-max", paramLabel = "BYTES", defaultValue = "0",
            description = "dirty.bytes.max of every replica log; 0: writeback left to the kernel (default: " +
                "${DEFAULT-VALUE}, the store's).")
        long dirtyBytesMax;

        /** @return how the report's settings show them. */
        public String describe()
        {
            return "segment.bytes " + segmentBytes + ", dirty.bytes.max " + dirtyBytesMax;
        }
    }
}
