package io.tidemark.cli;

import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.io.Reader;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.Callable;

/**
 * {@code tidemark bench}: runs the bench module's executable jar ({@code tidemark-bench.jar}, a shaded JMH jar
 * that is not a dependency of this module) in a child JVM, passing the arguments through.
 */
@Command(
    name = "bench",
    mixinStandardHelpOptions = true,
    description = {
        "Run the bench module's benchmarks: `quick` (the matrix in reduced form, about 2 minutes) or `full` (about " +
            "20 minutes), or any other tidemark-bench command (run, jmh, jmh-quick). Everything after the command " +
            "goes to tidemark-bench unchanged (`tidemark bench quick --help` shows its options).",
        "It runs bench/target/tidemark-bench.jar in a child JVM: found with --bench-jar, $TIDEMARK_BENCH_JAR, next " +
            "to the tidemark jar's checkout (../../bench/target/), or under the working directory. Build it with " +
            "`mvn -q -B -DskipTests package -pl bench -am` (./tidemark does that when it is missing).",
        "Exit code: the benchmark's, or 3 when the bench jar is not found."},
    sortOptions = false)
final class BenchCommand implements Callable<Integer>
{
    static final String JAR_NAME = "tidemark-bench.jar";
    static final String ENV = "TIDEMARK_BENCH_JAR";

    @Spec
    CommandSpec spec;

    @Option(names = "--bench-jar", paramLabel = "JAR", description = "The tidemark-bench.jar to run.")
    Path benchJar;

    @Parameters(index = "0", paramLabel = "COMMAND", description = "quick, full, or another tidemark-bench command.")
    String command;

    @Parameters(index = "1..*", paramLabel = "ARGS", description = "Passed to tidemark-bench as they are.")
    List<String> args = new ArrayList<>();

    @Override
    public Integer call() throws IOException, InterruptedException
    {
        final Path jar = findJar();
        final List<String> commandLine = new ArrayList<>();
        commandLine.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        commandLine.add("-jar");
        commandLine.add(jar.toString());
        commandLine.add(command);
        commandLine.addAll(args);
        final Process process = new ProcessBuilder(commandLine)
            .redirectInput(ProcessBuilder.Redirect.INHERIT)
            .start();
        final Thread stdout = pump(process.getInputStream(), spec.commandLine().getOut(), "bench-stdout");
        final Thread stderr = pump(process.getErrorStream(), spec.commandLine().getErr(), "bench-stderr");
        final Thread hook = new Thread(process::destroy, "tidemark-bench-stop");
        Runtime.getRuntime().addShutdownHook(hook);
        try
        {
            final int exit = process.waitFor();
            stdout.join();
            stderr.join();
            return exit;
        }
        finally
        {
            try
            {
                Runtime.getRuntime().removeShutdownHook(hook);
            }
            catch (final IllegalStateException shuttingDown)
            {
                // the hook stops the child
            }
        }
    }

    private static Thread pump(final InputStream in, final PrintWriter to, final String name)
    {
        final Thread thread = new Thread(() ->
        {
            final char[] chunk = new char[8192];
            try (Reader reader = new InputStreamReader(in, StandardCharsets.UTF_8))
            {
                int n;
                while ((n = reader.read(chunk)) >= 0)
                {
                    to.write(chunk, 0, n);
                    to.flush();
                }
            }
            catch (final IOException ignore)
            {
                // the child is gone
            }
        }, name);
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private Path findJar()
    {
        final Set<Path> candidates = new LinkedHashSet<>();
        if (null != benchJar)
        {
            if (!Files.isRegularFile(benchJar))
            {
                throw new CliException(ExitCodes.IO, "no such bench jar: " + benchJar);
            }
            return benchJar;
        }
        final String env = System.getenv(ENV);
        if (null != env && !env.isBlank())
        {
            candidates.add(Path.of(env));
        }
        final Path own = ownJar();
        if (null != own && null != own.getParent() && null != own.getParent().getParent())
        {
            candidates.add(own.getParent().getParent().getParent().resolve("bench/target").resolve(JAR_NAME));
        }
        candidates.add(Path.of("bench", "target", JAR_NAME).toAbsolutePath());
        candidates.add(Path.of(JAR_NAME).toAbsolutePath());
        for (final Path candidate : candidates)
        {
            if (Files.isRegularFile(candidate))
            {
                return candidate;
            }
        }
        throw new CliException(ExitCodes.IO, JAR_NAME + " not found (looked at " + candidates + "); build it " +
            "with: mvn -q -B -DskipTests package -pl bench -am (or give --bench-jar)");
    }

    /** @return the jar this class was loaded from (cli/target/tidemark.jar), or null when run from classes. */
    private static Path ownJar()
    {
        try
        {
            final Path location = Path.of(BenchCommand.class.getProtectionDomain().getCodeSource().getLocation()
                .toURI());
            return Files.isRegularFile(location) ? location.toAbsolutePath() : null;
        }
        catch (final URISyntaxException | SecurityException | NullPointerException ex)
        {
            return null;
        }
    }
}
