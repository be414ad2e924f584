package io.tidemark.host;

import io.tidemark.replication.spi.Transport;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.MessageHandler;

/**
 * A {@link Transport} that can cut its host off the network, for the fault drills: while isolated every send fails
 * and every message received is consumed and dropped, as if the host's network were cut (its ZooKeeper session is not
 * affected). Wraps the host's Aeron transport ({@link TidemarkHost#start(HostConfig, java.util.function.UnaryOperator)}).
 */
final class IsolatingTransport implements Transport
{
    private static final RequestHandler DROP_REQUEST = (fromHost, msgTypeId, buffer, index, length) ->
    {
    };
    private static final MessageHandler DROP_RESPONSE = (msgTypeId, buffer, index, length) ->
    {
    };

    private final Transport delegate;
    private volatile boolean isolated;

    IsolatingTransport(final Transport delegate)
    {
        this.delegate = delegate;
    }

    void isolate(final boolean isolated)
    {
        this.isolated = isolated;
    }

    @Override
    public boolean sendRequest(final int fromHost, final int toHost, final int msgTypeId, final DirectBuffer buffer,
        final int offset, final int length)
    {
        return !isolated && delegate.sendRequest(fromHost, toHost, msgTypeId, buffer, offset, length);
    }

    @Override
    public boolean sendResponse(final int fromHost, final int toHost, final int msgTypeId, final DirectBuffer buffer,
        final int offset, final int length)
    {
        return !isolated && delegate.sendResponse(fromHost, toHost, msgTypeId, buffer, offset, length);
    }

    @Override
    public int pollRequests(final int host, final RequestHandler handler, final int limit)
    {
        return delegate.pollRequests(host, isolated ? DROP_REQUEST : handler, limit);
    }

    @Override
    public int pollResponses(final int host, final int fromHost, final MessageHandler handler, final int limit)
    {
        return delegate.pollResponses(host, fromHost, isolated ? DROP_RESPONSE : handler, limit);
    }

    @Override
    public void hostUp(final int host)
    {
        delegate.hostUp(host);
    }

    @Override
    public void hostDown(final int host)
    {
        delegate.hostDown(host);
    }

    @Override
    public int maxMessageLength()
    {
        return delegate.maxMessageLength();
    }
}
