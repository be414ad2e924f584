/**
 * File utilities of the store: how bytes and names reach stable storage ({@link io.tidemark.store.file.FileSync}),
 * small checkpoint files written atomically ({@link io.tidemark.store.file.CheckpointFile}), files of secrets
 * readable by their owner only ({@link io.tidemark.store.file.OwnerOnlyFile}), the mapped counters file
 * ({@link io.tidemark.store.file.CountersFile}), block reservation before a mapped write
 * ({@link io.tidemark.store.file.SpaceReservation}) and a window of positional reads over a file for scans
 * ({@link io.tidemark.store.file.FileWindow}).
 * <p>
 * {@code FileSync}, {@code CheckpointFile}, {@code OwnerOnlyFile} and {@code CountersFile} are used by the modules
 * above (replication's checkpoints, the cluster secret, {@code tidemark stat}); {@code SpaceReservation} and
 * {@code FileWindow} are public only so that the store's packages share them, and say so.
 * <p>
 * May depend on: the JDK, Agrona, {@link io.tidemark.store.format} and the store's exception types
 * ({@code StorageException}, {@code StorageErrorCode}, {@code ConfigException}); never the log's write path
 * (checkstyle/import-control.xml enforces it).
 */
package io.tidemark.store.file;
