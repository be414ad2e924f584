package io.tidemark.store.inspect;

import io.tidemark.store.StorageErrorCode;
import io.tidemark.store.StorageException;
import io.tidemark.store.format.IndexDescriptor;
import io.tidemark.store.inspect.LogInspector.IndexContent;

import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;

/**
 * Reads an offset or time index file as it is on disk ({@link IndexDescriptor}), for {@link LogInspector}: whole
 * into memory (an index is small), entries up to the first all-zero entry after the first one, the zero slots of a
 * pre-sized index counted. Reads only; stateless.
 */
final class IndexFileReader
{
    private IndexFileReader()
    {
    }

    /**
     * @param file        the index file.
     * @param baseOffset  its segment's base offset.
     * @param entryLength {@link IndexDescriptor#OFFSET_INDEX_ENTRY_LENGTH} or
     *                    {@link IndexDescriptor#TIME_INDEX_ENTRY_LENGTH}.
     * @return its content as it is on disk.
     * @throws StorageException IO_ERROR when it cannot be read.
     */
    static IndexContent read(final Path file, final long baseOffset, final int entryLength)
    {
        final byte[] content;
        try
        {
            if (!Files.isRegularFile(file))
            {
                return new IndexContent(file, false, 0, false, new long[0], new long[0], 0);
            }
            content = Files.readAllBytes(file);
        }
        catch (final NoSuchFileException ex)
        {
            return new IndexContent(file, false, 0, false, new long[0], new long[0], 0);
        }
        catch (final IOException ex)
        {
            throw new StorageException(StorageErrorCode.IO_ERROR, "cannot read " + file, ex);
        }
        final UnsafeBuffer buffer = new UnsafeBuffer(content);
        final int slots = content.length / entryLength;
        int entries = slots;
        for (int i = 1; i < slots; i++)
        {
            boolean zero = true;
            for (int b = i * entryLength, end = b + entryLength; b < end && zero; b++)
            {
                zero = content[b] == 0;
            }
            if (zero)
            {
                entries = i;
                break;
            }
        }
        if (slots > 0 && allZero(content, 0, entryLength))
        {
            entries = 0; // an entry is never all zero: the first offset index entry has a position above 0
        }
        final long[] offsets = new long[entries];
        final long[] values = new long[entries];
        for (int i = 0; i < entries; i++)
        {
            final int at = i * entryLength;
            if (entryLength == IndexDescriptor.OFFSET_INDEX_ENTRY_LENGTH)
            {
                offsets[i] = baseOffset + buffer.getInt(at);
                values[i] = buffer.getInt(at + 4);
            }
            else
            {
                values[i] = buffer.getLong(at);
                offsets[i] = baseOffset + buffer.getInt(at + 8);
            }
        }
        return new IndexContent(file, true, content.length, content.length % entryLength == 0, offsets, values,
            slots - entries);
    }

    private static boolean allZero(final byte[] content, final int from, final int length)
    {
        for (int i = from; i < from + length; i++)
        {
            if (content[i] != 0)
            {
                return false;
            }
        }
        return true;
    }
}
