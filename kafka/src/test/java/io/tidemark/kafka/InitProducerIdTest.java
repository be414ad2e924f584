package io.tidemark.kafka;

import io.tidemark.replication.ReplicationCluster;
import io.tidemark.replication.ReplicationContext;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;
import org.apache.kafka.common.message.InitProducerIdRequestData;
import org.apache.kafka.common.message.InitProducerIdResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.InitProducerIdResponse;
import org.apache.kafka.common.requests.RequestHeader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.Socket;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * InitProducerId without a transactional id always answers a new producer id from the cluster's counter with epoch
 * 0, as Kafka's coordinator does for idempotent producers: a request that names another producer's id and epoch
 * neither gets that id nor fences its owner, and a producer's own epoch bump (KIP-360) gets a fresh id, which the
 * real KafkaProducer accepts.
 */
class InitProducerIdTest
{
    @TempDir
    Path root;

    private int correlationId;

    @Test
    void aProducerIdIsNeverTakenFromTheRequest() throws Exception
    {
        try (ReplicationCluster cluster = ReplicationCluster.start(root, 3, new ReplicationContext()
            .hostSessionTimeoutMs(10_000));
             InProcessKafka kafka = InProcessKafka.start(cluster, new KafkaContext().listener("127.0.0.1:0")))
        {
            final Set<Long> issued = new HashSet<>();
            try (Socket victim = new Socket("127.0.0.1", kafka.listener(0).port());
                 Socket attacker = new Socket("127.0.0.1", kafka.listener(1).port()))
            {
                victim.setSoTimeout(60_000);
                attacker.setSoTimeout(60_000);
                final InitProducerIdResponseData first = init(victim, -1, (short)-1);
                assertEquals(0, first.producerEpoch());
                issued.add(first.producerId());

                // another client names the victim's id with a later epoch: it gets an id of its own
                final InitProducerIdResponseData stolen = init(attacker, first.producerId(), (short)7);
                assertNotEquals(first.producerId(), stolen.producerId(), "the victim's id is not handed out");
                assertEquals(0, stolen.producerEpoch());
                assertTrue(issued.add(stolen.producerId()));

                // an id the cluster never issued is not accepted either
                final InitProducerIdResponseData invented = init(attacker, 1L << 40, (short)0);
                assertNotEquals(1L << 40, invented.producerId());
                assertTrue(issued.add(invented.producerId()));

                // the victim's own bump gets a fresh id too
                final InitProducerIdResponseData bumped = init(victim, first.producerId(), first.producerEpoch());
                assertTrue(issued.add(bumped.producerId()));
                assertEquals(0, bumped.producerEpoch());
            }
            // and the real idempotent producer works with that behaviour
            try (KafkaProducer<String, String> producer = new KafkaProducer<>(ClientProps.producer(
                kafka.bootstrapServers(), "all", true)))
            {
                cluster.createTopic("ids", 1, 3);
                assertTrue(cluster.awaitLeaders("ids", 60_000));
                assertTrue(producer.send(new ProducerRecord<>("ids", "k", "v")).get(60, TimeUnit.SECONDS)
                    .offset() >= 0);
            }
        }
    }

    private InitProducerIdResponseData init(final Socket socket, final long producerId, final short epoch)
        throws IOException
    {
        final short version = 5;
        final InitProducerIdRequest request = new InitProducerIdRequest.Builder(new InitProducerIdRequestData()
            .setTransactionalId(null).setTransactionTimeoutMs(Integer.MAX_VALUE).setProducerId(producerId)
            .setProducerEpoch(epoch)).build(version);
        final int id = ++correlationId;
        final RequestHeader header = new RequestHeader(ApiKeys.INIT_PRODUCER_ID, version, "ids-test", id);
        final InitProducerIdResponse response = (InitProducerIdResponse)ProtocolFuzzTest.exchange(socket,
            ProtocolFuzzTest.frame(request, version, id), header);
        assertEquals(Errors.NONE.code(), response.data().errorCode());
        return response.data();
    }
}
