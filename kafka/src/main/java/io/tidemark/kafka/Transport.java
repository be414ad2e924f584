package io.tidemark.kafka;

import java.io.IOException;
import java.nio.ByteBuffer;

/**
 * The bytes of one client connection: the socket itself (PLAINTEXT, SASL_PLAINTEXT) or TLS over it (SSL,
 * SASL_SSL, {@link TlsTransport}). Never blocks: reads and writes take what the socket takes now. Owned by the
 * listener's agent thread.
 */
interface Transport
{
    /**
     * Read application bytes into {@code dst}.
     *
     * @return bytes read (0 when none are available now, or while a TLS handshake is under way), -1 at the end of
     *         the stream (the peer closed, or sent TLS close_notify).
     * @throws IOException when the connection failed (a broken TLS record, a refused renegotiation, ...).
     */
    int read(ByteBuffer dst) throws IOException;

    /**
     * Write application bytes from {@code src}, as many as the socket takes now.
     *
     * @return bytes of {@code src} taken.
     */
    int write(ByteBuffer src) throws IOException;

    /**
     * Write bytes the transport holds (TLS records already sealed, handshake messages).
     *
     * @return true when nothing is left to write.
     */
    boolean flush() throws IOException;

    /** @return whether application bytes were read from the socket but not yet taken by {@link #read}. */
    boolean hasBufferedInput();

    /** @return whether the transport is ready for application bytes (a TLS handshake finished). */
    boolean ready();

    /** @return whether the transport wants to write although the application has nothing (handshake, close). */
    boolean wantsWrite();

    /** Say goodbye (TLS close_notify, as far as the socket takes it now) and close the socket. */
    void close();
}
