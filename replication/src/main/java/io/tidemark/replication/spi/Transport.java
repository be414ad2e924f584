package io.tidemark.replication.spi;

import io.tidemark.replication.protocol.FetchMessages;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.MessageHandler;

/**
 * Carries the replication protocol's messages ({@link FetchMessages}) between replica hosts. Requests go to a
 * host's inbound queue (many senders, one consumer: the host agent); responses go to the follower fetcher on the
 * requesting host that fetches from the responding host. The protocol logic sees only this interface, so a
 * network transport between processes slots in without touching it.
 * <p>
 * Sends never block: {@code false} means back-pressure or an unreachable destination, and the protocol retries
 * (a fetcher re-sends after its backoff; an unanswered fetch is re-sent after the fetch wait).
 * Implementations are thread-safe for senders; each queue has one consumer.
 */
public interface Transport
{
    /**
     * Send a request to {@code toHost}'s inbound queue.
     *
     * @return false on back-pressure or when the destination is unreachable.
     */
    boolean sendRequest(int fromHost, int toHost, int msgTypeId, DirectBuffer buffer, int offset, int length);

    /**
     * Send a response to the fetcher on {@code toHost} that fetches from {@code fromHost}.
     *
     * @return false on back-pressure or when the destination is unreachable.
     */
    boolean sendResponse(int fromHost, int toHost, int msgTypeId, DirectBuffer buffer, int offset, int length);

    /**
     * Deliver queued requests for {@code host} to the handler, each with the host that sent it (as the transport
     * established it: over a network, the authenticated sender, never a field of the message).
     *
     * @return messages delivered.
     */
    int pollRequests(int host, RequestHandler handler, int limit);

    /**
     * Deliver queued responses from {@code fromHost} to the fetcher on {@code host}.
     *
     * @return messages delivered.
     */
    int pollResponses(int host, int fromHost, MessageHandler handler, int limit);

    /**
     * A host (re)starts: give it empty queues. Messages queued for a previous incarnation are discarded.
     */
    void hostUp(int host);

    /** A host stopped or died: messages to and from it are dropped until {@link #hostUp}. */
    void hostDown(int host);

    /**
     * @return the largest message this transport carries between the hosts that are up (a fetch response holds up to
     *         {@code replica.fetch.max.bytes} of batches plus {@link #FETCH_RESPONSE_OVERHEAD}). The cluster checks it
     *         when it starts, so that a fetch size the transport cannot carry is a configuration error, not a stall.
     */
    default int maxMessageLength()
    {
        return Integer.MAX_VALUE;
    }

    /** Receives requests with their sender. */
    @FunctionalInterface
    interface RequestHandler
    {
        /**
         * @param fromHost  the host that sent the request.
         * @param msgTypeId the message type.
         * @param buffer    holds the message (valid during the call only).
         * @param index     where it starts.
         * @param length    its length.
         */
        void onRequest(int fromHost, int msgTypeId, MutableDirectBuffer buffer, int index, int length);
    }

    /** Bytes a fetch response needs beyond {@code replica.fetch.max.bytes}: headers, and the partial batch rule. */
    int FETCH_RESPONSE_OVERHEAD = 2048;
}
