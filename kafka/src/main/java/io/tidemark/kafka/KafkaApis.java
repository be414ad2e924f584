package io.tidemark.kafka;

import org.apache.kafka.common.errors.UnsupportedVersionException;
import org.apache.kafka.common.message.ApiVersionsResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.ByteBufferAccessor;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.requests.AbstractRequest;
import org.apache.kafka.common.requests.ApiVersionsRequest;
import org.apache.kafka.common.requests.CreateTopicsRequest;
import org.apache.kafka.common.requests.DeleteTopicsRequest;
import org.apache.kafka.common.requests.DescribeConfigsRequest;
import org.apache.kafka.common.requests.DescribeGroupsRequest;
import org.apache.kafka.common.requests.FetchRequest;
import org.apache.kafka.common.requests.FindCoordinatorRequest;
import org.apache.kafka.common.requests.HeartbeatRequest;
import org.apache.kafka.common.requests.InitProducerIdRequest;
import org.apache.kafka.common.requests.JoinGroupRequest;
import org.apache.kafka.common.requests.LeaveGroupRequest;
import org.apache.kafka.common.requests.ListGroupsRequest;
import org.apache.kafka.common.requests.ListOffsetsRequest;
import org.apache.kafka.common.requests.MetadataRequest;
import org.apache.kafka.common.requests.OffsetCommitRequest;
import org.apache.kafka.common.requests.OffsetFetchRequest;
import org.apache.kafka.common.requests.OffsetsForLeaderEpochRequest;
import org.apache.kafka.common.requests.ProduceRequest;
import org.apache.kafka.common.requests.RequestHeader;
import org.apache.kafka.common.requests.SaslAuthenticateRequest;
import org.apache.kafka.common.requests.SaslHandshakeRequest;
import org.apache.kafka.common.requests.SyncGroupRequest;

import java.nio.ByteBuffer;
import java.util.EnumMap;
import java.util.Map;

/**
 * Dispatches a connection's requests to their handlers and answers ApiVersions. The APIs served and their version
 * ranges are {@link #SUPPORTED}: a request of another API that kafka-clients can parse is answered with
 * UNSUPPORTED_VERSION in its own response format, so clients fail with a clear error; an unknown API key or a
 * request that does not parse closes the connection as a bad frame.
 * <p>
 * On the listener's agent thread.
 */
final class KafkaApis
{
    /** The APIs served, with the versions served: kafka-clients' range, capped where a newer version adds
     * semantics not served. */
    static final Map<ApiKeys, short[]> SUPPORTED = new EnumMap<>(ApiKeys.class);
    /** The SASL APIs, served by listeners that use SASL (SaslHandshake v1 and SaslAuthenticate: KIP-152). */
    static final Map<ApiKeys, short[]> SASL = new EnumMap<>(ApiKeys.class);

    static
    {
        serve(ApiKeys.API_VERSIONS);
        serve(ApiKeys.METADATA);
        serve(ApiKeys.PRODUCE);
        serve(ApiKeys.FETCH);
        serve(ApiKeys.LIST_OFFSETS);
        serve(ApiKeys.OFFSET_FOR_LEADER_EPOCH);
        serve(ApiKeys.INIT_PRODUCER_ID);
        serve(ApiKeys.FIND_COORDINATOR);
        serve(ApiKeys.JOIN_GROUP);
        serve(ApiKeys.SYNC_GROUP);
        serve(ApiKeys.HEARTBEAT);
        serve(ApiKeys.LEAVE_GROUP);
        serve(ApiKeys.OFFSET_COMMIT);
        serve(ApiKeys.OFFSET_FETCH);
        serve(ApiKeys.DESCRIBE_GROUPS);
        serve(ApiKeys.LIST_GROUPS);
        serve(ApiKeys.CREATE_TOPICS);
        serve(ApiKeys.DELETE_TOPICS);
        serve(ApiKeys.DESCRIBE_CONFIGS);
        SASL.put(ApiKeys.SASL_HANDSHAKE, new short[] {1, ApiKeys.SASL_HANDSHAKE.latestVersion(false)});
        SASL.put(ApiKeys.SASL_AUTHENTICATE, new short[] {ApiKeys.SASL_AUTHENTICATE.oldestVersion(),
            ApiKeys.SASL_AUTHENTICATE.latestVersion(false)});
    }

    private static void serve(final ApiKeys api)
    {
        SUPPORTED.put(api, new short[] {api.oldestVersion(), api.latestVersion(false)});
    }

    private final KafkaListener listener;
    private final ProduceRequests produce;
    private final FetchRequests fetch;
    private final MetadataRequests metadata;
    private final AdminRequests admin;
    private final GroupRequests groups;
    private final SaslRequests sasl;

    KafkaApis(final KafkaListener listener, final GroupCoordinator coordinator, final TopicAdmin topicAdmin,
        final SaslUsers users)
    {
        this.sasl = null == users ? null : new SaslRequests(listener, users,
            listener.context().saslEnabledMechanisms());
        this.listener = listener;
        this.produce = new ProduceRequests(listener);
        this.fetch = new FetchRequests(listener);
        this.metadata = new MetadataRequests(listener);
        this.admin = new AdminRequests(listener, topicAdmin);
        this.groups = new GroupRequests(listener, coordinator);
    }

    ProduceRequests produce()
    {
        return produce;
    }

    FetchRequests fetch()
    {
        return fetch;
    }

    GroupRequests groups()
    {
        return groups;
    }

    /** @return SASL authentication, or null when the listener does not use SASL. */
    SaslRequests sasl()
    {
        return sasl;
    }

    /**
     * Work on one request frame.
     *
     * @return false when the connection was closed.
     */
    boolean handle(final KafkaConnection connection, final ByteBuffer frame)
    {
        final RequestHeader header;
        try
        {
            header = RequestHeader.parse(frame);
        }
        catch (final RuntimeException ex)
        {
            listener.badFrame(connection, "unreadable request header (" + ex.getClass().getSimpleName() + ": " +
                ex.getMessage() + ")");
            return false;
        }
        final ApiKeys api = header.apiKey();
        final short version = header.apiVersion();
        if (null != sasl && !SaslRequests.permits(connection.sasl, api))
        {
            listener.authenticationFailed(connection, api + " request before authentication");
            listener.close(connection);
            return false;
        }
        final InFlight request = new InFlight(connection, header, frame.limit());
        if (api == ApiKeys.API_VERSIONS && !api.isVersionSupported(version))
        {
            // a newer client: answer in version 0 with the versions served, and it retries with one of them
            connection.inFlight.addLast(request);
            request.respond(apiVersions(Errors.UNSUPPORTED_VERSION), (short)0, (short)0);
            return true;
        }
        final AbstractRequest body;
        try
        {
            body = AbstractRequest.parseRequest(api, version, new ByteBufferAccessor(frame)).request;
        }
        catch (final RuntimeException ex)
        {
            listener.badFrame(connection, "unparseable " + api + " v" + version + " request (" +
                ex.getClass().getSimpleName() + ": " + ex.getMessage() + ")");
            return false;
        }
        connection.inFlight.addLast(request);
        final short[] range = null != sasl && (api == ApiKeys.SASL_HANDSHAKE || api == ApiKeys.SASL_AUTHENTICATE) ?
            SASL.get(api) : SUPPORTED.get(api);
        if (null == range || version < range[0] || version > range[1])
        {
            request.respond(body.getErrorResponse(0, new UnsupportedVersionException(api + " v" + version +
                " is not served by Tidemark (see ApiVersions)")).data());
            return true;
        }
        try
        {
            dispatch(request, body);
        }
        catch (final RuntimeException ex)
        {
            listener.badFrame(connection, "bad " + api + " v" + version + " request (" +
                ex.getClass().getSimpleName() + ": " + ex.getMessage() + ")");
            return false;
        }
        return !connection.closed;
    }

    private void dispatch(final InFlight request, final AbstractRequest body)
    {
        switch (body.apiKey())
        {
            case SASL_HANDSHAKE -> sasl.handshake(request, ((SaslHandshakeRequest)body).data());
            case SASL_AUTHENTICATE -> sasl.authenticate(request, ((SaslAuthenticateRequest)body).data());
            case API_VERSIONS -> request.respond(apiVersions(
                ((ApiVersionsRequest)body).hasUnsupportedRequestVersion() ? Errors.UNSUPPORTED_VERSION : Errors.NONE));
            case METADATA -> metadata.metadata(request, ((MetadataRequest)body).data());
            case PRODUCE -> produce.produce(request, ((ProduceRequest)body).data());
            case FETCH -> fetch.fetch(request, ((FetchRequest)body).data());
            case LIST_OFFSETS -> metadata.listOffsets(request, ((ListOffsetsRequest)body).data());
            case OFFSET_FOR_LEADER_EPOCH -> metadata.offsetForLeaderEpoch(request,
                ((OffsetsForLeaderEpochRequest)body).data());
            case FIND_COORDINATOR -> metadata.findCoordinator(request, ((FindCoordinatorRequest)body).data());
            case DESCRIBE_CONFIGS -> metadata.describeConfigs(request, ((DescribeConfigsRequest)body).data());
            case INIT_PRODUCER_ID -> admin.initProducerId(request, ((InitProducerIdRequest)body).data());
            case CREATE_TOPICS -> admin.createTopics(request, ((CreateTopicsRequest)body).data());
            case DELETE_TOPICS -> admin.deleteTopics(request, ((DeleteTopicsRequest)body).data());
            case JOIN_GROUP -> groups.join(request, ((JoinGroupRequest)body).data());
            case SYNC_GROUP -> groups.sync(request, ((SyncGroupRequest)body).data());
            case HEARTBEAT -> groups.heartbeat(request, ((HeartbeatRequest)body).data());
            case LEAVE_GROUP -> groups.leave(request, ((LeaveGroupRequest)body).data());
            case OFFSET_COMMIT -> groups.commit(request, ((OffsetCommitRequest)body).data());
            case OFFSET_FETCH -> groups.fetchOffsets(request, (OffsetFetchRequest)body);
            case DESCRIBE_GROUPS -> groups.describe(request, ((DescribeGroupsRequest)body).data());
            case LIST_GROUPS -> groups.list(request, ((ListGroupsRequest)body).data());
            default -> request.respond(body.getErrorResponse(0, new UnsupportedVersionException(
                body.apiKey() + " is not served")).data());
        }
    }

    /** @return the APIs served, with SaslHandshake and SaslAuthenticate when the listener uses SASL. */
    ApiVersionsResponseData apiVersions(final Errors error)
    {
        final ApiVersionsResponseData.ApiVersionCollection keys = new ApiVersionsResponseData.ApiVersionCollection();
        for (final Map.Entry<ApiKeys, short[]> e : SUPPORTED.entrySet())
        {
            keys.add(new ApiVersionsResponseData.ApiVersion().setApiKey(e.getKey().id)
                .setMinVersion(e.getValue()[0]).setMaxVersion(e.getValue()[1]));
        }
        if (null != sasl)
        {
            for (final Map.Entry<ApiKeys, short[]> e : SASL.entrySet())
            {
                keys.add(new ApiVersionsResponseData.ApiVersion().setApiKey(e.getKey().id)
                    .setMinVersion(e.getValue()[0]).setMaxVersion(e.getValue()[1]));
            }
        }
        return new ApiVersionsResponseData().setErrorCode(error.code()).setApiKeys(keys).setThrottleTimeMs(0);
    }

    void onClose(final KafkaConnection connection)
    {
        produce.onClose(connection);
        fetch.onClose(connection);
    }

    void close()
    {
        fetch.close();
    }
}
