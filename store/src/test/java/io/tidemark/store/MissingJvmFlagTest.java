package io.tidemark.store;

import io.tidemark.store.inspect.LogInspector;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A JVM started without the one flag: opening a log names the flag instead of Agrona's bare IllegalAccessError. */
class MissingJvmFlagTest
{
    @TempDir
    Path tmp;

    /** Runs in a child JVM started without the flag: opens a log (or an inspector) and prints what happened. */
    public static final class Child
    {
        public static void main(final String[] args)
        {
            try
            {
                if (args[0].equals("inspect"))
                {
                    LogInspector.open(Path.of(args[1]));
                }
                else
                {
                    Log.open(new LogContext().logDir(Path.of(args[1]))).close();
                }
                System.out.println("OPENED");
            }
            catch (final MissingJvmFlagException ex)
            {
                System.out.println("FLAG " + ex.flag());
                System.out.println("MESSAGE " + ex.getMessage());
            }
        }
    }

    @Test
    void openWithoutTheFlagNamesIt() throws Exception
    {
        final String out = runChild(List.of(), "open", tmp.resolve("log").toString());
        assertTrue(out.contains("FLAG --add-exports java.base/jdk.internal.misc=ALL-UNNAMED\n"), out);
        assertTrue(out.contains("Add-Exports: java.base/jdk.internal.misc"), out);
    }

    @Test
    void inspectWithoutTheFlagNamesIt() throws Exception
    {
        final String out = runChild(List.of(), "inspect", tmp.toString());
        assertTrue(out.contains("FLAG --add-exports java.base/jdk.internal.misc=ALL-UNNAMED\n"), out);
    }

    @Test
    void openWithTheFlagWorks() throws Exception
    {
        final String out = runChild(List.of(CrashProcess.JVM_FLAG_EXPORTS, CrashProcess.JVM_FLAG_VALUE), "open",
            tmp.resolve("log").toString());
        assertEquals("OPENED\n", out);
    }

    private static String runChild(final List<String> flags, final String... args) throws Exception
    {
        final List<String> command = new java.util.ArrayList<>();
        command.add(CrashProcess.javaBinary());
        command.addAll(flags);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(Child.class.getName());
        command.addAll(List.of(args));
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String out = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(CrashProcess.PATIENCE_MS, TimeUnit.MILLISECONDS), "child hung");
        assertEquals(0, process.exitValue(), out);
        return out;
    }
}
