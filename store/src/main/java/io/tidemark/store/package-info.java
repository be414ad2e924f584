/**
 * The log: the API an application embeds, and the write path behind it.
 * <p>
 * <b>API.</b> {@link io.tidemark.store.Log} (open with a {@link io.tidemark.store.LogContext}), appending through
 * {@link io.tidemark.store.BatchClaim}, {@link io.tidemark.store.LockingAppender} or
 * {@link io.tidemark.store.RingBufferAppender}, reading through {@link io.tidemark.store.LogReader} and
 * {@link io.tidemark.store.LogTailer} with {@link io.tidemark.store.RecordHandler} /
 * {@link io.tidemark.store.BatchHandler} over {@link io.tidemark.store.RecordView} and
 * {@link io.tidemark.store.RecordBatch}, the errors ({@link io.tidemark.store.StorageException},
 * {@link io.tidemark.store.ConfigException}, {@link io.tidemark.store.MissingJvmFlagException}),
 * {@link io.tidemark.store.RecoveryReport} and {@link io.tidemark.store.LogNames}.
 * <p>
 * <b>Behind it</b> (package-private): {@code Log} is a façade over parts that own their state: the writer
 * ({@code LogWriter}), the segment set ({@code LogSegments}, {@code Segment}, {@code SegmentTail}, the indexes),
 * the flusher ({@code LogFlusher}, {@code LogCheckpoint}), truncation, retention, recovery ({@code LogLoader}) and
 * the log agent's duty cycle ({@code LogAgent}).
 * <p>
 * <b>Sub-packages.</b> {@link io.tidemark.store.format} lays out every on-disk file (depends on nothing else of the
 * store); {@link io.tidemark.store.file} holds file utilities (atomic checkpoint files, fsync, space reservation,
 * positional reads); {@link io.tidemark.store.inspect} holds the offline tools ({@code tidemark dump} and
 * {@code verify}), which read the format and never the write path.
 * <p>
 * May depend on: the JDK, Agrona, and its own sub-packages. Never on anything above the store (replication,
 * clients, hosts, the edge), nor on {@code inspect}: checkstyle/import-control.xml enforces it.
 */
package io.tidemark.store;
