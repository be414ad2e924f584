package io.tidemark.replication.protocol;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The fetch messages of many partitions in one transport message: a follower's fetches to one leader host in one
 * duty cycle (FETCH_SET) and the leader's answers to one follower host in one duty cycle (FETCH_RESPONSE_SET), as
 * a Kafka follower sends one fetch per broker pair carrying every partition it follows there. One message costs
 * one publication offer, one authentication tag and one frame check at each end, whatever the number of
 * partitions; each entry is then handled as its own FETCH_REQUEST or FETCH_RESPONSE, with its own fencing,
 * correlation id and error.
 * <pre>
 *  FETCH_SET (type 5): follower -> leader
 *   version:1 pad:1 count:2 pad:4              header (8 bytes)
 *   FETCH_REQUEST x count                      40 bytes each, at 8 + 40 * i
 *
 *  FETCH_RESPONSE_SET (type 6): leader -> follower
 *   version:1 pad:1 count:2 pad:4              header (8 bytes)
 *   entry x count                              a FETCH_RESPONSE (48-byte header, then its records), padded to a
 *                                              multiple of 8 bytes (the last one too); the next entry follows
 * </pre>
 * A set of one entry is sent as the plain message (the entry alone), so a follower of one partition per leader sends
 * what it always sent. Each set is checked whole ({@link #checkRequests}, {@link #checkResponses}) before any entry
 * is used: an unknown version, a count out of [1, {@link #MAX_ENTRIES}], an entry that runs past the message or
 * states a negative length, or bytes left after the last entry refuse the whole message, so no entry of a truncated
 * or forged set is acted on. The checks read each entry's header once and allocate nothing.
 * <p>
 * Internal: public only so that the replication packages share it; not part of the API.
 */
public final class FetchSets
{
    public static final int FETCH_SET = 5;
    public static final int FETCH_RESPONSE_SET = 6;

    public static final int VERSION = 1;
    public static final int VERSION_OFFSET = 0;
    public static final int COUNT_OFFSET = 2;
    /** Where the first entry starts: a set's header length. */
    public static final int ENTRIES_OFFSET = 8;
    /** Entries one set carries at most: bounds a host's work per message. */
    public static final int MAX_ENTRIES = 1_024;

    private static final int ALIGNMENT = 8;

    /** Why a set is refused. */
    public enum Fault
    {
        /** Shorter than its header, or than an entry's header. */
        TRUNCATED,
        /** A version this host does not speak. */
        UNKNOWN_VERSION,
        /** A count of entries out of [1, {@link #MAX_ENTRIES}]. */
        BAD_COUNT,
        /** An entry whose records length is negative or runs past the message. */
        BAD_LENGTH,
        /** Bytes after the last entry the count states. */
        TRAILING_BYTES
    }

    private FetchSets()
    {
    }

    /** Write a set's header: its version and its number of entries. */
    public static void putHeader(final MutableDirectBuffer buffer, final int offset, final int count)
    {
        buffer.putByte(offset + VERSION_OFFSET, (byte)VERSION);
        buffer.putByte(offset + VERSION_OFFSET + 1, (byte)0);
        buffer.putShort(offset + COUNT_OFFSET, (short)count);
        buffer.putInt(offset + COUNT_OFFSET + 2, 0);
    }

    /** @return the number of entries a set's header states (checked by {@link #checkRequests} or {@link #checkResponses}). */
    public static int count(final DirectBuffer buffer, final int offset)
    {
        return buffer.getShort(offset + COUNT_OFFSET) & 0xFFFF;
    }

    /** @return a response entry's length on the wire: its header and records, padded to a multiple of 8. */
    public static int responseEntryLength(final int recordsLength)
    {
        return align(FetchMessages.FetchResponse.HEADER_LENGTH + recordsLength);
    }

    /**
     * @return the length of the response entry at {@code at}, from its records length (an entry
     *         {@link #checkResponses} accepted).
     */
    public static int responseEntryLength(final DirectBuffer buffer, final int at)
    {
        return responseEntryLength(buffer.getInt(at + 12));
    }

    private static int align(final int length)
    {
        return (length + ALIGNMENT - 1) & -ALIGNMENT;
    }

    private static Fault checkHeader(final DirectBuffer buffer, final int offset, final int length)
    {
        if (length < ENTRIES_OFFSET)
        {
            return Fault.TRUNCATED;
        }
        if ((buffer.getByte(offset + VERSION_OFFSET) & 0xFF) != VERSION)
        {
            return Fault.UNKNOWN_VERSION;
        }
        final int count = count(buffer, offset);
        if (count < 1 || count > MAX_ENTRIES)
        {
            return Fault.BAD_COUNT;
        }
        return null;
    }

    /**
     * Check a FETCH_SET payload whole, before any of it is used.
     *
     * @return null when it holds exactly the number of FETCH_REQUESTs its header states; else the fault.
     */
    public static Fault checkRequests(final DirectBuffer buffer, final int offset, final int length)
    {
        final Fault header = checkHeader(buffer, offset, length);
        if (null != header)
        {
            return header;
        }
        final long needed = ENTRIES_OFFSET + (long)count(buffer, offset) * FetchMessages.FetchRequest.LENGTH;
        if (length < needed)
        {
            return Fault.TRUNCATED;
        }
        return length == needed ? null : Fault.TRAILING_BYTES;
    }

    /**
     * Check a FETCH_RESPONSE_SET payload whole, before any of it is used: every entry's header and records lie
     * inside the message, and the entries, each padded to a multiple of 8 bytes from the set's start, fill it
     * exactly.
     *
     * @return null when every entry is in bounds; else the fault.
     */
    public static Fault checkResponses(final DirectBuffer buffer, final int offset, final int length)
    {
        final Fault header = checkHeader(buffer, offset, length);
        if (null != header)
        {
            return header;
        }
        final int count = count(buffer, offset);
        long at = ENTRIES_OFFSET; // from the start of the set: the padding is relative to it
        for (int i = 0; i < count; i++)
        {
            if (at + FetchMessages.FetchResponse.HEADER_LENGTH > length)
            {
                return Fault.TRUNCATED;
            }
            final int recordsLength = buffer.getInt(offset + (int)at + 12);
            if (recordsLength < 0 || at + FetchMessages.FetchResponse.HEADER_LENGTH + recordsLength > length)
            {
                return Fault.BAD_LENGTH;
            }
            at += responseEntryLength(recordsLength);
        }
        return at == length ? null : (at > length ? Fault.TRUNCATED : Fault.TRAILING_BYTES);
    }
}
