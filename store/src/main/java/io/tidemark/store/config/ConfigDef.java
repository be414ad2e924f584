package io.tidemark.store.config;

import io.tidemark.store.ConfigException;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.BiConsumer;
import java.util.function.Function;

/**
 * The configuration keys of one context class, each bound to the context's field through a getter and a setter:
 * the one place from which the class's key list, its parsing of properties, its validation, its
 * {@code toString} and its documentation table are made.
 * <p>
 * A context declares its definition once, as a static constant, in the order its documentation table lists the keys:
 * <pre>{@code
 * public static final ConfigDef<LogContext> CONFIG = new ConfigDef<LogContext>()
 *     .define(ConfigKey.ofLong(SEGMENT_BYTES, 1L << 30, 1024, MAX).withDoc("..."), (c) -> c.segmentBytes,
 *         LogContext::segmentBytes)
 *     ...;
 * // and, for callers that want the names only: KEYS = CONFIG.names()
 * }</pre>
 * Checks that relate two keys (a value bounded by another key's value) stay in the context's {@code conclude()},
 * after {@link #validate}. Immutable once built; building is not thread-safe (do it in a static initialiser).
 *
 * @param <C> the context class.
 */
public final class ConfigDef<C>
{
    private record Binding<C, T>(ConfigKey<T> key, Function<C, T> getter, BiConsumer<C, T> setter)
    {
        void parseInto(final C context, final String text)
        {
            setter.accept(context, key.parse(text));
        }

        void setDefault(final C context)
        {
            if (null != key.defaultValue())
            {
                setter.accept(context, key.defaultValue());
            }
        }

        void validate(final C context)
        {
            key.validate(getter.apply(context));
        }

        String show(final C context)
        {
            return key.secret() ? "[hidden]" : String.valueOf(getter.apply(context));
        }
    }

    private final Map<String, Binding<C, ?>> bindings = new LinkedHashMap<>();

    /**
     * @param key    the key.
     * @param getter reads the context's current value (its field as set, before any narrowing or derivation).
     * @param setter sets the value, as the context's public setter does.
     * @param <T>    the key's value type.
     * @return this definition.
     * @throws IllegalArgumentException when a key of that name is defined already.
     */
    public <T> ConfigDef<C> define(final ConfigKey<T> key, final Function<C, T> getter, final BiConsumer<C, T> setter)
    {
        if (null != bindings.putIfAbsent(key.name(), new Binding<>(key, getter, setter)))
        {
            throw new IllegalArgumentException("key defined twice: " + key.name());
        }
        return this;
    }

    /**
     * Set every key that has a default to it, through the context's setters: a context's constructor calls it, so
     * that its defaults are written nowhere else.
     *
     * @param context a new context.
     * @return the context.
     */
    public C setDefaults(final C context)
    {
        for (final Binding<C, ?> binding : bindings.values())
        {
            binding.setDefault(context);
        }
        return context;
    }

    /** @return the names of the keys, in the order they were defined; unmodifiable. */
    public Set<String> names()
    {
        return Collections.unmodifiableSet(new LinkedHashSet<>(bindings.keySet()));
    }

    /** @return the keys, in the order they were defined; unmodifiable. */
    public List<ConfigKey<?>> keys()
    {
        final List<ConfigKey<?>> keys = new ArrayList<>(bindings.size());
        bindings.values().forEach((b) -> keys.add(b.key()));
        return Collections.unmodifiableList(keys);
    }

    /**
     * @param name a key's name.
     * @return whether this definition has that key.
     */
    public boolean contains(final String name)
    {
        return bindings.containsKey(name);
    }

    /**
     * Parse one property and set it on the context.
     *
     * @param context the context to set.
     * @param name    the key.
     * @param text    its value as written.
     * @throws ConfigException naming the key when it is unknown or its text is malformed.
     */
    public void set(final C context, final String name, final String text)
    {
        final Binding<C, ?> binding = bindings.get(name);
        if (null == binding)
        {
            throw new ConfigException(name, "unknown configuration key; known keys are " + names());
        }
        binding.parseInto(context, text);
    }

    /**
     * Parse every property and set it on the context; unknown keys are refused (a typo must not silently fall back
     * to a default).
     *
     * @param context    the context to set.
     * @param properties key/value pairs.
     * @return the context.
     * @throws ConfigException naming the first key that is unknown or whose text is malformed.
     */
    public C setAll(final C context, final Map<String, String> properties)
    {
        for (final Map.Entry<String, String> e : properties.entrySet())
        {
            set(context, e.getKey(), e.getValue());
        }
        return context;
    }

    /**
     * Check every key's current value against what the key accepts.
     *
     * @param context the context to check.
     * @throws ConfigException naming the first key (in definition order) whose value is not accepted.
     */
    public void validate(final C context)
    {
        for (final Binding<C, ?> binding : bindings.values())
        {
            binding.validate(context);
        }
    }

    /**
     * @param context the context to show.
     * @return {@code key=value} for every key, comma separated, secrets hidden: for {@code toString}.
     */
    public String describe(final C context)
    {
        final StringBuilder sb = new StringBuilder();
        for (final Binding<C, ?> binding : bindings.values())
        {
            if (sb.length() > 0)
            {
                sb.append(", ");
            }
            sb.append(binding.key().name()).append('=').append(binding.show(context));
        }
        return sb.toString();
    }

    /**
     * @return the documentation table of these keys in Markdown: a header row ({@code Key | Default | Meaning}),
     *         then one row per key in definition order. The docs' configuration tables must equal it (docs-check).
     */
    public List<String> markdownTable()
    {
        final List<String> rows = new ArrayList<>(bindings.size() + 2);
        rows.add("| Key | Default | Meaning |");
        rows.add("|---|---|---|");
        for (final Binding<C, ?> binding : bindings.values())
        {
            final ConfigKey<?> key = binding.key();
            rows.add("| `" + key.name() + "` | " + key.defaultText() + " | " + (null == key.doc() ? "" : key.doc()) + " |");
        }
        return rows;
    }
}
