package io.tidemark.store.config;

import io.tidemark.store.ConfigException;

import java.util.Objects;

/**
 * One configuration key, defined once: its name, its type (how a string value is parsed), its default, the values
 * it accepts, and the text that documents it. A {@link ConfigDef} binds keys to the fields of a context class; the
 * key list, the parsing of properties, the validation and the documentation tables all come from these definitions.
 * <p>
 * Immutable: each {@code with...} method returns a new key. A bad value gets a {@link ConfigException} naming the key
 * and what it accepts, e.g. {@code segment.bytes: value 12 is outside [1024, 2147483640]}.
 * <p>
 * Written after Kafka's {@code ConfigDef.ConfigKey} (name, type, default, validator, documentation) and Aeron's
 * {@code Configuration} (one constant, one default, one getter per setting), smaller than either: no importance
 * levels, no groups, no dependents; values live in the context's own typed fields, not in a map.
 *
 * @param <T> the type of the key's values (boxed for primitives).
 */
public final class ConfigKey<T>
{
    /**
     * Turns the text of a property into a value.
     *
     * @param <T> the value type.
     */
    @FunctionalInterface
    public interface Parser<T>
    {
        /**
         * @param text the property's value, trimmed, never null.
         * @return the value.
         * @throws IllegalArgumentException saying what the text should have been (the key is added by the caller).
         */
        T parse(String text);
    }

    /**
     * Checks a value against what the key accepts.
     *
     * @param <T> the value type.
     */
    @FunctionalInterface
    public interface Validator<T>
    {
        /**
         * @param value the value to check (may be null for a key without a value).
         * @return null when the value is accepted, else why not (the key is added by the caller). A validator with
         *         several distinct refusals may instead throw its own {@link ConfigException} naming the key.
         */
        String problem(T value);
    }

    private final String name;
    private final Class<T> type;
    private final T defaultValue;
    private final Parser<T> parser;
    private final Validator<T> validator;
    private final String defaultText;
    private final String doc;
    private final boolean secret;

    private ConfigKey(
        final String name,
        final Class<T> type,
        final T defaultValue,
        final Parser<T> parser,
        final Validator<T> validator,
        final String defaultText,
        final String doc,
        final boolean secret)
    {
        this.name = Objects.requireNonNull(name, "name");
        this.type = Objects.requireNonNull(type, "type");
        this.defaultValue = defaultValue;
        this.parser = Objects.requireNonNull(parser, "parser");
        this.validator = validator;
        this.defaultText = defaultText;
        this.doc = doc;
        this.secret = secret;
    }

    /**
     * A key of any type.
     *
     * @param name         the key as users write it in properties.
     * @param type         the value type.
     * @param defaultValue the value when the key is not set (null: none).
     * @param parser       turns property text into a value.
     * @param <T>          the value type.
     * @return the key, accepting every value its parser makes, undocumented so far.
     */
    public static <T> ConfigKey<T> of(
        final String name, final Class<T> type, final T defaultValue, final Parser<T> parser)
    {
        return new ConfigKey<>(name, type, defaultValue, parser, null, null, null, false);
    }

    /**
     * A 64-bit integer key accepting {@code [min, max]}. Its text may group digits with underscores
     * ({@code 1_048_576}).
     *
     * @param name         the key.
     * @param defaultValue the default.
     * @param min          the smallest accepted value.
     * @param max          the largest accepted value.
     * @return the key.
     */
    public static ConfigKey<Long> ofLong(final String name, final long defaultValue, final long min, final long max)
    {
        return of(name, Long.class, defaultValue, ConfigKey::parseLong).withValidator(range(min, max));
    }

    /**
     * A 32-bit integer key accepting {@code [min, max]}. Text of a value beyond an int's range is refused when it is
     * parsed, never silently wrapped.
     *
     * @param name         the key.
     * @param defaultValue the default.
     * @param min          the smallest accepted value.
     * @param max          the largest accepted value.
     * @return the key.
     */
    public static ConfigKey<Integer> ofInt(final String name, final int defaultValue, final int min, final int max)
    {
        return of(name, Integer.class, defaultValue, (text) ->
        {
            final long value = parseLong(text);
            if (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE)
            {
                throw new IllegalArgumentException("value " + value + " is outside [" + min + ", " + max + "]");
            }
            return (int)value;
        }).withValidator(rangeInt(min, max));
    }

    /**
     * A key of {@code true} or {@code false} (any case).
     *
     * @param name         the key.
     * @param defaultValue the default, or null when it is decided later from other keys.
     * @return the key.
     */
    public static ConfigKey<Boolean> ofBoolean(final String name, final Boolean defaultValue)
    {
        return of(name, Boolean.class, defaultValue, ConfigKey::parseBoolean);
    }

    /**
     * A text key, taken as written (trimmed).
     *
     * @param name         the key.
     * @param defaultValue the default, or null for none.
     * @return the key.
     */
    public static ConfigKey<String> ofString(final String name, final String defaultValue)
    {
        return of(name, String.class, defaultValue, (text) -> text);
    }

    /**
     * @param min the smallest accepted value.
     * @param max the largest accepted value.
     * @return a validator of {@code [min, max]} whose refusal reads {@code value V is outside [min, max]}.
     */
    public static Validator<Long> range(final long min, final long max)
    {
        return (value) -> value < min || value > max ? "value " + value + " is outside [" + min + ", " + max + "]" : null;
    }

    private static Validator<Integer> rangeInt(final long min, final long max)
    {
        final Validator<Long> range = range(min, max);
        return (value) -> range.problem(value.longValue());
    }

    /**
     * @param min the smallest accepted power of two.
     * @return a validator of powers of two of at least {@code min}.
     */
    public static Validator<Integer> powerOfTwo(final int min)
    {
        return (value) -> value < min || Integer.bitCount(value) != 1 ?
            "value " + value + " must be a power of two, at least " + min : null;
    }

    /**
     * @param validator what the key accepts (replacing the one it had).
     * @return a copy of this key with that validator.
     */
    public ConfigKey<T> withValidator(final Validator<T> validator)
    {
        return new ConfigKey<>(name, type, defaultValue, parser, validator, defaultText, doc, secret);
    }

    /**
     * @param special a value accepted besides those the validator accepts, e.g. -1 for "no limit".
     * @return a copy of this key that also accepts {@code special}.
     */
    public ConfigKey<T> orSpecial(final T special)
    {
        final Validator<T> inner = validator;
        return withValidator((value) -> Objects.equals(special, value) || null == inner ? null : inner.problem(value));
    }

    /**
     * @param defaultText how the documentation shows the default, when its plain value is not enough (e.g.
     *                    {@code 1073741824 (1 GiB)}, {@code required}).
     * @return a copy of this key with that text.
     */
    public ConfigKey<T> withDefaultText(final String defaultText)
    {
        return new ConfigKey<>(name, type, defaultValue, parser, validator, defaultText, doc, secret);
    }

    /**
     * @param doc what the key does, as one Markdown paragraph: the text of the key's row in the docs' configuration
     *            tables (docs-check compares them).
     * @return a copy of this key with that documentation.
     */
    public ConfigKey<T> withDoc(final String doc)
    {
        return new ConfigKey<>(name, type, defaultValue, parser, validator, defaultText, doc, secret);
    }

    /**
     * @return a copy of this key whose values are never shown (passwords): {@link ConfigDef#describe} prints
     *         {@code [hidden]}.
     */
    public ConfigKey<T> asSecret()
    {
        return new ConfigKey<>(name, type, defaultValue, parser, validator, defaultText, doc, true);
    }

    /** @return the key as users write it. */
    public String name()
    {
        return name;
    }

    /** @return the value type. */
    public Class<T> type()
    {
        return type;
    }

    /** @return the default value, or null when the key has none. */
    public T defaultValue()
    {
        return defaultValue;
    }

    /** @return how the documentation shows the default: the given text, else the plain default value. */
    public String defaultText()
    {
        return null != defaultText ? defaultText : String.valueOf(defaultValue);
    }

    /** @return the documentation text, or null when none was given. */
    public String doc()
    {
        return doc;
    }

    /** @return whether the key's values must never be shown. */
    public boolean secret()
    {
        return secret;
    }

    /**
     * @param text the property's value (null is taken as empty; surrounding white space is ignored).
     * @return the parsed value, not yet {@link #validate validated} (a context validates every value at once when it
     *         is concluded, whether it came from a property or a setter).
     * @throws ConfigException naming this key when the text is malformed.
     */
    public T parse(final String text)
    {
        final String trimmed = null == text ? "" : text.trim();
        final T value;
        try
        {
            value = parser.parse(trimmed);
        }
        catch (final ConfigException ex)
        {
            throw ex;
        }
        catch (final IllegalArgumentException ex)
        {
            throw new ConfigException(name, null != ex.getMessage() ? ex.getMessage() : "bad value '" + trimmed + "'");
        }
        return value;
    }

    /**
     * @param value a value of this key, however it was set (a setter, a property).
     * @return the value.
     * @throws ConfigException naming this key and what it accepts when the value is not accepted.
     */
    public T validate(final T value)
    {
        if (null != validator)
        {
            final String problem = validator.problem(value);
            if (null != problem)
            {
                throw new ConfigException(name, problem);
            }
        }
        return value;
    }

    private static Long parseLong(final String text)
    {
        try
        {
            return Long.parseLong(text.replace("_", ""));
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("not an integer: '" + text + "'", ex);
        }
    }

    private static Boolean parseBoolean(final String text)
    {
        if ("true".equalsIgnoreCase(text))
        {
            return Boolean.TRUE;
        }
        if ("false".equalsIgnoreCase(text))
        {
            return Boolean.FALSE;
        }
        throw new IllegalArgumentException("not a boolean (true/false): '" + text + "'");
    }

    @Override
    public String toString()
    {
        return name;
    }
}
