package io.tidemark.replication;

import io.tidemark.replication.protocol.ControlMessage;
import io.tidemark.store.StorageErrorCode;
import io.tidemark.store.StorageException;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.EpochClock;

import java.util.function.Consumer;

/**
 * The duty cycle of one replica host: applies partition updates from the controller (becoming leader or
 * follower; a new replica opened by the {@link ReplicaOpener} where the host has one), heartbeats, serves fetch and epoch requests ({@link FetchServer}), drains produce rings and completes
 * acknowledgements ({@link ProduceHandler}), shrinks the ISR of stuck followers (checked every
 * {@code replica.lag.time.max.ms / 8}, so a follower that stopped leaves within 1.125 times the lag time plus the
 * controller's round trip; with {@code replica.lag.max.messages} set, a follower that far behind leaves at the same
 * check), checkpoints high watermarks, runs its replicas' log agents, and updates
 * counters (with {@link ReplicationContext#logMaintenanceThread()} the log agents run on their own thread instead).
 * Errors go to the error handler, never out of the thread.
 */
final class ReplicaHostAgent implements Agent
{
    private final ReplicaHost host;
    private final ReplicationContext ctx;
    private final EpochClock clock;
    private final ErrorHandler errorHandler;
    private final Consumer<ControlMessage> controlHandler = this::onControl;
    private final boolean runsLogAgents;
    private long nextHeartbeatMs;

    ReplicaHostAgent(final ReplicaHost host, final ReplicationContext ctx, final ErrorHandler errorHandler)
    {
        this.host = host;
        this.ctx = ctx;
        this.clock = ctx.epochClock();
        this.errorHandler = errorHandler;
        this.runsLogAgents = !ctx.logMaintenanceThread();
    }

    @Override
    public int doWork()
    {
        if (host.failStop().stopped())
        {
            host.announceStop();
            return 0;
        }
        final long now = clock.time();
        int work = host.channel().drainHost(host.hostId(), controlHandler);
        try
        {
            work += host.collectOpened();
        }
        catch (final StorageException ex)
        {
            onStorageFailure("opening a replica", ex);
        }
        catch (final RuntimeException ex)
        {
            errorHandler.onError(ex);
        }
        if (now >= nextHeartbeatMs)
        {
            nextHeartbeatMs = now + ctx.hostHeartbeatIntervalMs();
            host.channel().toController(host.hostId(), host.livenessMessage());
        }
        work += host.fetchServer().poll();
        for (final Replica replica : host.replicas())
        {
            try
            {
                work += dutyOf(replica, now);
                if (replica.log.isOffline())
                {
                    host.failStop().stop("the log of " + replica.topicPartition + " went offline", new StorageException(
                        StorageErrorCode.LOG_OFFLINE, "log " + replica.log.directory() + " is offline"));
                }
            }
            catch (final StorageException ex)
            {
                onStorageFailure(replica.topicPartition.toString(), ex);
            }
            catch (final Exception ex)
            {
                errorHandler.onError(ex);
            }
        }
        host.fetchServer().flush(); // the parked fetches answered in this cycle, a message per follower host
        host.onDutyCycle(work > 0);
        return work;
    }

    private int dutyOf(final Replica replica, final long now) throws Exception
    {
        int work = runsLogAgents ? // else ReplicaHost.housekeepingAgent()
            replica.housekeeping(now, ctx.highWatermarkCheckpointIntervalMs(), errorHandler) : 0;
        work += host.produceHandler().drain(replica);
        final LeaderState leader = replica.leaderState;
        if (null != leader)
        {
            work += host.fetchServer().serveParked(replica, leader, now);
            work += host.produceHandler().completeAcks(replica, leader);
            if (now >= leader.nextIsrCheckMs)
            {
                leader.nextIsrCheckMs = now + Math.max(1, ctx.replicaLagTimeMaxMs() / 8);
                final int[] overdue = leader.overdueChange(now, ctx.lostAnswerTimeoutMs());
                if (null != overdue)
                {
                    host.resendIsrChange(replica, leader, overdue);
                }
                final int[] shrunk = leader.shrinkCandidate(now, ctx.replicaLagTimeMaxMs(),
                    ctx.replicaLagMaxMessages());
                if (null != shrunk && shrunk.length > 0)
                {
                    host.requestIsrChange(replica, leader, shrunk);
                    work++;
                }
            }
        }
        replica.updateCounters();
        return work;
    }

    private void onControl(final ControlMessage message)
    {
        try
        {
            if (message instanceof ControlMessage.PartitionUpdate update)
            {
                if (host.isRegistered())
                {
                    host.apply(update.state()); // states sent before this incarnation registered are not for it
                }
            }
            else if (message instanceof ControlMessage.AlterIsrResponse response)
            {
                if (host.isRegistered())
                {
                    host.onAlterIsrResponse(response);
                }
            }
            else if (message instanceof ControlMessage.SessionExpired)
            {
                host.onSessionExpired(); // register again at the next heartbeat
            }
            else if (message instanceof ControlMessage.Registered registered)
            {
                host.onRegistered(registered.incarnation());
            }
        }
        catch (final StorageException ex)
        {
            onStorageFailure("applying " + message, ex);
        }
        catch (final RuntimeException ex)
        {
            errorHandler.onError(ex);
        }
    }

    private void onStorageFailure(final String what, final StorageException ex)
    {
        if (FailStop.isFatal(ex))
        {
            host.failStop().stop(what, ex);
        }
        else if (ex.code() != StorageErrorCode.CLOSED)
        {
            errorHandler.onError(ex);
        }
    }

    @Override
    public String roleName()
    {
        return "tidemark-host-" + host.hostId();
    }
}
