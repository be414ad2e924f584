package io.tidemark.kafka;

/**
 * Topic creation and producer ids, for the Kafka listener's CreateTopics and InitProducerId. Calls may block (a
 * controller's durable write, ZooKeeper): the listener makes them off its agent thread. Thread-safe.
 */
public interface TopicAdmin
{
    /**
     * Create a topic and wait until every partition has a leader.
     *
     * @throws IllegalArgumentException when the topic exists or the request is refused (the message says why).
     * @throws IllegalStateException    when it was not carried out within the timeout.
     */
    void createTopic(String topic, int partitions, int replicationFactor, long timeoutMs);

    /** @return how many hosts a topic's replicas may be spread over now. */
    int hostCount();

    /** @return a new producer id, unique in the cluster across restarts. */
    long allocateProducerId();
}
