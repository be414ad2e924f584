/**
 * Offline tools over a log directory, for {@code tidemark dump}, {@code verify} and {@code recover}:
 * {@link io.tidemark.store.inspect.LogInspector} (segments, indexes, checkpoints, batches, read without opening
 * the log), {@link io.tidemark.store.inspect.LogInspectionReport} (what {@code verify} found) and the verification
 * itself ({@code LogVerification}, package-private).
 * <p>
 * May depend on: the JDK, Agrona, {@link io.tidemark.store.format} (the layouts and the batch scanner, the same one
 * recovery uses, so that {@code verify} and the next {@code Log.open} agree), {@link io.tidemark.store.file}, and
 * the store's public value and exception types ({@code RecordBatch}, {@code StorageException},
 * {@code StorageErrorCode}, {@code MissingJvmFlagException}). Never the write path ({@code Log}, its writer,
 * segments or recovery): checkstyle/import-control.xml enforces it.
 */
package io.tidemark.store.inspect;
