package io.tidemark.kafka;

import io.tidemark.replication.protocol.PartitionState;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Topics and partitions in the metadata, looked up by name. Stateless. */
final class KafkaTopics
{
    private KafkaTopics()
    {
    }

    static boolean exists(final Iterable<PartitionState> partitions, final String topic)
    {
        for (final PartitionState state : partitions)
        {
            if (state.topicPartition().topic().equals(topic))
            {
                return true;
            }
        }
        return false;
    }

    static boolean partitionExists(final Iterable<PartitionState> partitions, final String topic, final int index)
    {
        return null != find(partitions, topic, index);
    }

    static PartitionState find(final Iterable<PartitionState> partitions, final String topic, final int index)
    {
        for (final PartitionState state : partitions)
        {
            if (state.topicPartition().partition() == index && state.topicPartition().topic().equals(topic))
            {
                return state;
            }
        }
        return null;
    }

    /** @return every topic's partitions, by topic name and partition number. */
    static Map<String, List<PartitionState>> byTopic(final Iterable<PartitionState> partitions)
    {
        final Map<String, List<PartitionState>> topics = new TreeMap<>();
        for (final PartitionState state : partitions)
        {
            topics.computeIfAbsent(state.topicPartition().topic(), (t) -> new ArrayList<>()).add(state);
        }
        for (final List<PartitionState> list : topics.values())
        {
            list.sort(Comparator.comparingInt((PartitionState s) -> s.topicPartition().partition()));
        }
        return topics;
    }

    /** @return whether Kafka accepts the name as a topic name and Tidemark as a log name. */
    static boolean validName(final String topic)
    {
        return null != topic && topic.matches("[A-Za-z0-9._-]{1,200}") && !topic.equals(".") && !topic.equals("..");
    }
}
