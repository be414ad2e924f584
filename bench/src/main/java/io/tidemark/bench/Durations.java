package io.tidemark.bench;

import picocli.CommandLine;

import java.util.Locale;

/**
 * Reads the durations of the bench commands' options: {@code 500ms}, {@code 2s}, {@code 1.5s}, {@code 1m}, or plain
 * milliseconds; to milliseconds. Stateless: thread-safe.
 */
public final class Durations implements CommandLine.ITypeConverter<Long>
{
    @Override
    public Long convert(final String value)
    {
        final String v = value.trim().toLowerCase(Locale.ROOT);
        try
        {
            if (v.endsWith("ms"))
            {
                return Math.round(Double.parseDouble(v.substring(0, v.length() - 2)));
            }
            if (v.endsWith("s"))
            {
                return Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 1_000);
            }
            if (v.endsWith("m"))
            {
                return Math.round(Double.parseDouble(v.substring(0, v.length() - 1)) * 60_000);
            }
            return Long.parseLong(v);
        }
        catch (final NumberFormatException ex)
        {
            throw new CommandLine.TypeConversionException("not a duration (e.g. 500ms, 2s, 1m): " + value);
        }
    }
}
