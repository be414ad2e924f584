package io.tidemark.cli;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/** Input lines for produce: stdin or a file, each line one record, split at an optional key separator. */
final class Lines
{
    private Lines()
    {
    }

    static BufferedReader open(final String input, final InputStream stdin)
    {
        if ("-".equals(input))
        {
            final InputStream unclosable = new java.io.FilterInputStream(stdin)
            {
                @Override
                public void close()
                {
                    // stdin belongs to the process, not to the command
                }
            };
            return new BufferedReader(new InputStreamReader(unclosable, StandardCharsets.UTF_8));
        }
        try
        {
            return Files.newBufferedReader(Path.of(input), StandardCharsets.UTF_8);
        }
        catch (final NoSuchFileException ex)
        {
            throw new CliException(ExitCodes.IO, "no such input file: " + input);
        }
        catch (final IOException ex)
        {
            throw new CliException(ExitCodes.IO, "cannot read " + input + ": " + ex.getMessage(), ex);
        }
    }

    /** @return {key, value}; the key is null without a separator or when the line holds none. */
    static String[] split(final String line, final String separator)
    {
        if (null == separator || separator.isEmpty())
        {
            return new String[] {null, line};
        }
        final int at = line.indexOf(separator);
        return at < 0 ? new String[] {null, line} :
            new String[] {line.substring(0, at), line.substring(at + separator.length())};
    }
}
