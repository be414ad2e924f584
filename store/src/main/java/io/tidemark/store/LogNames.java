package io.tidemark.store;

import java.nio.file.Path;

/**
 * Validation of log (topic/partition) names, so that a name taken from configuration or a client can never
 * escape the root directory it is resolved against.
 */
public final class LogNames
{
    /** Longest accepted name. */
    public static final int MAX_LENGTH = 249;

    private LogNames()
    {
    }

    /**
     * @param name a candidate log name.
     * @throws IllegalArgumentException unless the name is 1..249 characters of {@code [A-Za-z0-9._-]} and not
     *                                  {@code "."} or {@code ".."}.
     */
    public static void validate(final String name)
    {
        if (null == name || name.isEmpty())
        {
            throw new IllegalArgumentException("log name must not be empty");
        }
        if (name.length() > MAX_LENGTH)
        {
            throw new IllegalArgumentException("log name longer than " + MAX_LENGTH + " characters: " + name);
        }
        if (".".equals(name) || "..".equals(name))
        {
            throw new IllegalArgumentException("log name must not be '.' or '..'");
        }
        for (int i = 0; i < name.length(); i++)
        {
            final char c = name.charAt(i);
            final boolean legal = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                c == '.' || c == '_' || c == '-';
            if (!legal)
            {
                throw new IllegalArgumentException(
                    "log name may only contain [A-Za-z0-9._-], found '" + c + "' in: " + name);
            }
        }
    }

    /**
     * @param root directory holding logs.
     * @param name log name, validated.
     * @return the log's directory under {@code root}.
     */
    public static Path resolve(final Path root, final String name)
    {
        validate(name);
        final Path resolved = root.resolve(name).normalize();
        if (!resolved.getParent().equals(root.normalize()))
        {
            throw new IllegalArgumentException("log name resolves outside " + root + ": " + name);
        }
        return resolved;
    }
}
