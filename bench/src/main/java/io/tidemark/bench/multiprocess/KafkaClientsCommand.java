package io.tidemark.bench.multiprocess;

import io.tidemark.bench.BenchMain;
import io.tidemark.bench.BenchOptions;
import io.tidemark.replication.Acks;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;

/**
 * {@code tidemark-bench kafka-clients}: Kafka's own KafkaProducer against Tidemark's three host processes through
 * their Kafka listeners, and against a real three-broker Kafka, in one run ({@link MultiProcessBench} with
 * {@link Comparison#KAFKA_CLIENTS}). The workload of issue 19: 100 B records, linger 5 ms, batch 16 KiB, acks=all,
 * RF=3, min.insync.replicas=2, 1 and 16 partitions, each saturated and at 10,000 records/s open loop; the report
 * gives records/s, p50/p99/p99.9 at the fixed rate, server CPU per record for both, and the ratios.
 * <p>
 * picocli builds one instance per execution; not thread-safe.
 */
@Command(
    name = "kafka-clients",
    mixinStandardHelpOptions = true,
    description = {
        "Kafka's own KafkaProducer (kafka-clients, in this JVM) against Tidemark's Kafka listener and against a " +
            "real Kafka, in one invocation, one at a time: a real Apache Kafka (3 KRaft nodes, each a JVM of its " +
            "own from the Kafka server jars that module kafka-peer collects) and Tidemark (3 host JVMs with " +
            "kafka.listener on, io.tidemark.host.HostMain from this jar, with a ZooKeeper JVM), RF=3, " +
            "min.insync.replicas=2, acks=all, the same producer settings for both. Cells: each partition count " +
            "saturated and at a fixed rate (open loop from each record's due time, coordinated omission " +
            "corrected); targets alternate per run. Writes perf-results/local/<date>_kafka-clients-<sha>/ with " +
            "records/s, latency percentiles, server CPU per record and the goal ratios (Tidemark >= 2x Kafka's " +
            "records/s, <= 1/2 of its p99). About 7 minutes for the first run (with the profiles) and 6 for each " +
            "further one on 2 cores with the defaults."})
public final class KafkaClientsCommand implements Callable<Integer>
{
    /** Where each host's Kafka listener binds: loopback, a free port each (registered in ZooKeeper). */
    static final String LOOPBACK_LISTENER = "127.0.0.1:0";

    @Spec
    CommandSpec spec;

    @Mixin
    BenchOptions.Results results;

    @Mixin
    BenchOptions.Runs runs;

    @Mixin
    BenchOptions.Window window;

    @Mixin
    ClusterOptions cluster;

    @Option(names = "--targets", split = ",", paramLabel = "LIST", defaultValue = "kafka,tidemark",
        description = "Systems to run, in order (reversed every other run): kafka, tidemark (default: " +
            "${DEFAULT-VALUE}).")
    List<String> targets = new ArrayList<>();

    @Option(names = "--partitions", split = ",", paramLabel = "LIST", defaultValue = "1,16",
        description = "Partition counts, a topic each (default: ${DEFAULT-VALUE}).")
    List<Integer> partitions = new ArrayList<>();

    @Override
    public Integer call() throws Exception
    {
        final MultiProcessPlan plan;
        try
        {
            plan = cluster.plan(targets, List.of(Acks.ALL), partitions, 0, 0, false,
                Map.of(TidemarkTarget.KAFKA_LISTENER, LOOPBACK_LISTENER), window, runs).validate();
        }
        catch (final IllegalArgumentException ex)
        {
            throw new CommandLine.ParameterException(spec.commandLine(), ex.getMessage(), ex);
        }
        return new MultiProcessBench(Comparison.KAFKA_CLIENTS, plan, spec.commandLine().getOut()).run(results.dir(),
            BenchMain.commandLineText(spec.commandLine().getParseResult().originalArgs()));
    }
}
