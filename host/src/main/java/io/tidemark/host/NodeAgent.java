package io.tidemark.host;

import io.tidemark.replication.ReplicaNode;
import org.agrona.concurrent.Agent;

/** Runs the replica host's agents (INVOKER mode) on the host's own thread; holds no state of its own. */
final class NodeAgent implements Agent
{
    private final ReplicaNode node;

    NodeAgent(final ReplicaNode node)
    {
        this.node = node;
    }

    @Override
    public int doWork()
    {
        return node.invokeAgents();
    }

    @Override
    public String roleName()
    {
        return "tidemark-host-" + node.hostId();
    }
}
