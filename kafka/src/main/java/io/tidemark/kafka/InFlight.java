package io.tidemark.kafka;

import org.apache.kafka.common.protocol.ApiMessage;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.ObjectSerializationCache;
import org.apache.kafka.common.message.ResponseHeaderData;
import org.apache.kafka.common.requests.RequestHeader;

import java.nio.ByteBuffer;

/**
 * One request of a connection, from the moment it was read until its response is written. A connection answers
 * its requests in the order they came (Kafka clients match responses to requests by that order), so a request
 * answered early waits behind an earlier one that is still waiting (an acks=all produce, a parked fetch, a join).
 * <p>
 * Completed on the listener's agent thread only ({@link KafkaListener#complete} hands results from other threads
 * over to it).
 */
final class InFlight
{
    final KafkaConnection connection;
    final RequestHeader header;
    /** Bytes of {@code kafka.queued.max.request.bytes} this request holds until its answer is taken for writing. */
    final int reserved;
    private ByteBuffer response;
    private boolean done;
    private boolean closeAfter;

    InFlight(final KafkaConnection connection, final RequestHeader header, final int reserved)
    {
        this.connection = connection;
        this.header = header;
        this.reserved = reserved;
    }

    short version()
    {
        return header.apiVersion();
    }

    boolean isDone()
    {
        return done;
    }

    ByteBuffer response()
    {
        return response;
    }

    boolean closeAfter()
    {
        return closeAfter;
    }

    /** Answer with a response body of this request's API and version. */
    void respond(final ApiMessage body)
    {
        response = serialize(header, body, header.apiVersion());
        done = true;
    }

    /** Answer with a body written at another version (ApiVersions falls back to version 0). */
    void respond(final ApiMessage body, final short version, final short headerVersion)
    {
        response = serialize(header.correlationId(), body, version, headerVersion);
        done = true;
    }

    /** Complete without a response (acks=0 produce). */
    void noResponse()
    {
        done = true;
    }

    /** Answer, then close the connection once this answer is written (a failed authentication). */
    void respondAndClose(final ApiMessage body)
    {
        respond(body);
        closeAfter = true;
    }

    /** Complete without a response and close the connection once earlier responses are written. */
    void closeConnection()
    {
        done = true;
        closeAfter = true;
    }

    static ByteBuffer serialize(final RequestHeader header, final ApiMessage body, final short version)
    {
        return serialize(header.correlationId(), body, version, header.apiKey().responseHeaderVersion(version));
    }

    static ByteBuffer serialize(final int correlationId, final ApiMessage body, final short version,
        final short headerVersion)
    {
        final ResponseHeaderData header = new ResponseHeaderData().setCorrelationId(correlationId);
        final ObjectSerializationCache cache = new ObjectSerializationCache();
        final int size = header.size(cache, headerVersion) + body.size(cache, version);
        final ByteBuffer buffer = ByteBuffer.allocate(4 + size);
        buffer.putInt(size);
        final ByteBufferAccessor accessor = new ByteBufferAccessor(buffer);
        header.write(accessor, cache, headerVersion);
        body.write(accessor, cache, version);
        buffer.flip();
        return buffer;
    }
}
