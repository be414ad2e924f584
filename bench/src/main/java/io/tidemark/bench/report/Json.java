package io.tidemark.bench.report;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A small JSON reader, enough for JMH's result files: objects become {@link LinkedHashMap}s (key order kept),
 * arrays {@link ArrayList}s, numbers {@link Double}s, and strings, booleans and null themselves. JMH writes a
 * non-finite score as the string {@code "NaN"}; {@link #number} reads it back as {@link Double#NaN}.
 */
public final class Json
{
    private final String text;
    private int at;

    private Json(final String text)
    {
        this.text = text;
    }

    /**
     * @param text a JSON document.
     * @return its value.
     * @throws IllegalArgumentException when the text is not JSON.
     */
    public static Object parse(final String text)
    {
        final Json json = new Json(text);
        final Object value = json.value();
        json.skipWhitespace();
        if (json.at != text.length())
        {
            throw json.error("trailing characters");
        }
        return value;
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

    private Object value()
    {
        skipWhitespace();
        if (at >= text.length())
        {
            throw error("unexpected end");
        }
        final char c = text.charAt(at);
        switch (c)
        {
            case '{': return parseObject();
            case '[': return parseArray();
            case '"': return parseString();
            case 't': return literal("true", Boolean.TRUE);
            case 'f': return literal("false", Boolean.FALSE);
            case 'n': return literal("null", null);
            default:
                if (c == '-' || (c >= '0' && c <= '9'))
                {
                    return parseNumber();
                }
                throw error("unexpected character '" + c + "'");
        }
    }

    private Map<String, Object> parseObject()
    {
        final Map<String, Object> map = new LinkedHashMap<>();
        at++;
        skipWhitespace();
        if (peek() == '}')
        {
            at++;
            return map;
        }
        while (true)
        {
            skipWhitespace();
            if (peek() != '"')
            {
                throw error("expected a key");
            }
            final String key = parseString();
            skipWhitespace();
            expect(':');
            map.put(key, value());
            skipWhitespace();
            final char c = next();
            if (c == '}')
            {
                return map;
            }
            if (c != ',')
            {
                throw error("expected ',' or '}'");
            }
        }
    }

    private List<Object> parseArray()
    {
        final List<Object> list = new ArrayList<>();
        at++;
        skipWhitespace();
        if (peek() == ']')
        {
            at++;
            return list;
        }
        while (true)
        {
            list.add(value());
            skipWhitespace();
            final char c = next();
            if (c == ']')
            {
                return list;
            }
            if (c != ',')
            {
                throw error("expected ',' or ']'");
            }
        }
    }

    private String parseString()
    {
        expect('"');
        final StringBuilder sb = new StringBuilder();
        while (true)
        {
            final char c = next();
            if (c == '"')
            {
                return sb.toString();
            }
            if (c != '\\')
            {
                sb.append(c);
                continue;
            }
            final char escaped = next();
            switch (escaped)
            {
                case '"': sb.append('"'); break;
                case '\\': sb.append('\\'); break;
                case '/': sb.append('/'); break;
                case 'b': sb.append('\b'); break;
                case 'f': sb.append('\f'); break;
                case 'n': sb.append('\n'); break;
                case 'r': sb.append('\r'); break;
                case 't': sb.append('\t'); break;
                case 'u':
                    if (at + 4 > text.length())
                    {
                        throw error("short unicode escape");
                    }
                    try
                    {
                        sb.append((char)Integer.parseInt(text.substring(at, at + 4), 16));
                    }
                    catch (final NumberFormatException ex)
                    {
                        throw error("bad unicode escape");
                    }
                    at += 4;
                    break;
                default: throw error("bad escape '\\" + escaped + "'");
            }
        }
    }

    private Double parseNumber()
    {
        final int start = at;
        while (at < text.length() && "+-0123456789.eE".indexOf(text.charAt(at)) >= 0)
        {
            at++;
        }
        try
        {
            return Double.valueOf(text.substring(start, at));
        }
        catch (final NumberFormatException ex)
        {
            at = start;
            throw error("bad number");
        }
    }

    private Object literal(final String word, final Object value)
    {
        if (!text.startsWith(word, at))
        {
            throw error("expected " + word);
        }
        at += word.length();
        return value;
    }

    private void skipWhitespace()
    {
        while (at < text.length() && Character.isWhitespace(text.charAt(at)))
        {
            at++;
        }
    }

    private char peek()
    {
        if (at >= text.length())
        {
            throw error("unexpected end");
        }
        return text.charAt(at);
    }

    private char next()
    {
        final char c = peek();
        at++;
        return c;
    }

    private void expect(final char c)
    {
        if (next() != c)
        {
            at--;
            throw error("expected '" + c + "'");
        }
    }

    private IllegalArgumentException error(final String what)
    {
        return new IllegalArgumentException("invalid JSON at character " + at + ": " + what);
    }
}
