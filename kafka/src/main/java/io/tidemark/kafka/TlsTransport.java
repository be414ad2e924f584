package io.tidemark.kafka;


import org.agrona.CloseHelper;

import javax.net.ssl.SSLEngine;
import javax.net.ssl.SSLEngineResult;
import javax.net.ssl.SSLException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;

/**
 * TLS over a non-blocking socket with the JDK's {@link SSLEngine}, for SSL and SASL_SSL listeners. Nothing here
 * blocks the listener's thread: the handshake and the record layer advance as far as the socket's bytes allow and
 * resume when the selector says it is readable or writable (the engine's delegated tasks, certificate checks, run
 * inline: they are computation, not waiting). Partial records wait for more bytes (BUFFER_UNDERFLOW), a record
 * larger than a buffer grows it up to the session's sizes (BUFFER_OVERFLOW), and sealed records the socket did not
 * take stay queued (the connection then waits for OP_WRITE).
 * <p>
 * After the handshake, a TLS 1.2 peer that starts a new one (renegotiation) is refused: the connection fails. TLS
 * 1.3's post-handshake messages (KeyUpdate, which a long-lived connection sends after enough bytes) are served.
 * close_notify from the peer ends the stream; {@link #close} sends one, as far as the socket takes it, then closes.
 * <p>
 * Owned by the listener's agent thread.
 */
final class TlsTransport implements Transport
{
    private static final ByteBuffer EMPTY = ByteBuffer.allocate(0);

    private final SocketChannel channel;
    private final SSLEngine engine;
    /** Sealed bytes read from the socket, not yet unwrapped (write mode). */
    private ByteBuffer netIn;
    /** Plain bytes unwrapped, not yet read (write mode). */
    private ByteBuffer appIn;
    /** Sealed bytes not yet written to the socket (write mode). */
    private ByteBuffer netOut;
    private boolean handshakeDone;
    private boolean eof;
    private boolean needMoreNet;
    private boolean closed;

    TlsTransport(final SocketChannel channel, final SSLEngine engine) throws SSLException
    {
        this.channel = channel;
        this.engine = engine;
        engine.beginHandshake();
        final int packet = engine.getSession().getPacketBufferSize();
        this.netIn = ByteBuffer.allocate(packet);
        this.netOut = ByteBuffer.allocate(packet);
        this.appIn = ByteBuffer.allocate(engine.getSession().getApplicationBufferSize());
    }

    @Override
    public int read(final ByteBuffer dst) throws IOException
    {
        if (!handshakeDone)
        {
            handshake();
            if (!handshakeDone)
            {
                return eof ? -1 : 0;
            }
        }
        if (appIn.position() == 0)
        {
            fill();
        }
        if (appIn.position() > 0)
        {
            appIn.flip();
            final int n = Math.min(appIn.remaining(), dst.remaining());
            final int limit = appIn.limit();
            appIn.limit(appIn.position() + n);
            dst.put(appIn);
            appIn.limit(limit);
            appIn.compact();
            return n;
        }
        return eof ? -1 : 0;
    }

    /** Unwrap records into {@link #appIn} until it holds something, the socket has no more, or the stream ended. */
    private void fill() throws IOException
    {
        while (!eof)
        {
            final SSLEngineResult result = readAndUnwrap();
            if (null == result)
            {
                return;
            }
            switch (result.getStatus())
            {
                case OK ->
                {
                    afterHandshake(result.getHandshakeStatus());
                    if (appIn.position() > 0)
                    {
                        return;
                    }
                    if (result.bytesConsumed() == 0)
                    {
                        needMoreNet = true;
                    }
                }
                case BUFFER_UNDERFLOW -> needMoreNet = true;
                case BUFFER_OVERFLOW ->
                {
                    if (appIn.position() > 0)
                    {
                        return;
                    }
                    growAppIn();
                }
                case CLOSED -> eof = true;
                default -> throw new SSLException("unexpected unwrap status " + result.getStatus());
            }
        }
    }

    /**
     * A handshake status other than none after the first handshake: TLS 1.3 post-handshake messages are served,
     * a TLS 1.2 renegotiation is refused.
     */
    private void afterHandshake(final SSLEngineResult.HandshakeStatus status) throws IOException
    {
        if (status == SSLEngineResult.HandshakeStatus.NOT_HANDSHAKING ||
            status == SSLEngineResult.HandshakeStatus.FINISHED)
        {
            return;
        }
        if (!"TLSv1.3".equals(engine.getSession().getProtocol()))
        {
            throw new SSLException("renegotiation refused: the peer started a new TLS handshake (" +
                engine.getSession().getProtocol() + ")");
        }
        SSLEngineResult.HandshakeStatus now = engine.getHandshakeStatus();
        while (now == SSLEngineResult.HandshakeStatus.NEED_TASK || now == SSLEngineResult.HandshakeStatus.NEED_WRAP)
        {
            if (now == SSLEngineResult.HandshakeStatus.NEED_TASK)
            {
                runTasks();
            }
            else if (!wrapHandshake())
            {
                return;
            }
            now = engine.getHandshakeStatus();
        }
        flush();
    }

    private void handshake() throws IOException
    {
        try
        {
            while (!handshakeDone)
            {
                if (!flush())
                {
                    return;
                }
                switch (engine.getHandshakeStatus())
                {
                    case NEED_TASK -> runTasks();
                    case NEED_WRAP ->
                    {
                        if (!wrapHandshake())
                        {
                            return;
                        }
                    }
                    case NEED_UNWRAP, NEED_UNWRAP_AGAIN ->
                    {
                        if (eof)
                        {
                            return;
                        }
                        final SSLEngineResult result = readAndUnwrap();
                        if (null == result)
                        {
                            return;
                        }
                        switch (result.getStatus())
                        {
                            case OK ->
                            {
                                if (result.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.FINISHED)
                                {
                                    handshakeDone = true;
                                }
                                else if (result.bytesConsumed() == 0 && result.bytesProduced() == 0 &&
                                    result.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_UNWRAP)
                                {
                                    needMoreNet = true;
                                }
                            }
                            case BUFFER_UNDERFLOW -> needMoreNet = true;
                            case BUFFER_OVERFLOW -> growAppIn();
                            case CLOSED ->
                            {
                                eof = true;
                                return;
                            }
                            default -> throw new SSLException("unexpected unwrap status " + result.getStatus());
                        }
                    }
                    case FINISHED, NOT_HANDSHAKING -> handshakeDone = true;
                    default -> throw new SSLException("unexpected handshake status " + engine.getHandshakeStatus());
                }
            }
            flush();
        }
        catch (final SSLException ex)
        {
            // the engine may have an alert for the peer: send it as far as the socket takes it now
            sendAlert();
            throw ex;
        }
    }

    /** @return false when the socket must drain first. */
    private boolean wrapHandshake() throws IOException
    {
        final SSLEngineResult result = engine.wrap(EMPTY, netOut);
        switch (result.getStatus())
        {
            case OK ->
            {
                if (result.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.FINISHED)
                {
                    handshakeDone = true;
                }
                return flush();
            }
            case BUFFER_OVERFLOW ->
            {
                if (!flush())
                {
                    return false;
                }
                netOut = grow(netOut, Math.max(netOut.capacity() * 2, engine.getSession().getPacketBufferSize()));
                return true;
            }
            case CLOSED -> throw new SSLException("the TLS engine closed during the handshake");
            default -> throw new SSLException("unexpected wrap status " + result.getStatus());
        }
    }

    private void sendAlert()
    {
        try
        {
            engine.closeOutbound();
            for (int i = 0; i < 4 && !engine.isOutboundDone(); i++)
            {
                if (engine.wrap(EMPTY, netOut).getStatus() != SSLEngineResult.Status.OK)
                {
                    break;
                }
            }
            flush();
        }
        catch (final IOException | RuntimeException ignore)
        {
            // best effort: the connection closes anyway
        }
    }

    /**
     * Unwrap from {@link #netIn}, reading the socket first when it holds nothing or only part of a record.
     *
     * @return the engine's result, or null when the socket has nothing more for now (or the stream ended).
     */
    private SSLEngineResult readAndUnwrap() throws IOException
    {
        if ((netIn.position() == 0 || needMoreNet) && readSocket() <= 0)
        {
            return null;
        }
        return unwrap();
    }

    /** Make room for a record's plaintext: double {@link #appIn}, to at least the session's application size. */
    private void growAppIn()
    {
        appIn = grow(appIn, Math.max(appIn.capacity() * 2, engine.getSession().getApplicationBufferSize()));
    }

    private SSLEngineResult unwrap() throws SSLException
    {
        netIn.flip();
        final SSLEngineResult result;
        try
        {
            result = engine.unwrap(netIn, appIn);
        }
        finally
        {
            netIn.compact();
        }
        if (result.getStatus() == SSLEngineResult.Status.BUFFER_UNDERFLOW &&
            netIn.position() == netIn.capacity())
        {
            final int packet = engine.getSession().getPacketBufferSize();
            if (netIn.capacity() >= packet)
            {
                throw new SSLException("a TLS record larger than " + packet + " bytes");
            }
            netIn = grow(netIn, packet);
        }
        return result;
    }

    private int readSocket() throws IOException
    {
        final int n = channel.read(netIn);
        if (n < 0)
        {
            eof = true;
        }
        else if (n > 0)
        {
            needMoreNet = false;
        }
        return n;
    }

    private void runTasks()
    {
        Runnable task;
        while (null != (task = engine.getDelegatedTask()))
        {
            task.run();
        }
    }

    @Override
    public int write(final ByteBuffer src) throws IOException
    {
        if (!handshakeDone || !flush())
        {
            return 0;
        }
        int taken = 0;
        while (src.hasRemaining())
        {
            final SSLEngineResult result = engine.wrap(src, netOut);
            taken += result.bytesConsumed();
            switch (result.getStatus())
            {
                case OK ->
                {
                    if (!flush())
                    {
                        return taken;
                    }
                }
                case BUFFER_OVERFLOW ->
                {
                    if (!flush())
                    {
                        return taken;
                    }
                    netOut = grow(netOut, Math.max(netOut.capacity() * 2,
                        engine.getSession().getPacketBufferSize()));
                }
                case CLOSED -> throw new SSLException("the TLS connection is closed");
                default -> throw new SSLException("unexpected wrap status " + result.getStatus());
            }
        }
        return taken;
    }

    @Override
    public boolean flush() throws IOException
    {
        if (netOut.position() == 0)
        {
            return true;
        }
        netOut.flip();
        try
        {
            channel.write(netOut);
        }
        finally
        {
            netOut.compact();
        }
        return netOut.position() == 0;
    }

    @Override
    public boolean hasBufferedInput()
    {
        return handshakeDone && !eof && (appIn.position() > 0 || (netIn.position() > 0 && !needMoreNet));
    }

    @Override
    public boolean ready()
    {
        return handshakeDone;
    }

    @Override
    public boolean wantsWrite()
    {
        return netOut.position() > 0 ||
            (!handshakeDone && engine.getHandshakeStatus() == SSLEngineResult.HandshakeStatus.NEED_WRAP);
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        sendAlert();
        CloseHelper.quietClose(channel);
    }

    private static ByteBuffer grow(final ByteBuffer buffer, final int capacity)
    {
        final ByteBuffer bigger = ByteBuffer.allocate(capacity);
        buffer.flip();
        bigger.put(buffer);
        return bigger;
    }
}
