package io.tidemark.docs;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The README's "Use it in your project" section, checked on every build: its dependency snippet names a module of
 * this build at this build's version, its complete program compiles against the store and runs with the one JVM
 * flag (and without it fails naming the flag), and its run command gives that flag. The fresh-clone check
 * ({@code .ci/fresh-clone-check}) builds the same blocks as a Maven project of its own against an installed build.
 */
class UseItInYourProjectTest
{
    private static final String FLAG = "--add-exports java.base/jdk.internal.misc=ALL-UNNAMED";
    private static final long PATIENCE_MS = 120_000; // a liveness guard for the child JVM, not a speed check

    @TempDir
    Path tmp;

    /** @return the lines of the README block marked {@code <!-- fresh-clone: name -->}. */
    static List<String> block(final String name)
    {
        final MarkdownFile readme = MarkdownFile.read(Repository.root().resolve("README.md"));
        for (final MarkdownFile.MarkedBlock block : readme.markedBlocks())
        {
            if (block.kind().equals("fresh-clone") && block.value().equals(name))
            {
                assertTrue(!block.lines().isEmpty(), "README.md:" + block.line() + ": an empty block " + name);
                return block.lines();
            }
        }
        throw new AssertionError("README.md has no block marked <!-- fresh-clone: " + name + " -->");
    }

    @Test
    void theDependencySnippetNamesAModuleOfThisBuildAtItsVersion() throws IOException
    {
        final String snippet = String.join("\n", block("pom-dependencies"));
        final Path root = Repository.root();
        final String version = first(Pattern.compile("<artifactId>tidemark-parent</artifactId>\\s*<version>([^<]+)" +
            "</version>"), Files.readString(root.resolve("pom.xml")));
        final Matcher dependency = Pattern.compile("<dependency>\\s*<groupId>([^<]+)</groupId>\\s*<artifactId>([^<]+)" +
            "</artifactId>\\s*<version>([^<]+)</version>\\s*</dependency>").matcher(snippet);
        int count = 0;
        while (dependency.find())
        {
            count++;
            assertEquals("io.tidemark", dependency.group(1), snippet);
            assertEquals(version, dependency.group(3), "the README's version is the build's: " + snippet);
            final String module = dependency.group(2).replaceFirst("^tidemark-", "");
            final Path pom = root.resolve(module).resolve("pom.xml");
            assertTrue(Files.isRegularFile(pom) && Files.readString(pom).contains("<artifactId>" +
                dependency.group(2) + "</artifactId>"), "no module builds " + dependency.group(2));
        }
        assertTrue(count > 0, "no <dependency> in the snippet: " + snippet);
    }

    @Test
    void theProgramCompilesAndRunsWithTheFlagAndNamesTheFlagWithoutIt() throws Exception
    {
        final Path sources = Files.createDirectories(tmp.resolve("src"));
        final Path classes = Files.createDirectories(tmp.resolve("classes"));
        final Path app = sources.resolve("App.java");
        Files.write(app, block("App.java"), StandardCharsets.UTF_8);
        final JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        final ByteArrayOutputStream diagnostics = new ByteArrayOutputStream();
        final int compiled = javac.run(null, diagnostics, diagnostics, "--release", "17", "-Xlint:all,-path", "-Werror",
            "-cp", System.getProperty("java.class.path"), "-d", classes.toString(), app.toString());
        assertEquals(0, compiled, "the README's App.java does not compile:\n" + diagnostics);

        final String classPath = classes + java.io.File.pathSeparator + System.getProperty("java.class.path");
        final Result withFlag = java(List.of("--add-exports", "java.base/jdk.internal.misc=ALL-UNNAMED", "-cp",
            classPath, "App", tmp.resolve("data").toString()));
        assertEquals(0, withFlag.exit(), withFlag.output());
        assertEquals("0 BUY 100 XYZ @ 9.99\n", withFlag.output());

        final Result withoutFlag = java(List.of("-cp", classPath, "App", tmp.resolve("data2").toString()));
        assertNotEquals(0, withoutFlag.exit(), withoutFlag.output());
        assertTrue(withoutFlag.output().contains("MissingJvmFlagException") &&
            withoutFlag.output().contains(FLAG), withoutFlag.output());
    }

    @Test
    void theRunCommandGivesTheOneFlag()
    {
        final String run = String.join("\n", block("run"));
        assertTrue(run.contains("java " + FLAG + " -cp "), run);
        assertTrue(!run.contains("--add-opens"), run);
    }

    private record Result(int exit, String output)
    {
    }

    private static Result java(final List<String> arguments) throws Exception
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.addAll(arguments);
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(PATIENCE_MS, TimeUnit.MILLISECONDS), "the program hung: " + output);
        return new Result(process.exitValue(), output);
    }

    private static String first(final Pattern pattern, final String text)
    {
        final Matcher m = pattern.matcher(text);
        assertTrue(m.find(), pattern.pattern());
        return m.group(1);
    }
}
