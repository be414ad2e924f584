package io.tidemark.bench.multiprocess;

/**
 * The producer settings both systems get, with Kafka's names: {@code acks}, {@code batch.size}, {@code linger.ms},
 * {@code buffer.memory}, five requests in flight per partition (Kafka: per connection), idempotence on for acks=all
 * only (both producers' default with acks=all), no compression, null keys.
 *
 * @param acks         -1 for all, 0 or 1.
 * @param batchSize    {@code batch.size}.
 * @param lingerMs     {@code linger.ms}.
 * @param bufferMemory {@code buffer.memory}.
 */
record ProducerSettings(int acks, int batchSize, long lingerMs, long bufferMemory)
{
    /** Requests in flight per partition (Tidemark) or per connection (Kafka). */
    static final int MAX_IN_FLIGHT = 5;
}
