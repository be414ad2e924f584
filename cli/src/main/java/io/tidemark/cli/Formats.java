package io.tidemark.cli;

import io.tidemark.store.RecordView;
import org.agrona.DirectBuffer;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CharsetDecoder;
import java.nio.charset.CoderResult;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.time.format.DateTimeParseException;

/** Rendering of timestamps, keys and values for people and scripts. */
final class Formats
{
    private Formats()
    {
    }

    /** @return an epoch-millis timestamp as ISO-8601 (UTC), or the raw number when it is not a time. */
    static String timestamp(final long epochMs)
    {
        if (epochMs < 0)
        {
            return Long.toString(epochMs);
        }
        return Instant.ofEpochMilli(epochMs).toString();
    }

    /**
     * @param text epoch millis, or an ISO-8601 instant ({@code 2026-11-29T12:00:00Z}).
     * @return epoch millis.
     * @throws IllegalArgumentException when it is neither.
     */
    static long parseTimestamp(final String text)
    {
        try
        {
            return Long.parseLong(text.trim());
        }
        catch (final NumberFormatException notANumber)
        {
            try
            {
                return Instant.parse(text.trim()).toEpochMilli();
            }
            catch (final DateTimeParseException ex)
            {
                throw new IllegalArgumentException("not a timestamp (epoch millis or ISO-8601 like " +
                    "2026-11-29T12:00:00Z): '" + text + "'");
            }
        }
    }

    /** @return the bytes as UTF-8 text, or null when they are not valid UTF-8. */
    static String utf8(final DirectBuffer buffer, final int offset, final int length)
    {
        final byte[] bytes = new byte[length];
        buffer.getBytes(offset, bytes);
        try
        {
            return StandardCharsets.UTF_8.newDecoder()
                .onMalformedInput(CodingErrorAction.REPORT)
                .onUnmappableCharacter(CodingErrorAction.REPORT)
                .decode(ByteBuffer.wrap(bytes)).toString();
        }
        catch (final CharacterCodingException ex)
        {
            return null;
        }
    }

    /**
     * @return the bytes as text that is safe on a terminal and keeps one record on one line, or null for null
     *         ({@code length < 0}): valid UTF-8 as it is, except {@code \\}, {@code \n}, {@code \r},
     *         {@code \t}, other control and format characters as {@code \\uXXXX} (no terminal escape
     *         sequence gets through), and bytes that are not UTF-8 as {@code \\xNN}.
     */
    static String escaped(final DirectBuffer buffer, final int offset, final int length)
    {
        if (length < 0)
        {
            return null;
        }
        final byte[] bytes = new byte[length];
        buffer.getBytes(offset, bytes);
        final StringBuilder out = new StringBuilder(length + 16);
        final CharsetDecoder decoder = StandardCharsets.UTF_8.newDecoder()
            .onMalformedInput(CodingErrorAction.REPORT)
            .onUnmappableCharacter(CodingErrorAction.REPORT);
        final ByteBuffer in = ByteBuffer.wrap(bytes);
        final CharBuffer chars = CharBuffer.allocate(Math.max(16, length));
        while (true)
        {
            final CoderResult result = decoder.decode(in, chars, true);
            chars.flip();
            appendEscaped(chars, out, false);
            chars.clear();
            if (result.isError())
            {
                for (int i = 0; i < result.length(); i++)
                {
                    out.append(String.format("\\x%02x", in.get() & 0xFF));
                }
            }
            else if (!result.isOverflow())
            {
                break;
            }
        }
        return out.toString();
    }

    /** Appends {@code text}, escaping what could break a line or drive a terminal (and quotes when quoted). */
    private static void appendEscaped(final CharSequence text, final StringBuilder out, final boolean quoted)
    {
        for (int i = 0; i < text.length(); i++)
        {
            final char c = text.charAt(i);
            switch (c)
            {
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                case '"':
                    out.append(quoted ? "\\\"" : "\"");
                    break;
                default:
                    if (unsafe(c))
                    {
                        out.append(String.format("\\u%04x", (int)c));
                    }
                    else
                    {
                        out.append(c);
                    }
            }
        }
    }

    /** @return whether {@code c} is a control or format character (C0, DEL, C1, bidi overrides, separators). */
    private static boolean unsafe(final char c)
    {
        if (Character.isISOControl(c))
        {
            return true;
        }
        final int type = Character.getType(c);
        return type == Character.FORMAT || type == Character.LINE_SEPARATOR ||
            type == Character.PARAGRAPH_SEPARATOR;
    }

    /**
     * @return bytes for a person: {@code null}, a quoted and escaped UTF-8 string, or {@code 0x} hex when they are
     *         not text; cut to {@code maxBytes} with the number of bytes left out.
     */
    static String display(final DirectBuffer buffer, final int offset, final int length, final int maxBytes)
    {
        if (length < 0)
        {
            return "null";
        }
        final int shown = Math.min(length, Math.max(0, maxBytes));
        final String more = shown < length ? "...(+" + (length - shown) + " bytes)" : "";
        String text = utf8(buffer, offset, shown);
        if (null == text && shown < length)
        {
            // the cut may have split a character: try a few bytes shorter
            for (int cut = 1; cut < 4 && null == text && shown - cut >= 0; cut++)
            {
                text = utf8(buffer, offset, shown - cut);
            }
        }
        if (null != text)
        {
            return '"' + escape(text) + '"' + more;
        }
        final StringBuilder hex = new StringBuilder("0x");
        for (int i = 0; i < shown; i++)
        {
            hex.append(String.format("%02x", buffer.getByte(offset + i) & 0xFF));
        }
        return hex + more;
    }

    /** @return {@code text} escaped for a double-quoted display (see {@link #escaped}). */
    static String escape(final String text)
    {
        final StringBuilder out = new StringBuilder(text.length());
        appendEscaped(text, out, true);
        return out.toString();
    }

    /** How tail/consume prints a record. */
    enum RecordFormat
    {
        /** offset, timestamp, key and value, tab-separated (null key or value: {@code null}). */
        full,
        /** key, separator, value (a null key prints as nothing). */
        kv,
        /** the value only, as produced. */
        value
    }

    /**
     * @return the record as a line (without its line end), key and value {@link #escaped}: a null key or value is
     *         {@code null} in the full format and nothing in the others.
     */
    static String record(final RecordView record, final RecordFormat format, final String keySeparator)
    {
        final DirectBuffer buffer = record.buffer();
        final String key = escaped(buffer, record.keyOffset(), record.keyLength());
        final String value = escaped(buffer, record.valueOffset(), record.valueLength());
        switch (format)
        {
            case value: return null == value ? "" : value;
            case kv: return (null == key ? "" : key) + keySeparator + (null == value ? "" : value);
            default: return record.offset() + "\t" + timestamp(record.timestamp()) + "\t" + key + "\t" + value;
        }
    }

    /** The record's line as the bytes that were produced ({@code --raw}), ended by a newline. */
    static void writeRaw(
        final RecordView record, final RecordFormat format, final byte[] keySeparator, final OutputStream out)
        throws IOException
    {
        final DirectBuffer buffer = record.buffer();
        switch (format)
        {
            case value:
                writeBytes(buffer, record.valueOffset(), record.valueLength(), out, false);
                break;
            case kv:
                writeBytes(buffer, record.keyOffset(), record.keyLength(), out, false);
                out.write(keySeparator);
                writeBytes(buffer, record.valueOffset(), record.valueLength(), out, false);
                break;
            default:
                out.write((record.offset() + "\t" + timestamp(record.timestamp()) + "\t")
                    .getBytes(StandardCharsets.UTF_8));
                writeBytes(buffer, record.keyOffset(), record.keyLength(), out, true);
                out.write('\t');
                writeBytes(buffer, record.valueOffset(), record.valueLength(), out, true);
        }
        out.write('\n');
    }

    private static void writeBytes(
        final DirectBuffer buffer, final int offset, final int length, final OutputStream out, final boolean nullText)
        throws IOException
    {
        if (length < 0)
        {
            if (nullText)
            {
                out.write(NULL_BYTES);
            }
            return;
        }
        final byte[] bytes = new byte[length];
        buffer.getBytes(offset, bytes);
        out.write(bytes);
    }

    private static final byte[] NULL_BYTES = "null".getBytes(StandardCharsets.US_ASCII);

    /** @return a byte count for people. */
    static String bytes(final long bytes)
    {
        if (bytes < 1024)
        {
            return bytes + " B";
        }
        if (bytes < 1024 * 1024)
        {
            return String.format("%.1f KiB", bytes / 1024.0);
        }
        if (bytes < 1024L * 1024 * 1024)
        {
            return String.format("%.1f MiB", bytes / (1024.0 * 1024));
        }
        return String.format("%.1f GiB", bytes / (1024.0 * 1024 * 1024));
    }
}
