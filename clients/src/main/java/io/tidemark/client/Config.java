package io.tidemark.client;

import io.tidemark.store.ConfigException;

/** Parsing and range checks shared by the client contexts; every failure names its key. Stateless. */
final class Config
{
    private Config()
    {
    }

    static long parseLong(final String key, final String value)
    {
        try
        {
            return Long.parseLong(value.replace("_", ""));
        }
        catch (final NumberFormatException ex)
        {
            throw new ConfigException(key, "not an integer: '" + value + "'");
        }
    }

    static boolean parseBoolean(final String key, final String value)
    {
        if ("true".equalsIgnoreCase(value) || "false".equalsIgnoreCase(value))
        {
            return Boolean.parseBoolean(value);
        }
        throw new ConfigException(key, "not a boolean (true/false): '" + value + "'");
    }

    static void range(final String key, final long value, final long min, final long max)
    {
        if (value < min || value > max)
        {
            throw new ConfigException(key, "value " + value + " is outside [" + min + ", " + max + "]");
        }
    }
}
