package io.tidemark.bench.multiprocess;

import java.io.PrintWriter;
import java.util.List;

/**
 * A system the multiprocess bench measures, as a cluster of three server processes on this machine: Tidemark's host
 * JVMs with their ZooKeeper ({@link TidemarkTarget}), or a real Kafka's brokers ({@link KafkaTarget}). The phases
 * only use this interface, so that both systems run the same cells with the same producer settings.
 * <p>
 * Not thread-safe, except {@link #close()} (a shutdown hook may call it).
 */
interface LoadTarget extends AutoCloseable
{
    /** A server process whose CPU time counts as the system's (from {@code /proc}). */
    record Server(String name, long pid)
    {
    }

    /** @return short name: {@code kafka} or {@code tidemark}. */
    String name();

    /** @return what runs, in words, for the report. */
    String describe();

    /** Start the servers and connect the bench's client. */
    void start(PrintWriter out) throws Exception;

    /** Create a topic with RF=3 and wait until every partition has its full ISR. */
    void createTopic(String topic, int partitions);

    /** @return whether every partition of {@code topic} had its full ISR within the time. */
    boolean awaitFullIsr(String topic, long timeoutMs);

    /** @return a new producer to {@code topic}. */
    LoadProducer producer(String topic, ProducerSettings settings);

    /** @return the server processes, whose CPU is the system's cost. */
    List<Server> servers();

    /** @return a watch of the topic's leaders and ISRs, for a phase. */
    ClusterWatch watch(String topic);

    /**
     * Read back what a latency phase had acknowledged.
     *
     * @return the outcome, or {@link ReadBack.Outcome#notApplicable()} where the target cannot.
     */
    ReadBack.Outcome readBack(String topic, int partitions, int recordSize, int tag, long[] offsets,
        int[] partitionOf);

    /** @return how each server process stopped, and which stops were problems; empty before {@link #close()}. */
    StopRecord stops();

    /** Stop everything. Idempotent. */
    @Override
    void close();
}
