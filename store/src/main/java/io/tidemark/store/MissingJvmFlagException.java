package io.tidemark.store;

/**
 * Thrown when the JVM lacks the one flag Tidemark needs, the one Agrona 2 needs for its memory access (as Aeron
 * does): {@code --add-exports java.base/jdk.internal.misc=ALL-UNNAMED}. Without it Agrona's first buffer fails
 * with a bare {@link IllegalAccessError}; {@link #check()} runs before that in {@link Log#open} and
 * {@link io.tidemark.store.inspect.LogInspector#open}, so the failure names the flag and where to put it.
 */
public final class MissingJvmFlagException extends IllegalStateException
{
    private static final long serialVersionUID = 1L;

    /** The package Agrona reads {@code Unsafe} from. */
    private static final String PACKAGE = "jdk.internal.misc";

    private final String flag;

    private MissingJvmFlagException(final String flag)
    {
        super("Tidemark needs the JVM flag " + flag + " (Agrona 2, which Tidemark uses for memory access, reads " +
            "jdk.internal.misc.Unsafe): add it to the java command line before -cp/-jar, to the test JVM's " +
            "arguments (Maven Surefire's argLine), or put 'Add-Exports: java.base/jdk.internal.misc' in the " +
            "manifest of an executable jar. It is the only flag Tidemark needs (never --add-opens).");
        this.flag = flag;
    }

    /** @return the exact flag that is missing, e.g. {@code --add-exports java.base/jdk.internal.misc=ALL-UNNAMED}. */
    public String flag()
    {
        return flag;
    }

    /**
     * Check that {@code java.base} exports {@code jdk.internal.misc} to Agrona's module (the unnamed module on a
     * class path). Loads no Agrona class's static state.
     *
     * @throws MissingJvmFlagException when it does not.
     */
    public static void check()
    {
        final Module agrona = org.agrona.DirectBuffer.class.getModule();
        if (!Object.class.getModule().isExported(PACKAGE, agrona))
        {
            throw new MissingJvmFlagException(
                "--add-exports java.base/" + PACKAGE + "=" + (agrona.isNamed() ? agrona.getName() : "ALL-UNNAMED"));
        }
    }
}
