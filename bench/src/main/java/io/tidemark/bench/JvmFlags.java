package io.tidemark.bench;

import java.util.List;

/**
 * The one JVM flag Tidemark needs (the one Agrona 2 needs): {@code --add-exports
 * java.base/jdk.internal.misc=ALL-UNNAMED}. The shaded jar's manifest carries it as {@code Add-Exports} for
 * {@code java -jar}; forked JMH JVMs are not started with {@code -jar}, so they get it through
 * {@code jvmArgsAppend}. Never add-opens.
 */
public final class JvmFlags
{
    /** The option, as its own argument. */
    public static final String ADD_EXPORTS = "--add-exports";
    /** The export it takes. */
    public static final String MISC_TO_UNNAMED = "java.base/jdk.internal.misc=ALL-UNNAMED";
    /** Both, as two arguments of a JVM command line. */
    public static final List<String> FORKED_JVM_ARGS = List.of(ADD_EXPORTS, MISC_TO_UNNAMED);

    private JvmFlags()
    {
    }
}
