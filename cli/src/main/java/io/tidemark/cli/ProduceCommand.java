package io.tidemark.cli;

import io.tidemark.client.ClusterConnection;
import io.tidemark.client.ProducerContext;
import io.tidemark.replication.ReplicationCluster;
import io.tidemark.store.BatchClaim;
import io.tidemark.store.Log;
import io.tidemark.store.LogContext;
import io.tidemark.store.format.RecordBatchDescriptor;
import io.tidemark.store.format.RecordDescriptor;
import io.tidemark.store.StorageException;
import org.agrona.concurrent.UnsafeBuffer;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code tidemark produce}: records from stdin (one per line) into a local log or a replicated topic. */
@Command(
    name = "produce",
    mixinStandardHelpOptions = true,
    description = {
        "Append records read one per line (UTF-8) from stdin or --input: to a local log directory (opened, and " +
            "created when it does not exist, like an application would; lines that arrive together go in one " +
            "batch), or to a topic of an embedded replicated cluster (--cluster: the cluster is started in this " +
            "process, the topic created when missing, and every record acknowledged with --acks before the " +
            "command returns).",
        "With --key-separator each line is split at the first separator into key and value; a line without it " +
            "has a null key.",
        "Prints the offsets written. Exit code: 0 when every record was written (acknowledged), 2 for bad " +
            "arguments or configuration or a record over max.message.bytes, 3 on an I/O error, 4 when the log " +
            "is locked by a running process, 6 when a replicated produce failed."},
    sortOptions = false)
final class ProduceCommand implements Callable<Integer>
{
    @Spec
    CommandSpec spec;

    @Mixin
    TargetOptions target;

    @Mixin
    LineInput lines;

    @Option(names = "--batch-records", paramLabel = "N", defaultValue = "500",
        description = "Local log: most records in one batch (default: ${DEFAULT-VALUE}).")
    int batchRecords;

    @Mixin
    LogOptions logOptions;

    @Option(names = "--acks", paramLabel = "ACKS", defaultValue = "all",
        description = "Cluster: all, 0, 1 or a replica count (default: ${DEFAULT-VALUE}).")
    String acks;

    @Option(names = "--partitions", paramLabel = "N",
        description = "Cluster: partitions of the topic when it is created (default: 1, or --partition + 1).")
    Integer partitions;

    @Option(names = "--replication-factor", paramLabel = "N",
        description = "Cluster: replication factor of the topic when it is created (default: min(3, hosts)).")
    Integer replicationFactor;

    @Option(names = "--producer-config", paramLabel = "KEY=VALUE",
        description = "Cluster: a producer configuration key (linger.ms, delivery.timeout.ms, ...); repeatable.")
    Map<String, String> producerConfig = new LinkedHashMap<>();

    @Override
    public Integer call() throws IOException
    {
        target.validate(spec, false);
        if (batchRecords < 1)
        {
            throw new ParameterException(spec.commandLine(), "--batch-records must be >= 1");
        }
        if (!target.isCluster() && !target.producerOptionsUnset(this))
        {
            throw new ParameterException(spec.commandLine(),
                "--acks, --partitions, --replication-factor and --producer-config go with --cluster");
        }
        final PrintWriter out = spec.commandLine().getOut();
        try (BufferedReader in = lines.open())
        {
            return target.isCluster() ? produceToCluster(in, out) : produceToLog(in, out);
        }
    }

    private int produceToLog(final BufferedReader in, final PrintWriter out) throws IOException
    {
        final boolean created = !Files.exists(target.logDir);
        final LogContext ctx = logOptions.context(target.logDir);
        try (Log log = Log.open(ctx))
        {
            final LocalBatcher batcher = new LocalBatcher(log);
            String line;
            long lineNumber = 0;
            while (null != (line = in.readLine()))
            {
                lineNumber++;
                batcher.add(Lines.split(line, lines.keySeparator), lineNumber);
                if (batcher.pending() >= batchRecords || !in.ready())
                {
                    batcher.commit();
                }
            }
            batcher.commit();
            out.println("produced " + batcher.count + " record(s) to " + target.logDir +
                (created ? " (new log)" : "") +
                (batcher.count > 0 ? ": offsets " + batcher.first + ".." + batcher.last : "") +
                ", log end offset " + log.logEndOffset());
        }
        out.flush();
        return ExitCodes.OK;
    }

    /** Packs consecutive lines into one batch, up to max.message.bytes. */
    private static final class LocalBatcher
    {
        private final Log log;
        private final int maxBatchLength;
        private final List<byte[][]> pending = new ArrayList<>();
        private int pendingLength = RecordBatchDescriptor.HEADER_LENGTH;
        private long firstLine;
        private long first = -1;
        private long last = -1;
        private long count;

        LocalBatcher(final Log log)
        {
            this.log = log;
            this.maxBatchLength = log.context().maxMessageBytes();
        }

        int pending()
        {
            return pending.size();
        }

        void add(final String[] keyValue, final long lineNumber)
        {
            final byte[] key = null == keyValue[0] ? null : keyValue[0].getBytes(StandardCharsets.UTF_8);
            final byte[] value = keyValue[1].getBytes(StandardCharsets.UTF_8);
            final int length = RecordDescriptor.recordLength(null == key ? -1 : key.length, value.length, 0);
            if (!pending.isEmpty() && pendingLength + length > maxBatchLength)
            {
                commit();
            }
            if (pending.isEmpty())
            {
                firstLine = lineNumber;
            }
            pending.add(new byte[][] {key, value});
            pendingLength += length;
        }

        void commit()
        {
            if (pending.isEmpty())
            {
                return;
            }
            try
            {
                final BatchClaim claim = log.tryClaim(pendingLength);
                for (final byte[][] record : pending)
                {
                    final byte[] key = record[0];
                    final byte[] value = record[1];
                    claim.addRecord(BatchClaim.NOW, null == key ? null : new UnsafeBuffer(key), 0,
                        null == key ? -1 : key.length, new UnsafeBuffer(value), 0, value.length);
                }
                final long base = claim.commit();
                first = first < 0 ? base : first;
                last = base + pending.size() - 1;
                count += pending.size();
            }
            catch (final StorageException ex)
            {
                throw new StorageException(ex.code(), "line " + firstLine +
                    (pending.size() > 1 ? " and the " + (pending.size() - 1) + " after it" : "") + " not written (" +
                    count + " record(s) before were): " + ex.getMessage().substring(ex.code().name().length() + 2),
                    ex);
            }
            pending.clear();
            pendingLength = RecordBatchDescriptor.HEADER_LENGTH;
        }
    }

    private int produceToCluster(final BufferedReader in, final PrintWriter out) throws IOException
    {
        final Map<String, String> producerProperties = new LinkedHashMap<>(producerConfig);
        producerProperties.putIfAbsent(ProducerContext.ACKS, acks);
        final ProducerContext producerContext = ProducerContext.fromProperties(producerProperties);
        final PrintWriter err = spec.commandLine().getErr();
        try (ReplicationCluster cluster = target.startCluster(logOptions))
        {
            final String topic = target.topic;
            if (cluster.partitions(topic).isEmpty())
            {
                final int count = null != partitions ? partitions : null != target.partition ? target.partition + 1 : 1;
                final int factor = null != replicationFactor ? replicationFactor : Math.min(3, cluster.hostCount());
                cluster.createTopic(topic, count, factor);
                err.println("created topic " + topic + " (" + count + " partition(s), replication factor " + factor +
                    ") in " + target.cluster);
            }
            target.awaitLeaders(cluster);
            final int partitionCount = cluster.partitions(topic).size();
            if (null != target.partition && target.partition >= partitionCount)
            {
                throw new ParameterException(spec.commandLine(), "topic " + topic + " has " + partitionCount +
                    " partition(s): no partition " + target.partition);
            }
            final LineSender sender = new LineSender();
            sender.send(ClusterConnection.of(cluster), producerContext, topic, target.partition, lines.keySeparator,
                in);
            out.println(sender.summary(topic, "acks=" + acks));
            out.flush();
            sender.checkNoneFailed();
        }
        return ExitCodes.OK;
    }
}
