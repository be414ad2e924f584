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
 * @param oneAtATime   only synchronous sends, one at a time (the round trips): Tidemark's producer then runs its
 *                     agent on the sending thread ({@code AgentMode.INVOKER}), which also runs the client's
 *                     driver while it waits (its synchronous one-record path); Kafka's has no such mode.
 */
record ProducerSettings(int acks, int batchSize, long lingerMs, long bufferMemory, boolean oneAtATime)
{
    /** Settings of a producer that sends asynchronously (every phase but the one-at-a-time round trips). */
    ProducerSettings(final int acks, final int batchSize, final long lingerMs, final long bufferMemory)
    {
        this(acks, batchSize, lingerMs, bufferMemory, false);
    }

    /** Requests in flight per partition (Tidemark) or per connection (Kafka). */
    static final int MAX_IN_FLIGHT = 5;
}
