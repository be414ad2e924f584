package io.tidemark.bench;

import java.util.List;

/**
 * The one JVM flag Tidemark needs (the one Agrona 2 needs): {@code --add-exports
 * java.base/jdk.internal.misc=ALL-UNNAMED}. The shaded jar's manifest carries it as {@code Add-Exports} for
 * {@code java -jar}; forked JMH JVMs are not started with {@code -jar}, so they get it through
 * {@code jvmArgsAppend}. A JVM that runs Tidemark never gets {@code --add-opens}.
 * <p>
 * The one exception is the JVM of the Chronicle Queue peer, which runs Chronicle Queue and nothing of Tidemark:
 * Chronicle maps its files by deep reflection into {@code sun.nio.ch} and, on Java 17+, fails without the flags its
 * vendor documents for Java 17 ({@link #CHRONICLE_QUEUE_JVM_ARGS}). The peer comparison gives it those flags, so that
 * it is measured as its users run it; {@code --chronicle-strict} runs it with Tidemark's one flag instead.
 */
public final class JvmFlags
{
    /** The option, as its own argument. */
    public static final String ADD_EXPORTS = "--add-exports";
    /** The export it takes. */
    public static final String MISC_TO_UNNAMED = "java.base/jdk.internal.misc=ALL-UNNAMED";
    /** Both, as two arguments of a JVM command line. */
    public static final List<String> FORKED_JVM_ARGS = List.of(ADD_EXPORTS, MISC_TO_UNNAMED);

    /**
     * What Chronicle's documentation for Java 17 asks its users to pass (the exports and opens of "Chronicle support
     * for Java 17"), plus {@code sun.nio.ch} opened for its memory mapping. Only ever given to the forked JVM of the
     * Chronicle Queue peer, beside {@link #FORKED_JVM_ARGS}.
     */
    public static final List<String> CHRONICLE_QUEUE_JVM_ARGS = List.of(
        "--add-exports=java.base/jdk.internal.ref=ALL-UNNAMED",
        "--add-exports=java.base/sun.nio.ch=ALL-UNNAMED",
        "--add-exports=jdk.unsupported/sun.misc=ALL-UNNAMED",
        "--add-exports=jdk.compiler/com.sun.tools.javac.file=ALL-UNNAMED",
        "--add-opens=jdk.compiler/com.sun.tools.javac=ALL-UNNAMED",
        "--add-opens=java.base/java.lang=ALL-UNNAMED",
        "--add-opens=java.base/java.lang.reflect=ALL-UNNAMED",
        "--add-opens=java.base/java.io=ALL-UNNAMED",
        "--add-opens=java.base/java.util=ALL-UNNAMED",
        "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED");

    private JvmFlags()
    {
    }
}
