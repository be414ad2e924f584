package io.tidemark.cli;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.jar.Manifest;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

@ExtendWith(Cli.Transcript.class)
class BenchCommandTest
{
    @TempDir
    Path tmp;

    /** A jar like tidemark-bench.jar: executable, its main class {@link FakeBench}. */
    private Path fakeBenchJar() throws Exception
    {
        final Path jar = tmp.resolve("tidemark-bench.jar");
        final Manifest manifest = new Manifest();
        manifest.getMainAttributes().put(Attributes.Name.MANIFEST_VERSION, "1.0");
        manifest.getMainAttributes().put(Attributes.Name.MAIN_CLASS, FakeBench.class.getName());
        try (OutputStream file = Files.newOutputStream(jar);
            JarOutputStream out = new JarOutputStream(file, manifest);
            InputStream clazz = FakeBench.class.getResourceAsStream("FakeBench.class"))
        {
            out.putNextEntry(new JarEntry("io/tidemark/cli/FakeBench.class"));
            clazz.transferTo(out);
            out.closeEntry();
        }
        return jar;
    }

    @Test
    void passesTheArgumentsThroughAndReturnsTheBenchmarksExitCode() throws Exception
    {
        final Path jar = fakeBenchJar();
        final Cli.Result quick = Cli.run("bench", "--bench-jar", jar.toString(), "quick", "--results-dir", "out",
            "--help");
        assertEquals(ExitCodes.OK, quick.exitCode(), quick.toString());
        assertEquals("fake bench: [quick, --results-dir, out, --help]\n", quick.out());
        assertTrue(quick.err().contains("fake bench stderr"), quick.err());
        final Cli.Result full = Cli.run("bench", "--bench-jar", jar.toString(), "full");
        assertEquals("fake bench: [full]\n", full.out());
        assertEquals(7, Cli.run("bench", "--bench-jar", jar.toString(), "exit", "7").exitCode());
    }

    @Test
    void aMissingBenchJarIsAClearError()
    {
        final Cli.Result missing = Cli.run("bench", "--bench-jar", tmp.resolve("none.jar").toString(), "quick");
        assertEquals(ExitCodes.IO, missing.exitCode(), missing.toString());
        assertTrue(missing.err().contains("no such bench jar"), missing.err());

        assumeTrue(null == System.getenv(BenchCommand.ENV) && !Files.exists(Path.of("bench/target/tidemark-bench.jar")));
        final Cli.Result notBuilt = Cli.run("bench", "quick");
        assertEquals(ExitCodes.IO, notBuilt.exitCode(), notBuilt.toString());
        assertTrue(notBuilt.err().contains("tidemark-bench.jar not found"), notBuilt.err());
        assertTrue(notBuilt.err().contains("mvn -q -B -DskipTests package -pl bench -am"), notBuilt.err());
        assertEquals(ExitCodes.USAGE, Cli.run("bench").exitCode());
    }
}
