package io.tidemark.replication;

import io.tidemark.replication.spi.Transport;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.MessageHandler;

/**
 * A test transport that hands every call to {@link #delegate()}: a test overrides only the calls it watches or
 * changes.
 */
abstract class ForwardingTransport implements Transport
{
    /** @return the transport every call goes to. */
    abstract Transport delegate();

    @Override
    public boolean sendRequest(final int fromHost, final int toHost, final int msgTypeId, final DirectBuffer buffer,
        final int offset, final int length)
    {
        return delegate().sendRequest(fromHost, toHost, msgTypeId, buffer, offset, length);
    }

    @Override
    public boolean sendResponse(final int fromHost, final int toHost, final int msgTypeId, final DirectBuffer buffer,
        final int offset, final int length)
    {
        return delegate().sendResponse(fromHost, toHost, msgTypeId, buffer, offset, length);
    }

    @Override
    public int pollRequests(final int host, final RequestHandler handler, final int limit)
    {
        return delegate().pollRequests(host, handler, limit);
    }

    @Override
    public int pollResponses(final int host, final int fromHost, final MessageHandler handler, final int limit)
    {
        return delegate().pollResponses(host, fromHost, handler, limit);
    }

    @Override
    public void hostUp(final int host)
    {
        delegate().hostUp(host);
    }

    @Override
    public void hostDown(final int host)
    {
        delegate().hostDown(host);
    }
}
