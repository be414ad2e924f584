package io.tidemark.bench.multiprocess;

import org.agrona.DirectBuffer;

/**
 * One producer of the system under test, as the phases drive it: Tidemark's {@code Producer} over its
 * {@code TidemarkClient}, or Kafka's {@code KafkaProducer}, each configured alike ({@link ProducerSettings}).
 * Implementations are thread-safe as their producers are.
 */
interface LoadProducer
{
    /**
     * Told the outcome of one asynchronous send, on the producer's own thread. The phases reuse their completions;
     * a target keeps the callback its producer needs for one in {@link #targetCallback}, made at its first use, so
     * that sending allocates nothing of the bench's own.
     */
    abstract class Completion
    {
        /** The target's callback wrapping this completion, or null until its first send. */
        Object targetCallback;

        /**
         * @param partition the record's partition, or -1 when unknown.
         * @param offset    its offset, or -1 (acks=0, or failed).
         * @param errorCode null on success, else the producer's name for the failure.
         * @param message   the failure in words, or null.
         */
        abstract void onCompletion(int partition, long offset, String errorCode, String message);
    }

    /**
     * Send one record without waiting (a full buffer blocks, as the producer does).
     *
     * @param value      the value's bytes, {@code [0, length)}: copied or encoded before this returns.
     * @param length     value length.
     * @param completion its outcome.
     * @throws RuntimeException when the producer refuses at once.
     */
    void send(DirectBuffer value, int length, Completion completion);

    /**
     * Send one record and wait for its acknowledgement.
     *
     * @return its offset.
     * @throws RuntimeException when it failed.
     */
    long sendAndWait(DirectBuffer value, int length);

    /** Wait up to {@code drainMs} for what is in flight, then close. */
    void close(long drainMs);
}
