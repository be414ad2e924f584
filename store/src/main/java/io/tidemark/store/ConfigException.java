package io.tidemark.store;

/**
 * A configuration value is missing, malformed or out of range. The message and {@link #key()} name the
 * offending key, so a wrong setting fails fast at open time rather than deep inside an append.
 */
public class ConfigException extends IllegalArgumentException
{
    private static final long serialVersionUID = 1L;

    private final String key;

    /**
     * @param key     the configuration key at fault.
     * @param message what is wrong with its value.
     */
    public ConfigException(final String key, final String message)
    {
        super(key + ": " + message);
        this.key = key;
    }

    /**
     * @return the configuration key at fault.
     */
    public String key()
    {
        return key;
    }
}
