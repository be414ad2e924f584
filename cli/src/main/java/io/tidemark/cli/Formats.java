package io.tidemark.cli;

import io.tidemark.store.RecordView;
import org.agrona.DirectBuffer;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
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

    /** @return the raw value as text (UTF-8, replacement characters for invalid bytes), or null. */
    static String raw(final DirectBuffer buffer, final int offset, final int length)
    {
        if (length < 0)
        {
            return null;
        }
        final byte[] bytes = new byte[length];
        buffer.getBytes(offset, bytes);
        return new String(bytes, StandardCharsets.UTF_8);
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

    static String escape(final String text)
    {
        final StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++)
        {
            final char c = text.charAt(i);
            switch (c)
            {
                case '"': out.append("\\\""); break;
                case '\\': out.append("\\\\"); break;
                case '\n': out.append("\\n"); break;
                case '\r': out.append("\\r"); break;
                case '\t': out.append("\\t"); break;
                default:
                    if (c < 0x20 || c == 0x7f)
                    {
                        out.append(String.format("\\u%04x", (int)c));
                    }
                    else
                    {
                        out.append(c);
                    }
            }
        }
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

    static String record(final RecordView record, final RecordFormat format, final String keySeparator)
    {
        final DirectBuffer buffer = record.buffer();
        final String key = raw(buffer, record.keyOffset(), record.keyLength());
        final String value = raw(buffer, record.valueOffset(), record.valueLength());
        switch (format)
        {
            case value: return null == value ? "" : value;
            case kv: return (null == key ? "" : key) + keySeparator + (null == value ? "" : value);
            default: return record.offset() + "\t" + timestamp(record.timestamp()) + "\t" + key + "\t" + value;
        }
    }

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
