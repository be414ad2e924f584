package io.tidemark.kafka;


import org.agrona.CloseHelper;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/** The socket as it is: PLAINTEXT and SASL_PLAINTEXT. */
final class PlainTransport implements Transport
{
    private final SocketChannel channel;

    PlainTransport(final SocketChannel channel)
    {
        this.channel = channel;
    }

    @Override
    public int read(final ByteBuffer dst) throws IOException
    {
        return channel.read(dst);
    }

    @Override
    public int write(final ByteBuffer src) throws IOException
    {
        return channel.write(src);
    }

    @Override
    public boolean flush()
    {
        return true;
    }

    @Override
    public boolean hasBufferedInput()
    {
        return false;
    }

    @Override
    public boolean ready()
    {
        return true;
    }

    @Override
    public boolean wantsWrite()
    {
        return false;
    }

    @Override
    public void close()
    {
        CloseHelper.quietClose(channel);
    }
}
