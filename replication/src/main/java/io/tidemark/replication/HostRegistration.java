package io.tidemark.replication;

import io.tidemark.replication.protocol.ControlMessage;
import org.agrona.ErrorHandler;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.stream.Stream;

/**
 * A replica host's registration with the controller, and the possible power loss it must report with it. Until the
 * controller acknowledges a registration of this incarnation the host sends {@link ControlMessage.RegisterHost}
 * (a restart must be seen as one, and its power-loss flag must arrive), heartbeats after. A possible power loss
 * found at start (the machine booted since the host last started while a replica log was not closed cleanly, or
 * recovery found flushed records gone) is kept durably in {@value #POWER_LOSS_FILE} until the controller has heard
 * of it, even across further restarts.
 * <p>
 * Owns the files {@value #BOOT_FILE} and {@value #POWER_LOSS_FILE} in the host's directory and the registration
 * flags. Not thread-safe: {@link #recordBoot} and {@link #flushedDataLost} run on the starting thread before the
 * agents, the rest on the host agent's thread.
 */
final class HostRegistration
{
    static final String BOOT_FILE = "host.boot";
    /** Present from a start that detected a possible power loss until the controller acknowledged hearing of it. */
    static final String POWER_LOSS_FILE = "host.power-loss";

    private final int hostId;
    private final long incarnation;
    private final Path dir;
    private final ReplicationContext ctx;
    private final ErrorHandler errorHandler;
    private boolean registered;
    private boolean possibleDataLoss;
    private boolean startedWithPossibleDataLoss;

    HostRegistration(final int hostId, final long incarnation, final Path dir, final ReplicationContext ctx,
        final ErrorHandler errorHandler)
    {
        this.hostId = hostId;
        this.incarnation = incarnation;
        this.dir = dir;
        this.ctx = ctx;
        this.errorHandler = errorHandler;
    }

    /**
     * Record this boot in {@value #BOOT_FILE}, before the host's logs are opened: a possible data loss is found when
     * unflushed records of this host's replicas may have been lost to a power loss (the machine booted since the host
     * last started and some replica log was not closed cleanly, so it held data only in the page cache), or when
     * {@value #POWER_LOSS_FILE} is there from an earlier start.
     */
    void recordBoot()
    {
        final Path file = dir.resolve(BOOT_FILE);
        final String bootId = ctx.bootIdSupplier().apply(hostId);
        try
        {
            final boolean rebooted = Files.exists(file) && !Files.readString(file).trim().equals(bootId);
            final Path powerLoss = dir.resolve(POWER_LOSS_FILE);
            if (rebooted && !Files.exists(powerLoss) && anyLogNotClosedCleanly())
            {
                try (FileChannel channel = FileChannel.open(powerLoss, StandardOpenOption.CREATE,
                    StandardOpenOption.WRITE))
                {
                    channel.force(true);
                }
            }
            final ByteBuffer bytes = ByteBuffer.wrap(bootId.getBytes(StandardCharsets.UTF_8));
            try (FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.WRITE,
                StandardOpenOption.TRUNCATE_EXISTING))
            {
                channel.write(bytes);
                channel.force(true);
            }
            possibleDataLoss = Files.exists(powerLoss);
            startedWithPossibleDataLoss = possibleDataLoss;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot record the boot of host " + hostId, ex);
        }
    }

    /**
     * A log's recovery found that flushed records are gone (a disk that lost blocks it had acknowledged): the host
     * may have lost records it acknowledged, as after a power loss. Written durably ({@value #POWER_LOSS_FILE} and
     * its directory) before the host registers.
     */
    void flushedDataLost() throws IOException
    {
        try (FileChannel channel = FileChannel.open(dir.resolve(POWER_LOSS_FILE), StandardOpenOption.CREATE,
            StandardOpenOption.WRITE))
        {
            channel.force(true);
        }
        try (FileChannel channel = FileChannel.open(dir, StandardOpenOption.READ))
        {
            channel.force(true);
        }
        possibleDataLoss = true;
        startedWithPossibleDataLoss = true;
    }

    /** @return whether a replica log under this host lacks the store's clean-shutdown marker. */
    private boolean anyLogNotClosedCleanly() throws IOException
    {
        try (Stream<Path> dirs = Files.list(dir))
        {
            // "log.meta" marks a store log directory, ".clean-shutdown" a log that was closed cleanly
            return dirs.filter(Files::isDirectory).anyMatch((d) -> Files.exists(d.resolve("log.meta")) &&
                !Files.exists(d.resolve(".clean-shutdown")));
        }
    }

    /**
     * @param stateDigest the digest of the partition states the host has applied.
     * @return the message the host sends every heartbeat interval: its registration until the controller
     *         acknowledged it, heartbeats after.
     */
    ControlMessage livenessMessage(final long stateDigest)
    {
        return registered ? new ControlMessage.Heartbeat(hostId, incarnation, stateDigest) :
            new ControlMessage.RegisterHost(hostId, incarnation, possibleDataLoss);
    }

    /** The controller acknowledged a registration: of this incarnation, it has heard of the possible data loss. */
    void onRegistered(final long registeredIncarnation)
    {
        if (registeredIncarnation == incarnation)
        {
            registered = true;
            if (possibleDataLoss)
            {
                possibleDataLoss = false; // reported: the controller fences the replicas durably from now on
                try
                {
                    Files.deleteIfExists(dir.resolve(POWER_LOSS_FILE));
                }
                catch (final IOException ex)
                {
                    errorHandler.onError(ex);
                }
            }
        }
    }

    /** The controller ended the host's session: it registers again at its next heartbeat. */
    void onSessionExpired()
    {
        registered = false;
    }

    boolean isRegistered()
    {
        return registered;
    }

    /** @return whether this incarnation reported a possible data loss when it registered. */
    boolean startedWithPossibleDataLoss()
    {
        return startedWithPossibleDataLoss;
    }
}
