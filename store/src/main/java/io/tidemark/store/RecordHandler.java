package io.tidemark.store;

/**
 * Receives records read from a log. The {@link RecordView} is a flyweight over the mapped segment, valid only
 * during the call.
 */
@FunctionalInterface
public interface RecordHandler
{
    /**
     * @param record the record, valid only during this call.
     */
    void onRecord(RecordView record);
}
