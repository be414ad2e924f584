package io.tidemark.bench.report;

import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes a tree of {@link Map} (objects, in iteration order), {@link List} (arrays), {@link String},
 * {@link Number}, {@link Boolean} and null as indented JSON. Non-finite numbers (NaN, infinities) are written as
 * null; integral values without a fraction.
 */
public final class JsonWriter
{
    private JsonWriter()
    {
    }

    /**
     * @param value the tree.
     * @return its JSON text, indented by two spaces, ending with a newline.
     */
    public static String write(final Object value)
    {
        final StringBuilder out = new StringBuilder();
        write(out, value, 0);
        return out.append('\n').toString();
    }

    private static void write(final StringBuilder out, final Object value, final int indent)
    {
        if (null == value)
        {
            out.append("null");
        }
        else if (value instanceof String)
        {
            string(out, (String)value);
        }
        else if (value instanceof Boolean)
        {
            out.append(value);
        }
        else if (value instanceof Number)
        {
            number(out, (Number)value);
        }
        else if (value instanceof Map)
        {
            object(out, (Map<?, ?>)value, indent);
        }
        else if (value instanceof List)
        {
            array(out, (List<?>)value, indent);
        }
        else
        {
            string(out, value.toString());
        }
    }

    private static void object(final StringBuilder out, final Map<?, ?> map, final int indent)
    {
        if (map.isEmpty())
        {
            out.append("{}");
            return;
        }
        out.append("{\n");
        final Iterator<? extends Map.Entry<?, ?>> it = map.entrySet().iterator();
        while (it.hasNext())
        {
            final Map.Entry<?, ?> e = it.next();
            pad(out, indent + 1);
            string(out, String.valueOf(e.getKey()));
            out.append(": ");
            write(out, e.getValue(), indent + 1);
            out.append(it.hasNext() ? ",\n" : "\n");
        }
        pad(out, indent);
        out.append('}');
    }

    private static void array(final StringBuilder out, final List<?> list, final int indent)
    {
        if (list.isEmpty())
        {
            out.append("[]");
            return;
        }
        final boolean scalars = list.stream().noneMatch((v) -> v instanceof Map || v instanceof List);
        if (scalars)
        {
            out.append('[');
            for (int i = 0; i < list.size(); i++)
            {
                if (i > 0)
                {
                    out.append(", ");
                }
                write(out, list.get(i), indent);
            }
            out.append(']');
            return;
        }
        out.append("[\n");
        for (int i = 0; i < list.size(); i++)
        {
            pad(out, indent + 1);
            write(out, list.get(i), indent + 1);
            out.append(i + 1 < list.size() ? ",\n" : "\n");
        }
        pad(out, indent);
        out.append(']');
    }

    private static void number(final StringBuilder out, final Number n)
    {
        final double d = n.doubleValue();
        if (Double.isNaN(d) || Double.isInfinite(d))
        {
            out.append("null");
        }
        else if (n instanceof Long || n instanceof Integer || n instanceof Short || n instanceof Byte)
        {
            out.append(n.longValue());
        }
        else if (d == Math.rint(d) && Math.abs(d) < 1e15)
        {
            out.append((long)d);
        }
        else
        {
            out.append(String.format(Locale.ROOT, "%.3f", d));
        }
    }

    private static void string(final StringBuilder out, final String s)
    {
        out.append('"');
        for (int i = 0; i < s.length(); i++)
        {
            final char c = s.charAt(i);
            switch (c)
            {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    if (c < 0x20)
                    {
                        out.append(String.format(Locale.ROOT, "\\u%04x", (int)c));
                    }
                    else
                    {
                        out.append(c);
                    }
            }
        }
        out.append('"');
    }

    private static void pad(final StringBuilder out, final int indent)
    {
        out.append("  ".repeat(indent));
    }
}
