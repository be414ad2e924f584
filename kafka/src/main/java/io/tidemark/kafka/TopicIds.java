package io.tidemark.kafka;

import io.tidemark.replication.protocol.PartitionState;
import org.apache.kafka.common.Uuid;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Kafka topic ids (KIP-516) for Tidemark topics, which have names only: the first 128 bits of
 * SHA-256(cluster id, NUL, topic name). Every host derives the same id with nothing stored, and a client that
 * fetches by id (Fetch v13 and later, Produce v13) finds the topic on every broker. Tidemark cannot delete topics,
 * so a name never comes back as another topic under the same id. Thread-safe.
 */
final class TopicIds
{
    private final String clusterId;
    private final Map<String, Uuid> byName = new ConcurrentHashMap<>();
    private final Map<Uuid, String> byId = new ConcurrentHashMap<>();

    TopicIds(final String clusterId)
    {
        this.clusterId = clusterId;
    }

    Uuid idOf(final String topic)
    {
        Uuid id = byName.get(topic);
        if (null == id)
        {
            id = derive(clusterId, topic);
            byName.put(topic, id);
            byId.put(id, topic);
        }
        return id;
    }

    /** @return the topic with this id among the partitions known, or null. */
    String nameOf(final Uuid id, final Iterable<PartitionState> partitions)
    {
        final String known = byId.get(id);
        if (null != known)
        {
            return known;
        }
        for (final PartitionState state : partitions)
        {
            if (idOf(state.topicPartition().topic()).equals(id))
            {
                return state.topicPartition().topic();
            }
        }
        return null;
    }

    static Uuid derive(final String clusterId, final String topic)
    {
        try
        {
            final MessageDigest digest = MessageDigest.getInstance("SHA-256");
            digest.update(clusterId.getBytes(StandardCharsets.UTF_8));
            digest.update((byte)0);
            digest.update(topic.getBytes(StandardCharsets.UTF_8));
            final ByteBuffer hash = ByteBuffer.wrap(digest.digest());
            final Uuid id = new Uuid(hash.getLong(), hash.getLong());
            return id.equals(Uuid.ZERO_UUID) || id.equals(Uuid.METADATA_TOPIC_ID) ? new Uuid(1, 2) : id;
        }
        catch (final NoSuchAlgorithmException ex)
        {
            throw new IllegalStateException("SHA-256 is part of every JDK", ex);
        }
    }
}
