package io.tidemark.replication;

import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.CompositeAgent;
import org.agrona.concurrent.DynamicCompositeAgent;
import org.agrona.concurrent.IdleStrategy;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Runs groups of agents (a host's agents, the controller) on threads chosen by the
 * {@link ReplicationContext.ThreadingMode}: a thread per agent, a thread per group, one thread for all (in
 * {@code LATENCY}, one spinning thread for all), or none (the application invokes them, which with a manual clock
 * makes the whole pipeline deterministic); plus, in {@code LATENCY} or when asked
 * ({@link ReplicationContext#logMaintenanceThread()}), one log-maintenance thread that parks when idle and runs the
 * replica logs' own agents.
 * Starting and stopping groups is thread-safe; stopping waits until the group's agents will not run again.
 */
final class AgentScheduler implements AutoCloseable
{
    private final ReplicationContext.ThreadingMode mode;
    private final Supplier<IdleStrategy> idleStrategies;
    private final ErrorHandler errorHandler;
    private final Map<String, List<AgentRunner>> runners = new LinkedHashMap<>();
    private final Map<String, Agent> groups = new LinkedHashMap<>();
    private final Map<String, List<Agent>> members = new LinkedHashMap<>();
    private volatile Agent[] invoked = new Agent[0];
    private final Map<String, Agent> housekeepingGroups = new LinkedHashMap<>();
    private DynamicCompositeAgent shared;
    private AgentRunner sharedRunner;
    private DynamicCompositeAgent housekeeping;
    private AgentRunner housekeepingRunner;

    /**
     * @param mode                   which threads run the groups' agents.
     * @param logMaintenanceIdle     how the log-maintenance thread idles; null for no such thread.
     * @param idleStrategies         the idle strategy of each agent thread.
     * @param errorHandler           agent errors.
     */
    AgentScheduler(final ReplicationContext.ThreadingMode mode, final Supplier<IdleStrategy> logMaintenanceIdle,
        final Supplier<IdleStrategy> idleStrategies, final ErrorHandler errorHandler)
    {
        this.mode = mode;
        this.idleStrategies = idleStrategies;
        this.errorHandler = errorHandler;
        if (mode == ReplicationContext.ThreadingMode.SHARED || mode == ReplicationContext.ThreadingMode.LATENCY)
        {
            shared = new DynamicCompositeAgent("tidemark-shared");
            sharedRunner = new AgentRunner(mode == ReplicationContext.ThreadingMode.LATENCY ?
                new BusySpinIdleStrategy() : idleStrategies.get(), errorHandler, null, shared);
            AgentRunner.startOnThread(sharedRunner);
            awaitActive(shared);
        }
        if (null != logMaintenanceIdle)
        {
            housekeeping = new DynamicCompositeAgent("tidemark-log-maintenance");
            housekeepingRunner = new AgentRunner(logMaintenanceIdle.get(), errorHandler, null, housekeeping);
            AgentRunner.startOnThread(housekeepingRunner);
            awaitActive(housekeeping);
        }
    }

    private static void awaitActive(final DynamicCompositeAgent composite)
    {
        while (composite.status() != DynamicCompositeAgent.Status.ACTIVE)
        {
            Thread.yield();
        }
    }

    /**
     * Start a group whose housekeeping agent (a host's replica logs' agents) runs on the log-maintenance thread
     * ({@link ReplicationContext#logMaintenanceThread()}); without that thread the caller passes none and the
     * group's agents run them.
     */
    synchronized void start(final String group, final List<Agent> agents, final Agent housekeepingAgent)
    {
        start(group, agents);
        if (null != housekeepingAgent)
        {
            if (null == housekeeping)
            {
                throw new IllegalStateException("threading mode " + mode + " has no housekeeping thread");
            }
            add(housekeeping, housekeepingAgent);
            housekeepingGroups.put(group, housekeepingAgent);
        }
    }

    private static void add(final DynamicCompositeAgent composite, final Agent agent)
    {
        while (!composite.tryAdd(agent))
        {
            Thread.yield();
        }
        while (!composite.hasAddAgentCompleted())
        {
            Thread.yield();
        }
    }

    private static void remove(final DynamicCompositeAgent composite, final Agent agent)
    {
        while (!composite.tryRemove(agent))
        {
            Thread.yield();
        }
        while (!composite.hasRemoveAgentCompleted())
        {
            Thread.yield();
        }
    }

    synchronized void start(final String group, final List<Agent> agents)
    {
        if (groups.containsKey(group))
        {
            throw new IllegalStateException("agent group already running: " + group);
        }
        final Agent composite = agents.size() == 1 ? agents.get(0) : new CompositeAgent(agents);
        groups.put(group, composite);
        members.put(group, List.copyOf(agents));
        switch (mode)
        {
            case DEDICATED:
                final List<AgentRunner> list = new ArrayList<>();
                for (final Agent agent : agents)
                {
                    final AgentRunner runner = new AgentRunner(idleStrategies.get(), errorHandler, null, agent);
                    AgentRunner.startOnThread(runner);
                    list.add(runner);
                }
                runners.put(group, list);
                break;
            case PER_HOST:
                final AgentRunner runner = new AgentRunner(idleStrategies.get(), errorHandler, null, composite);
                AgentRunner.startOnThread(runner);
                runners.put(group, List.of(runner));
                break;
            case SHARED:
            case LATENCY:
                add(shared, composite);
                break;
            default:
                composite.onStart();
                invoked = groups.values().toArray(new Agent[0]);
                break;
        }
    }

    /** Stop a group: once this returns, none of its agents runs again. */
    synchronized void stop(final String group)
    {
        final Agent housekeepingAgent = housekeepingGroups.remove(group);
        if (null != housekeepingAgent)
        {
            remove(housekeeping, housekeepingAgent);
        }
        final Agent composite = groups.remove(group);
        members.remove(group);
        if (null == composite)
        {
            return;
        }
        switch (mode)
        {
            case DEDICATED:
            case PER_HOST:
                for (final AgentRunner runner : runners.remove(group))
                {
                    runner.close();
                }
                break;
            case SHARED:
            case LATENCY:
                remove(shared, composite);
                break;
            default:
                invoked = groups.values().toArray(new Agent[0]);
                composite.onClose();
                break;
        }
    }

    /**
     * Run one duty cycle of every agent, in a fixed order (controller first, then hosts by id). INVOKER mode only.
     *
     * @return work done.
     */
    int invoke()
    {
        if (mode != ReplicationContext.ThreadingMode.INVOKER)
        {
            throw new IllegalStateException("threading mode is " + mode + ", not INVOKER");
        }
        int work = 0;
        for (final Agent agent : invoked)
        {
            try
            {
                work += agent.doWork();
            }
            catch (final Exception ex)
            {
                errorHandler.onError(ex);
            }
        }
        return work;
    }

    /**
     * @return every agent of every running group, individually, in group order (INVOKER mode: for a simulation
     *         that chooses which agent runs next).
     */
    synchronized List<Agent> agents()
    {
        final List<Agent> all = new ArrayList<>();
        members.values().forEach(all::addAll);
        return all;
    }

    @Override
    public synchronized void close()
    {
        for (final String group : new ArrayList<>(groups.keySet()))
        {
            stop(group);
        }
        if (null != sharedRunner)
        {
            sharedRunner.close();
        }
        if (null != housekeepingRunner)
        {
            housekeepingRunner.close();
        }
    }
}
