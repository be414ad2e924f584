/**
 * The store's on-disk format: the layout of every file of a log directory, with a byte ruler for each, and the
 * encoders, decoders and checks that read and write it.
 * <ul>
 *   <li>record batches and records in a segment: {@link io.tidemark.store.format.RecordBatchDescriptor},
 *       {@link io.tidemark.store.format.RecordDescriptor}; encoders {@link io.tidemark.store.format.RecordEncoder},
 *       {@link io.tidemark.store.format.HeadersEncoder}; decoder {@link io.tidemark.store.format.HeadersDecoder};
 *       the checksum {@link io.tidemark.store.format.Crc32c};</li>
 *   <li>what is a valid batch ({@link io.tidemark.store.format.BatchValidator}) and where valid data ends and
 *       resumes after damage ({@link io.tidemark.store.format.BatchScanner}), the one rule shared by recovery,
 *       inspection and index rebuild;</li>
 *   <li>the offset and time indexes: {@link io.tidemark.store.format.IndexDescriptor};</li>
 *   <li>checkpoint files ({@code log.checkpoint}, {@code log.meta}, and the framing other modules' checkpoints
 *       share): {@link io.tidemark.store.format.CheckpointDescriptor};</li>
 *   <li>the counters file: {@link io.tidemark.store.format.CountersDescriptor};</li>
 *   <li>the names of the files: {@link io.tidemark.store.format.LogFiles},
 *       {@link io.tidemark.store.format.SegmentFiles}.</li>
 * </ul>
 * The descriptors, encoders and decoders are public and used by the modules above (replication builds and checks
 * batches, clients encode records); {@code BatchValidator}, {@code BatchScanner} and {@code SegmentFiles} are
 * public only so that the store's packages share them, and say so.
 * <p>
 * May depend on: the JDK and Agrona only; nothing else of the store (checkstyle/import-control.xml enforces it), so
 * the format can be read by a tool without the log.
 */
package io.tidemark.store.format;
