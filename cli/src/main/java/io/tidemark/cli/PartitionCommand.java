package io.tidemark.cli;

import io.tidemark.client.remote.ClientConfig;
import io.tidemark.replication.protocol.PartitionState;
import io.tidemark.replication.PartitionStateFile;
import io.tidemark.store.ConfigException;
import io.tidemark.zookeeper.ZooKeeperPartitionRepair;
import io.tidemark.zookeeper.ZooKeeperStoreException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.Callable;

/** {@code tidemark partition repair}: rewrite a damaged partition state from a host's view of it. */
@Command(
    name = "partition",
    mixinStandardHelpOptions = true,
    description = {"Partitions of a cluster of host processes: repair a damaged partition state.",
        "Exit code: as the subcommand's."},
    subcommands = {PartitionCommand.Repair.class})
final class PartitionCommand implements Callable<Integer>
{
    @Spec
    CommandSpec spec;

    @Override
    public Integer call()
    {
        throw new ParameterException(spec.commandLine(), "Missing required subcommand (repair)");
    }

    /** {@code tidemark partition repair}. */
    @Command(
        name = "repair",
        mixinStandardHelpOptions = true,
        description = {
            "Rewrite a damaged (unreadable, inconsistent or missing) partition state in ZooKeeper from a host's " +
                "view of it: the state the host last applied, kept beside its replica's log (partition.state in " +
                "the host directory). With several --host-dir, the newest view (leader epoch, then version) wins. " +
                "The state written has the znode's next version and a leader epoch one above the view's, so that " +
                "every host applies it; the controller, which has the partition quarantined, serves it again " +
                "within seconds. A readable state is left alone unless --force.",
            "Exit code: 0 when written (or, with --dry-run, printed), 2 for a bad configuration or a state that is " +
                "not damaged, 3 when no view is found or ZooKeeper cannot be reached."},
        sortOptions = false)
    static final class Repair implements Callable<Integer>
    {
        @Spec
        CommandSpec spec;

        @Option(names = "--config", paramLabel = "FILE", required = true,
            description = "Client configuration (ZooKeeper keys and the cluster's root).")
        Path config;

        @Option(names = "--partition-id", paramLabel = "ID", required = true,
            description = "The damaged partition's id (as the controller's warning names it).")
        int partitionId;

        @Option(names = "--host-dir", paramLabel = "DIR", required = true,
            description = "A host directory holding a replica of the partition (repeatable).")
        List<Path> hostDirs = new ArrayList<>();

        @Option(names = "--dry-run", description = "Print what would be written; change nothing.")
        boolean dryRun;

        @Option(names = "--force", description = "Overwrite a partition state that is readable.")
        boolean force;

        @Override
        public Integer call()
        {
            final PrintWriter out = spec.commandLine().getOut();
            final List<PartitionState> views = new ArrayList<>();
            for (final Path dir : hostDirs)
            {
                if (!Files.isDirectory(dir))
                {
                    throw new CliException(ExitCodes.IO, "not a directory: " + dir);
                }
                try
                {
                    views.addAll(PartitionStateFile.find(dir, partitionId));
                }
                catch (final IOException ex)
                {
                    throw new CliException(ExitCodes.IO, "cannot read " + dir + ": " + ex.getMessage(), ex);
                }
            }
            final PartitionState view = views.stream().max(Comparator.comparingInt(PartitionState::leaderEpoch)
                .thenComparingInt(PartitionState::version)).orElseThrow(() -> new CliException(ExitCodes.IO,
                "no view of partition id " + partitionId + " (" + PartitionStateFile.NAME + ") in " + hostDirs));
            if (!Files.isRegularFile(config))
            {
                throw new CliException(ExitCodes.IO, "no such file: " + config);
            }
            final ZooKeeperPartitionRepair.Result result;
            try
            {
                result = ZooKeeperPartitionRepair.repair(ClientConfig.load(config).zooKeeper(), view, force,
                    dryRun);
            }
            catch (final ConfigException ex)
            {
                throw new CliException(ExitCodes.USAGE, "invalid client configuration " + config + ": " +
                    ex.getMessage(), ex);
            }
            catch (final IllegalStateException | IllegalArgumentException ex)
            {
                throw new CliException(ExitCodes.USAGE, ex.getMessage(), ex);
            }
            catch (final ZooKeeperStoreException ex)
            {
                throw new CliException(ExitCodes.IO, ex.getMessage(), ex);
            }
            out.println(result.path() + ": " + (null == result.damage() ? "readable (forced)" : result.damage()));
            out.println("host view: " + ClientOptions.describe(view) + " version=" + view.version());
            out.println((result.applied() ? "wrote: " : "would write (dry run): ") +
                ClientOptions.describe(result.written()) + " version=" + result.written().version());
            out.flush();
            return ExitCodes.OK;
        }
    }
}
