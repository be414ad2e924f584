package io.tidemark.kafka;

import io.tidemark.replication.LeaderPartitions;
import io.tidemark.replication.LeaderReaders;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.TopicPartition;
import io.tidemark.store.BatchHandler;
import io.tidemark.store.LogReader;
import io.tidemark.store.StorageErrorCode;
import io.tidemark.store.StorageException;
import org.apache.kafka.common.message.FetchRequestData;
import org.apache.kafka.common.message.FetchResponseData;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.record.MemoryRecords;

import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;

/**
 * Fetch, for consumers: committed batches of the partitions this host leads, from the fetch offset up to the high
 * watermark (the last stable offset is the high watermark: there are no transactions), transcoded to Kafka's batch
 * layout ({@link KafkaBatchEncoder}), within the partition's and the response's byte limits (the first batch always,
 * as KIP-74 asks). A fetch that finds fewer than {@code min_bytes} is parked until a high watermark it waits on
 * moves or {@code max_wait_ms} passes. No fetch sessions are created (every answer is a full one, session id 0),
 * which clients handle as a broker whose session cache is full.
 * <p>
 * On the listener's agent thread; the log readers are cached per partition and leader epoch.
 */
final class FetchRequests
{
    private final KafkaListener listener;
    private final KafkaBatchEncoder encoder = new KafkaBatchEncoder();
    private final BatchHandler encode = encoder::append;
    private final List<Parked> parked = new ArrayList<>();
    /** The partitions {@link #readers} read: when the listener's change (a restart of the host), all are closed. */
    private LeaderPartitions readersOf;
    private final LeaderReaders readers = new LeaderReaders((partitionId) -> readersOf.openReader(partitionId),
        (partitionId) -> true);

    /** A fetch waiting for data. */
    private static final class Parked
    {
        final InFlight request;
        final FetchRequestData data;
        final long deadlineMs;
        final int[] partitionIds;
        final long[] fetchOffsets;

        Parked(final InFlight request, final FetchRequestData data, final long deadlineMs, final int[] partitionIds,
            final long[] fetchOffsets)
        {
            this.request = request;
            this.data = data;
            this.deadlineMs = deadlineMs;
            this.partitionIds = partitionIds;
            this.fetchOffsets = fetchOffsets;
        }
    }

    /** What one pass over a fetch request found. */
    private static final class Outcome
    {
        final FetchResponseData response = new FetchResponseData();
        final List<FetchResponseData.PartitionData> withRecords = new ArrayList<>();
        final List<int[]> ranges = new ArrayList<>();
        int bytes;
        boolean anyError;
        int[] partitionIds;
        long[] fetchOffsets;
    }

    FetchRequests(final KafkaListener listener)
    {
        this.listener = listener;
    }

    void fetch(final InFlight request, final FetchRequestData data)
    {
        if (data.sessionId() != 0 || data.sessionEpoch() > 0)
        {
            request.respond(new FetchResponseData().setErrorCode(Errors.FETCH_SESSION_ID_NOT_FOUND.code())
                .setSessionId(0));
            return;
        }
        final Outcome outcome = read(request, data);
        if (outcome.bytes >= data.minBytes() || data.maxWaitMs() <= 0 || outcome.anyError)
        {
            answer(request, outcome);
            return;
        }
        parked.add(new Parked(request, data, System.currentTimeMillis() + data.maxWaitMs(), outcome.partitionIds,
            outcome.fetchOffsets));
    }

    boolean hasParked()
    {
        return !parked.isEmpty();
    }

    /** Answer parked fetches whose data arrived or whose wait is over. */
    int pollParked(final long nowMs)
    {
        if (parked.isEmpty())
        {
            return 0;
        }
        int work = 0;
        final LeaderPartitions partitions = listener.partitions();
        for (int i = parked.size() - 1; i >= 0; i--)
        {
            final Parked fetch = parked.get(i);
            if (fetch.request.connection.closed)
            {
                parked.remove(i);
                continue;
            }
            final boolean due = nowMs >= fetch.deadlineMs;
            if (!due && !advanced(partitions, fetch))
            {
                continue;
            }
            final Outcome outcome = read(fetch.request, fetch.data);
            if (due || outcome.bytes >= fetch.data.minBytes() || outcome.anyError)
            {
                parked.remove(i);
                answer(fetch.request, outcome);
                work++;
            }
        }
        return work;
    }

    private static boolean advanced(final LeaderPartitions partitions, final Parked fetch)
    {
        if (null == partitions)
        {
            return true;
        }
        for (int i = 0; i < fetch.partitionIds.length; i++)
        {
            final int id = fetch.partitionIds[i];
            if (id >= 0 && (partitions.highWatermark(id) > fetch.fetchOffsets[i] || !partitions.isLeading(id)))
            {
                return true;
            }
        }
        return false;
    }

    private void answer(final InFlight request, final Outcome outcome)
    {
        final byte[] bytes = encoder.buffer().byteArray();
        for (int i = 0; i < outcome.withRecords.size(); i++)
        {
            final int[] range = outcome.ranges.get(i);
            outcome.withRecords.get(i).setRecords(MemoryRecords.readableRecords(
                ByteBuffer.wrap(bytes, range[0], range[1]).slice()));
        }
        request.respond(outcome.response);
    }

    private Outcome read(final InFlight request, final FetchRequestData data)
    {
        final Outcome outcome = new Outcome();
        outcome.response.setThrottleTimeMs(0).setErrorCode(Errors.NONE.code()).setSessionId(0);
        final boolean byId = request.version() >= 13;
        final LeaderPartitions partitions = listener.partitions();
        if (partitions != readersOf)
        {
            readers.close();
            readersOf = partitions;
        }
        final Iterable<PartitionState> states = listener.metadata().partitions();
        final int responseLimit = Math.max(1, Math.min(data.maxBytes() <= 0 ? Integer.MAX_VALUE : data.maxBytes(),
            listener.context().fetchMaxBytes()));
        int count = 0;
        for (final FetchRequestData.FetchTopic topic : data.topics())
        {
            count += topic.partitions().size();
        }
        outcome.partitionIds = new int[count];
        outcome.fetchOffsets = new long[count];
        encoder.reset();
        int index = 0;
        for (final FetchRequestData.FetchTopic topic : data.topics())
        {
            final String name = byId ? listener.topicIds().nameOf(topic.topicId(), states) : topic.topic();
            final FetchResponseData.FetchableTopicResponse topicResponse =
                new FetchResponseData.FetchableTopicResponse();
            if (byId)
            {
                topicResponse.setTopicId(topic.topicId());
            }
            else
            {
                topicResponse.setTopic(topic.topic());
            }
            outcome.response.responses().add(topicResponse);
            for (final FetchRequestData.FetchPartition partition : topic.partitions())
            {
                final FetchResponseData.PartitionData partitionData = new FetchResponseData.PartitionData()
                    .setPartitionIndex(partition.partition()).setHighWatermark(-1).setLastStableOffset(-1)
                    .setLogStartOffset(-1).setRecords(MemoryRecords.EMPTY);
                topicResponse.partitions().add(partitionData);
                outcome.partitionIds[index] = -1;
                outcome.fetchOffsets[index] = partition.fetchOffset();
                final int current = index++;
                final Errors error;
                if (null == name || !KafkaTopics.exists(states, name))
                {
                    error = byId ? Errors.UNKNOWN_TOPIC_ID : Errors.UNKNOWN_TOPIC_OR_PARTITION;
                }
                else
                {
                    final int partitionId = null == partitions ? -1 :
                        partitions.partitionIdOf(new TopicPartition(name, partition.partition()));
                    outcome.partitionIds[current] = partitionId;
                    error = readPartition(partitions, partitionId, partition, partitionData, outcome,
                        responseLimit, KafkaTopics.partitionExists(states, name, partition.partition()));
                }
                if (error != Errors.NONE)
                {
                    partitionData.setErrorCode(error.code());
                    outcome.anyError = true;
                }
            }
        }
        return outcome;
    }

    private Errors readPartition(final LeaderPartitions partitions, final int partitionId,
        final FetchRequestData.FetchPartition partition, final FetchResponseData.PartitionData partitionData,
        final Outcome outcome, final int responseLimit, final boolean exists)
    {
        if (partitionId < 0 || !partitions.isLeading(partitionId))
        {
            return exists ? Errors.NOT_LEADER_OR_FOLLOWER : Errors.UNKNOWN_TOPIC_OR_PARTITION;
        }
        final int epoch = partitions.leaderEpoch(partitionId);
        if (partition.currentLeaderEpoch() >= 0 && partition.currentLeaderEpoch() != epoch)
        {
            return partition.currentLeaderEpoch() < epoch ? Errors.FENCED_LEADER_EPOCH : Errors.UNKNOWN_LEADER_EPOCH;
        }
        final long highWatermark = partitions.highWatermark(partitionId);
        final long logStart = partitions.logStartOffset(partitionId);
        final long logEnd = partitions.logEndOffset(partitionId);
        partitionData.setHighWatermark(highWatermark).setLastStableOffset(highWatermark).setLogStartOffset(logStart);
        final long fetchOffset = partition.fetchOffset();
        if (fetchOffset < logStart || fetchOffset > logEnd)
        {
            return Errors.OFFSET_OUT_OF_RANGE;
        }
        final int remaining = responseLimit - outcome.bytes;
        if (fetchOffset >= highWatermark || (remaining <= 0 && outcome.bytes > 0))
        {
            return Errors.NONE;
        }
        final LogReader reader = readers.reader(partitionId, epoch);
        if (null == reader)
        {
            return Errors.NOT_LEADER_OR_FOLLOWER;
        }
        final int start = encoder.length();
        try
        {
            reader.seek(fetchOffset);
            reader.pollBatches(encode, highWatermark, Math.max(1, Math.min(partition.partitionMaxBytes(), remaining)));
        }
        catch (final StorageException ex)
        {
            readers.close(partitionId);
            return ex.code() == StorageErrorCode.OFFSET_OUT_OF_RANGE ? Errors.OFFSET_OUT_OF_RANGE :
                Errors.NOT_LEADER_OR_FOLLOWER;
        }
        final int length = encoder.length() - start;
        if (length > 0)
        {
            outcome.withRecords.add(partitionData);
            outcome.ranges.add(new int[] {start, length});
            outcome.bytes += length;
        }
        return Errors.NONE;
    }

    void onClose(final KafkaConnection connection)
    {
        parked.removeIf((p) -> p.request.connection == connection);
    }

    void close()
    {
        parked.clear();
        readers.close();
    }
}
