package io.tidemark.kafka;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.AdminClientConfig;
import org.apache.kafka.clients.admin.Config;
import org.apache.kafka.clients.admin.ListOffsetsResult;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.TopicPartitionInfo;
import org.apache.kafka.common.config.ConfigResource;
import org.apache.kafka.common.errors.InvalidReplicationFactorException;
import org.apache.kafka.common.errors.TopicDeletionDisabledException;
import org.apache.kafka.common.errors.TopicExistsException;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ExecutionException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Kafka's Admin client against an in-process cluster: createTopics (and its refusals), describeTopics (leaders,
 * replicas, ISR as the controller has them), listOffsets (earliest, latest, by timestamp), describeConfigs, and
 * deleteTopics refused with TOPIC_DELETION_DISABLED.
 */
class AdminTest extends SharedClusterTest
{
    static Admin admin()
    {
        final Properties props = new Properties();
        props.put(AdminClientConfig.BOOTSTRAP_SERVERS_CONFIG, kafka.bootstrapServers());
        return Admin.create(props);
    }

    @Test
    void createDescribeListOffsetsAndRefusals() throws Exception
    {
        try (Admin admin = admin())
        {
            admin.createTopics(List.of(new NewTopic("admin-created", 3, (short)3))).all().get();
            final ExecutionException exists = assertThrows(ExecutionException.class, () ->
                admin.createTopics(List.of(new NewTopic("admin-created", 1, (short)1))).all().get());
            assertInstanceOf(TopicExistsException.class, exists.getCause());
            final ExecutionException tooMany = assertThrows(ExecutionException.class, () ->
                admin.createTopics(List.of(new NewTopic("too-replicated", 1, (short)4))).all().get());
            assertInstanceOf(InvalidReplicationFactorException.class, tooMany.getCause());

            final TopicDescription description = admin.describeTopics(List.of("admin-created"))
                .allTopicNames().get().get("admin-created");
            assertEquals(3, description.partitions().size());
            for (final TopicPartitionInfo partition : description.partitions())
            {
                final io.tidemark.replication.protocol.PartitionState state = cluster.state(
                    new io.tidemark.replication.TopicPartition("admin-created", partition.partition()));
                assertEquals(state.leader(), partition.leader().id());
                assertEquals(3, partition.replicas().size());
                assertEquals(state.assignedReplicas()[0], partition.replicas().get(0).id());
                assertTrue(!partition.isr().isEmpty() && partition.replicas().containsAll(partition.isr()));
            }
            assertEquals(3, admin.describeCluster().nodes().get().size());

            final long before = System.currentTimeMillis() - 60_000;
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(
                ClientProps.producer(kafka.bootstrapServers(), "all", true)))
            {
                for (int i = 0; i < 10; i++)
                {
                    producer.send(new ProducerRecord<>("admin-created", 0, before + i * 1_000L, "k", "v" + i));
                }
                producer.flush();
            }
            final TopicPartition tp = new TopicPartition("admin-created", 0);
            assertEquals(0, admin.listOffsets(Map.of(tp, OffsetSpec.earliest())).partitionResult(tp).get().offset());
            assertEquals(10, admin.listOffsets(Map.of(tp, OffsetSpec.latest())).partitionResult(tp).get().offset());
            final ListOffsetsResult.ListOffsetsResultInfo byTime = admin.listOffsets(Map.of(tp,
                OffsetSpec.forTimestamp(before + 4_500))).partitionResult(tp).get();
            assertEquals(5, byTime.offset());
            assertEquals(before + 5_000, byTime.timestamp());
            assertEquals(-1, admin.listOffsets(Map.of(tp, OffsetSpec.forTimestamp(System.currentTimeMillis() +
                60_000))).partitionResult(tp).get().offset());

            final ConfigResource resource = new ConfigResource(ConfigResource.Type.TOPIC, "admin-created");
            final Config config = admin.describeConfigs(Set.of(resource)).all().get().get(resource);
            assertEquals("2", config.get("min.insync.replicas").value());
            assertTrue(config.get("min.insync.replicas").isReadOnly());

            final ExecutionException deletion = assertThrows(ExecutionException.class, () ->
                admin.deleteTopics(List.of("admin-created")).all().get());
            assertInstanceOf(TopicDeletionDisabledException.class, deletion.getCause());
            assertTrue(admin.listTopics().names().get().contains("admin-created"));
        }
    }
}
