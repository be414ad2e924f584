package io.tidemark.bench.report;

import com.fasterxml.jackson.core.JsonGenerator;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamWriteFeature;
import com.fasterxml.jackson.core.json.JsonReadFeature;
import com.fasterxml.jackson.core.util.DefaultIndenter;
import com.fasterxml.jackson.core.util.DefaultPrettyPrinter;
import com.fasterxml.jackson.core.util.Separators;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.ObjectWriter;
import com.fasterxml.jackson.databind.SerializerProvider;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.module.SimpleModule;
import com.fasterxml.jackson.databind.ser.std.StdSerializer;

import java.io.IOException;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The bench's JSON, read and written with Jackson: the summaries every mode writes ({@code summary.json}) and JMH's
 * result files. Reading gives plain trees: objects as {@link java.util.LinkedHashMap}s (key order kept), arrays as
 * lists, numbers as {@link Number}s, and strings, booleans and null themselves; {@link #number}, {@link #object} and
 * {@link #array} take them apart without casts. Writing takes the same kind of tree (maps in iteration order, lists,
 * strings, numbers, booleans, null; anything else as its {@code toString()}), indented by two spaces, with the
 * summaries' number rule: a non-finite number (NaN, an infinity) is null, an integral value has no fraction, and
 * any other floating-point value has three decimals (BigDecimal and BigInteger as they are). JMH writes a
 * non-finite score as the string {@code "NaN"}; {@link #number} reads it back as {@link Double#NaN}.
 * <p>
 * Thread-safe: Jackson's mapper and writer are, once configured.
 */
public final class Json
{
    private static final ObjectMapper MAPPER = JsonMapper.builder()
        .enable(JsonReadFeature.ALLOW_NON_NUMERIC_NUMBERS)
        .enable(DeserializationFeature.FAIL_ON_TRAILING_TOKENS)
        .addModule(new SimpleModule("tidemark-bench-numbers")
            .addSerializer(Double.class, new Decimal<>(Double.class))
            .addSerializer(double.class, new Decimal<>(Double.class))
            .addSerializer(Float.class, new Decimal<>(Float.class))
            .addSerializer(float.class, new Decimal<>(Float.class)))
        .enable(StreamWriteFeature.WRITE_BIGDECIMAL_AS_PLAIN)
        .build();
    private static final ObjectWriter WRITER = MAPPER.writer(new DefaultPrettyPrinter()
        .withSeparators(Separators.createDefaultInstance()
            .withObjectFieldValueSpacing(Separators.Spacing.AFTER)
            .withObjectEmptySeparator("")
            .withArrayEmptySeparator(""))
        .withObjectIndenter(new DefaultIndenter("  ", "\n"))
        .withArrayIndenter(new DefaultIndenter("  ", "\n")));

    private Json()
    {
    }

    /**
     * @param text a JSON document.
     * @return its value.
     * @throws IllegalArgumentException when the text is not JSON.
     */
    public static Object parse(final String text)
    {
        try
        {
            return MAPPER.readValue(text, Object.class);
        }
        catch (final JsonProcessingException ex)
        {
            throw new IllegalArgumentException("not JSON: " + ex.getOriginalMessage(), ex);
        }
    }

    /**
     * @param value a tree of maps, lists, strings, numbers, booleans and null.
     * @return its JSON text, indented by two spaces, ending with a newline.
     */
    public static String write(final Object value)
    {
        try
        {
            return WRITER.writeValueAsString(plain(value)) + "\n";
        }
        catch (final JsonProcessingException ex)
        {
            throw new IllegalArgumentException("cannot write as JSON: " + ex.getOriginalMessage(), ex);
        }
    }

    /**
     * @param value a parsed number, or a string such as JMH's {@code "NaN"}, or null.
     * @return the number, or NaN when absent or not numeric.
     */
    public static double number(final Object value)
    {
        if (value instanceof Number)
        {
            return ((Number)value).doubleValue();
        }
        if (value instanceof String)
        {
            try
            {
                return Double.parseDouble((String)value);
            }
            catch (final NumberFormatException ex)
            {
                return Double.NaN;
            }
        }
        return Double.NaN;
    }

    /**
     * @param value a parsed value.
     * @return it as an object (map), or an empty map when it is not one.
     */
    @SuppressWarnings("unchecked")
    public static Map<String, Object> object(final Object value)
    {
        return value instanceof Map ? (Map<String, Object>)value : Map.of();
    }

    /**
     * @param value a parsed value.
     * @return it as an array (list), or an empty list when it is not one.
     */
    @SuppressWarnings("unchecked")
    public static List<Object> array(final Object value)
    {
        return value instanceof List ? (List<Object>)value : List.of();
    }

    /** @return the tree with map keys as strings and anything but a map, list, string, number or boolean as text. */
    private static Object plain(final Object value)
    {
        if (value instanceof Map<?, ?> map)
        {
            final Map<String, Object> copy = new LinkedHashMap<>();
            map.forEach((k, v) -> copy.put(String.valueOf(k), plain(v)));
            return copy;
        }
        if (value instanceof List<?> list)
        {
            final List<Object> copy = new ArrayList<>(list.size());
            list.forEach((v) -> copy.add(plain(v)));
            return copy;
        }
        return null == value || value instanceof String || value instanceof Number || value instanceof Boolean ?
            value : value.toString();
    }

    /** A floating-point number as the summaries write it: null, integral, or three decimals. */
    private static final class Decimal<T extends Number> extends StdSerializer<T>
    {
        private static final long serialVersionUID = 1L;

        Decimal(final Class<T> type)
        {
            super(type);
        }

        @Override
        public void serialize(final T value, final JsonGenerator out, final SerializerProvider provider)
            throws IOException
        {
            final double d = value.doubleValue();
            if (Double.isNaN(d) || Double.isInfinite(d))
            {
                out.writeNull();
            }
            else if (d == Math.rint(d) && Math.abs(d) < 1e15)
            {
                out.writeNumber((long)d);
            }
            else
            {
                out.writeNumber(BigDecimal.valueOf(d).setScale(3, RoundingMode.HALF_UP));
            }
        }
    }
}
