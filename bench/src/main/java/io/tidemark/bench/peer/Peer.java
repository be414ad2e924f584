package io.tidemark.bench.peer;

import java.nio.file.Path;

/**
 * A single-writer append-only store measured beside Tidemark's log with the same three numbers (append throughput,
 * append latency, write-to-tailer latency): Tidemark's {@code Log}, Chronicle Queue, or a raw copy into a mapped
 * file (the floor). Every record is {@code size} bytes whose first 8 are a timestamp the tailer reads back.
 * One writer thread calls {@link #append}; one tailer thread calls {@link Tailer#poll}.
 */
interface Peer extends AutoCloseable
{
    /**
     * Open the store in an empty directory.
     *
     * @param dir  the directory.
     * @param size record size in bytes (at least 8).
     */
    void open(Path dir, int size) throws java.io.IOException;

    /**
     * Append one record.
     *
     * @param stamp the value of its first 8 bytes.
     */
    void append(long stamp);

    /**
     * @return a tailer positioned at the end of what is written, or null when this peer has none.
     */
    Tailer openTailer();

    /** Follows what the writer appends. */
    interface Tailer extends AutoCloseable
    {
        /**
         * Read what is new.
         *
         * @param handler receives each record's stamp.
         * @return records read.
         */
        int poll(java.util.function.LongConsumer handler);

        @Override
        void close();
    }

    @Override
    void close() throws java.io.IOException;
}
