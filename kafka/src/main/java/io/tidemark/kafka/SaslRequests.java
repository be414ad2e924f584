package io.tidemark.kafka;

import org.apache.kafka.common.message.SaslAuthenticateRequestData;
import org.apache.kafka.common.message.SaslAuthenticateResponseData;
import org.apache.kafka.common.message.SaslHandshakeRequestData;
import org.apache.kafka.common.message.SaslHandshakeResponseData;
import org.apache.kafka.common.protocol.ApiKeys;
import org.apache.kafka.common.protocol.Errors;
import org.apache.kafka.common.security.scram.ScramCredentialCallback;
import org.apache.kafka.common.security.scram.internals.ScramMechanism;
import org.apache.kafka.common.security.scram.internals.ScramSaslServer;

import javax.security.auth.callback.Callback;
import javax.security.auth.callback.NameCallback;
import javax.security.auth.callback.UnsupportedCallbackException;
import javax.security.sasl.SaslException;
import javax.security.sasl.SaslServer;
import java.nio.charset.StandardCharsets;
import java.security.NoSuchAlgorithmException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * SASL authentication of a connection, as Kafka clients run it (KIP-43, KIP-152): ApiVersions, then SaslHandshake
 * naming a mechanism, then SaslAuthenticate requests carrying the mechanism's tokens. PLAIN (RFC 4616) is checked
 * here against {@link SaslUsers} in constant time; SCRAM-SHA-256 (RFC 5802, 7677) runs kafka-clients'
 * {@link ScramSaslServer} with the users' SCRAM credentials. Until a connection has authenticated, no request other
 * than ApiVersions, SaslHandshake and SaslAuthenticate is served (another closes it). A failed authentication is
 * answered SASL_AUTHENTICATION_FAILED (the client raises SaslAuthenticationException), then the connection closes,
 * counted and logged at most once per interval. Sessions do not expire (the answer's session lifetime is 0), so
 * clients never re-authenticate (KIP-368 is not served: a second SaslHandshake on an authenticated connection is
 * refused as ILLEGAL_SASL_STATE and closes it).
 * <p>
 * On the listener's agent thread.
 */
final class SaslRequests
{
    /** Longest user name logged (names come from the client). */
    private static final int MAX_LOGGED_NAME = 64;

    /** Where one connection is in its authentication. */
    static final class State
    {
        private String mechanism;
        private SaslServer scram;
        private boolean authenticated;
        private String user;

        boolean authenticated()
        {
            return authenticated;
        }

        /** @return the authenticated user, or null. */
        String user()
        {
            return authenticated ? user : null;
        }
    }

    private final KafkaListener listener;
    private final SaslUsers users;
    private final List<String> mechanisms;

    SaslRequests(final KafkaListener listener, final SaslUsers users, final List<String> mechanisms)
    {
        this.listener = listener;
        this.users = users;
        this.mechanisms = mechanisms;
    }

    /** @return a new connection's state. */
    State newState()
    {
        return new State();
    }

    /** @return whether a connection in this state may send a request of this API now. */
    static boolean permits(final State state, final ApiKeys api)
    {
        if (null == state)
        {
            return api != ApiKeys.SASL_HANDSHAKE && api != ApiKeys.SASL_AUTHENTICATE;
        }
        if (api == ApiKeys.SASL_HANDSHAKE || api == ApiKeys.SASL_AUTHENTICATE)
        {
            return true; // an authenticated connection's second handshake is refused by the handler, with a reason
        }
        return state.authenticated || api == ApiKeys.API_VERSIONS;
    }

    void handshake(final InFlight request, final SaslHandshakeRequestData data)
    {
        final State state = request.connection.sasl;
        final SaslHandshakeResponseData response = new SaslHandshakeResponseData().setMechanisms(mechanisms);
        if (null != state.mechanism)
        {
            fail(request, response.setErrorCode(Errors.ILLEGAL_SASL_STATE.code()), "a second SaslHandshake (" +
                "re-authentication is not served)");
            return;
        }
        final String mechanism = data.mechanism();
        if (!mechanisms.contains(mechanism))
        {
            fail(request, response.setErrorCode(Errors.UNSUPPORTED_SASL_MECHANISM.code()), "mechanism '" +
                printable(mechanism) + "' is not enabled (" + KafkaContext.SASL_ENABLED_MECHANISMS + "=" +
                String.join(",", mechanisms) + ")");
            return;
        }
        if (mechanism.equals("SCRAM-SHA-256"))
        {
            try
            {
                state.scram = new ScramSaslServer(ScramMechanism.SCRAM_SHA_256, Map.of(), (callbacks) ->
                {
                    String name = null;
                    for (final Callback callback : callbacks)
                    {
                        if (callback instanceof NameCallback named)
                        {
                            name = named.getDefaultName();
                        }
                        else if (callback instanceof ScramCredentialCallback credential && null != name)
                        {
                            credential.scramCredential(users.scram(name));
                        }
                        else
                        {
                            throw new UnsupportedCallbackException(callback);
                        }
                    }
                });
            }
            catch (final NoSuchAlgorithmException ex)
            {
                throw new IllegalStateException("the JDK has no SHA-256", ex);
            }
        }
        state.mechanism = mechanism;
        request.respond(response.setErrorCode(Errors.NONE.code()));
    }

    void authenticate(final InFlight request, final SaslAuthenticateRequestData data)
    {
        final State state = request.connection.sasl;
        final SaslAuthenticateResponseData response = new SaslAuthenticateResponseData()
            .setAuthBytes(new byte[0]).setSessionLifetimeMs(0);
        if (null == state.mechanism || state.authenticated)
        {
            fail(request, response.setErrorCode(Errors.ILLEGAL_SASL_STATE.code()).setErrorMessage(
                "SaslAuthenticate " + (state.authenticated ? "after authentication" : "before SaslHandshake")),
                "SaslAuthenticate out of order");
            return;
        }
        final byte[] token = null == data.authBytes() ? new byte[0] : data.authBytes();
        if (state.mechanism.equals("PLAIN"))
        {
            plain(request, state, token, response);
            return;
        }
        try
        {
            final byte[] challenge = state.scram.evaluateResponse(token);
            if (state.scram.isComplete())
            {
                state.authenticated = true;
                state.user = state.scram.getAuthorizationID();
                state.scram.dispose();
                state.scram = null;
            }
            request.respond(response.setErrorCode(Errors.NONE.code()).setAuthBytes(challenge));
        }
        catch (final SaslException | RuntimeException ex)
        {
            fail(request, response.setErrorCode(Errors.SASL_AUTHENTICATION_FAILED.code()).setErrorMessage(
                "Authentication failed during authentication due to invalid credentials with SASL mechanism " +
                "SCRAM-SHA-256"), "SASL/SCRAM-SHA-256 failed (" + ex.getClass().getSimpleName() + ")");
        }
    }

    /** RFC 4616: {@code [authzid] NUL authcid NUL passwd}, UTF-8. */
    private void plain(final InFlight request, final State state, final byte[] token,
        final SaslAuthenticateResponseData response)
    {
        final int first = indexOf(token, 0);
        final int second = first < 0 ? -1 : indexOf(token, first + 1);
        final String failure = "Authentication failed: Invalid username or password";
        if (second < 0 || indexOf(token, second + 1) >= 0)
        {
            Arrays.fill(token, (byte)0);
            fail(request, response.setErrorCode(Errors.SASL_AUTHENTICATION_FAILED.code()).setErrorMessage(failure),
                "malformed SASL/PLAIN token");
            return;
        }
        final String authorizationId = new String(token, 0, first, StandardCharsets.UTF_8);
        final String user = new String(token, first + 1, second - first - 1, StandardCharsets.UTF_8);
        final byte[] password = Arrays.copyOfRange(token, second + 1, token.length);
        Arrays.fill(token, (byte)0);
        final boolean ok = users.checkPlain(user, password);
        Arrays.fill(password, (byte)0);
        if (!ok)
        {
            fail(request, response.setErrorCode(Errors.SASL_AUTHENTICATION_FAILED.code()).setErrorMessage(failure),
                "SASL/PLAIN failed for user '" + printable(user) + "'");
            return;
        }
        if (!authorizationId.isEmpty() && !authorizationId.equals(user))
        {
            fail(request, response.setErrorCode(Errors.SASL_AUTHENTICATION_FAILED.code()).setErrorMessage(
                "Authentication failed: an authorization id other than the user name is not served"),
                "SASL/PLAIN user '" + printable(user) + "' asked to act as another");
            return;
        }
        state.authenticated = true;
        state.user = user;
        request.respond(response.setErrorCode(Errors.NONE.code()));
    }

    private void fail(final InFlight request, final org.apache.kafka.common.protocol.ApiMessage response,
        final String why)
    {
        request.respondAndClose(response);
        listener.authenticationFailed(request.connection, why);
    }

    private static int indexOf(final byte[] bytes, final int from)
    {
        for (int i = from; i < bytes.length; i++)
        {
            if (bytes[i] == 0)
            {
                return i;
            }
        }
        return -1;
    }

    /** A client's string made safe for one log line. */
    static String printable(final String text)
    {
        if (null == text)
        {
            return "null";
        }
        final StringBuilder out = new StringBuilder();
        for (int i = 0; i < text.length() && out.length() < MAX_LOGGED_NAME; i++)
        {
            final char c = text.charAt(i);
            out.append(Character.isISOControl(c) ? '?' : c);
        }
        return text.length() > MAX_LOGGED_NAME ? out + "..." : out.toString();
    }
}
